import Foundation

/// Steps of ``Publisher/publish(_:to:say:)`` that have names of their own.
extension Publisher {
    /// Uploads and confirms every pack (and posters pack) the index names that the target lacks.
    func uploadPacks(_ source: PublishSource, to target: any PublishTarget, report: inout PublishReport,
                     say: (String) -> Void) async throws(PublishError) {
        var toUpload: [IndexedPackFile] = []
        for pack in source.index.packFiles {
            if let stored = try await target.stat(pack.file), stored.bytes == pack.bytes, stored.sha256 == pack.sha256 {
                report.alreadyThere.append(pack.file)
                say("already there: \(pack.file)")
            } else {
                toUpload.append(pack)
            }
        }
        for pack in toUpload {
            say("\(options.dryRun ? "would upload" : "upload"): \(pack.file) (\(pack.bytes) bytes)")
            report.uploaded.append(pack.file)
            report.bytesUploaded += pack.bytes
            guard !options.dryRun else { continue }
            try await target.putPack(pack.file, from: "\(source.directory)/\(pack.file)", bytes: pack.bytes, sha256: pack.sha256)
            if report.uploaded.count == 1 { PublishCrashPoint.reach(.afterFirstPack) }
        }
    }

    /// The compressed copy `index.json.zst`, which clients fetch first: made to decode to the index
    /// live now (so a copy a killed publish left stale is repaired), never ahead of it.
    func publishCompressedIndex(_ source: PublishSource, to target: any PublishTarget, indexUnchanged: Bool,
                                report: inout PublishReport, say: (String) -> Void) async throws(PublishError) {
        if options.dryRun {
            let storedCopy = try await target.stat(CompressedIndex.key)
            if !indexUnchanged || storedCopy?.sha256 != SHA256Hex.of(source.compressedIndex) {
                say("would write: \(CompressedIndex.key)")
                report.compressedIndexWritten = true
            }
        } else {
            report.compressedIndexWritten = try await syncCompressedIndex(source, target: target, say: say)
            PublishCrashPoint.reach(.afterCompressedIndex)
        }
    }

    /// `index.json.minisig` beside the index, for stock minisign and clients of older versions: it
    /// follows the index (and may lag it); it is written only while the live index is this one.
    func publishBesideSignature(_ source: PublishSource, to target: any PublishTarget, report: inout PublishReport,
                                say: (String) -> Void) async throws(PublishError) {
        let besideKey = "index.json.minisig"
        if let signature = source.signature {
            if try await target.stat(besideKey)?.sha256 != SHA256Hex.of(signature) {
                if options.dryRun {
                    say("would write: \(besideKey)")
                    report.signatureWritten = true
                } else if try await target.readLiveIndex()?.bytes == source.indexBytes {
                    say("write: \(besideKey)")
                    report.signatureWritten = true
                    try await target.putMetadataFile(besideKey, bytes: signature, contentType: PublishSource.signatureContentType,
                                                     maxAge: options.indexMaxAge, replacing: nil, conditional: false)
                } else {
                    say("\(besideKey): left alone (index.json was replaced by another publisher meanwhile)")
                }
            }
        } else if try await target.stat(besideKey) != nil {
            say("\(options.dryRun ? "would delete" : "delete"): \(besideKey) (the new index is not signed)")
            if !options.dryRun { try await target.delete(besideKey) }
        }
    }

    /// Retention, once the new index is live: never a file (or signature) of the index that was
    /// live, the new one, the one live now or the one the live `index.json.zst` holds; nothing at all
    /// when one of them cannot be read (`blind`).
    func retain(_ source: PublishSource, at target: any PublishTarget, live: LiveIndex?, liveIndex: PackIndex?, indexSHA256: String,
                blind: Bool, report: inout PublishReport, say: (String) -> Void) async throws(PublishError) {
        var retentionBlind = blind
        var protected = Set(source.index.packFiles.map(\.file))
        protected.formUnion(liveIndex?.packFiles.map(\.file) ?? [])
        var protectedSignatures: Set<String> = [SignatureLocation.key(forIndexSHA256: indexSHA256)]
        if let live { protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(live.bytes))) }
        if !options.dryRun, let current = try await target.readLiveIndex() {
            protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(current.bytes)))
            if case .index(let index) = Self.readIndex(current.bytes) {
                protected.formUnion(index.packFiles.map(\.file))
            } else {
                retentionBlind = true
            }
        }
        // The index inside the live index.json.zst too: whatever a client is served, its packs and signature stay.
        if !options.dryRun, let copy = try await target.read(CompressedIndex.key, maxBytes: PublishFileReader.maxIndexBytes) {
            if let plain = try? CompressedIndex.decode(copy, maxBytes: PublishFileReader.maxIndexBytes),
               case .index(let index) = Self.readIndex(plain) {
                protectedSignatures.insert(SignatureLocation.key(forIndexSHA256: SHA256Hex.of(plain)))
                protected.formUnion(index.packFiles.map(\.file))
            } else {
                retentionBlind = true
            }
        }
        if retentionBlind {
            say("retention: skipped (a live index.json or index.json.zst could not be read, so what it names is unknown); nothing was deleted")
        } else {
            let stored = try await target.listKeys(under: "packs/")
            let signatures = try await target.listKeys(under: SignatureLocation.directory + "/")
            let deletions = Retention.deletions(stored: stored, protected: protected, keepVersions: options.keepVersions)
                + Retention.signatureDeletions(stored: signatures, protected: protectedSignatures)
            for key in deletions {
                say("\(options.dryRun ? "would delete" : "delete"): \(key)")
                report.deleted.append(key)
                if !options.dryRun { try await target.delete(key) }
            }
        }
    }

    /// Makes the target's `index.json.zst` decode to its live `index.json`: this publish's copy when
    /// the live index is this one, else the live index compressed here (a rival publisher won, and
    /// its copy may not be up yet); nothing when there is no live index or it is not one this
    /// gifpack reads. Checked again after each write, as the live index may change meanwhile.
    /// Returns true when it wrote.
    func syncCompressedIndex(_ source: PublishSource, target: any PublishTarget, say: (String) -> Void) async throws(PublishError) -> Bool {
        var written = false
        for _ in 0..<3 {
            guard let live = try await target.readLiveIndex() else { return written }
            let ours = live.bytes == source.indexBytes
            let wanted: [UInt8]
            if ours {
                wanted = source.compressedIndex
            } else {
                guard case .index = Self.readIndex(live.bytes) else {
                    say("\(CompressedIndex.key): left alone (the live index.json is not one this gifpack reads)")
                    return written
                }
                do {
                    wanted = try await BlockingWork.run("gifpack.publish-compress") { () throws(IndexCompression.Failure) in
                        try IndexCompression.compress(live.bytes)
                    }
                } catch { throw .failed("cannot compress the live index.json: \(error)") }
            }
            if try await target.stat(CompressedIndex.key)?.sha256 == SHA256Hex.of(wanted) { return written }
            say("write: \(CompressedIndex.key)" + (ours ? "" : " (of the index live now: another publisher replaced index.json meanwhile)"))
            try await target.putMetadataFile(CompressedIndex.key, bytes: wanted, contentType: PublishHeaders.packContentType,
                                             maxAge: options.indexMaxAge, replacing: nil, conditional: false)
            written = true
        }
        throw .failed("\(target.displayName): index.json kept changing while \(CompressedIndex.key) was written; run the publish again to bring it in line")
    }
}
