import Foundation
import Testing
@testable import GifPack
@testable import GifPackCLI
@testable import GifPackTestSupport

/// The pure pieces behind progress, logs and the CI summary.
@Suite("Operations: progress lines, log lines, summary", .timeLimit(.minutes(3)))
struct OperationsFormattingTests {
    private let busy = ProgressSnapshot(
        stage: .fetch, total: 1500, done: 123, toRequest: 1500, requestedDone: 123,
        bytesDownloaded: 2_140_000, retries: 3, failures: 1, fetchSeconds: 10)

    @Test(.computes, arguments: [1, 2, 10, 20, 40, 60, 80, 100, 200])
    func aLiveLineNeverReachesTheLastColumn(width: Int) {
        let line = ProgressLine.live(busy, width: width, color: false)
        #expect(line.count <= max(1, width - 1), "\(line.count) columns at width \(width): \(line)")
        #expect(!line.contains("\r") && !line.contains("\n") && !line.contains("\u{1B}"))
        if width >= 20 { #expect(line.contains("123/1500 (8%)"), "the count stays longest") }
    }

    @Test(.computes) func aWideLineShowsEverythingAndColourDoesNotCountTowardsTheWidth() {
        let plain = ProgressLine.live(busy, width: 120, color: false)
        for part in ["fetch", "[##", "123/1500 (8%)", "2.1 MB", "214 kB/s", "ETA 1m52s", "retries 3", "failed 1"] {
            #expect(plain.contains(part), "\(part) missing from \(plain)")
        }
        let colored = ProgressLine.live(busy, width: 120, color: true)
        #expect(colored.contains("\u{1B}[31mfailed 1\u{1B}[0m"))
        #expect(colored.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression) == plain)
        // Narrower: the bar and the least useful parts go first, failures and the ETA stay.
        let narrow = ProgressLine.live(busy, width: 40, color: false)
        #expect(narrow.contains("failed 1") && narrow.contains("ETA") && !narrow.contains("retries") && !narrow.contains("["))
    }

    @Test(.computes) func stagesOtherThanTheFetchAreNamed() {
        let packing = ProgressSnapshot(stage: .pack, total: 10, done: 10, packsDone: 2, stageSeconds: 1.5)
        #expect(ProgressLine.live(packing, width: 80, color: true) == "pack: writing packs, 2 done (1.5s)")
        #expect(ProgressLine.plain(ProgressSnapshot(stage: .catalog)) == "catalog: reading the exercise list (0.0s)")
        #expect(ProgressLine.plain(busy) == "fetch 123/1500 (8%), 2.1 MB at 214 kB/s, ETA 1m52s, 3 retries, 1 failed")
    }

    /// With several resolutions, the progress line and the log name the one being fetched.
    @Test(.computes) func theResolutionBeingFetchedIsNamed() throws {
        let tracker = ProgressTracker()
        tracker.observe(.stageStarted(.fetch))
        tracker.observe(.renditionStarted(resolution: 360, position: 2, count: 2))
        tracker.observe(.fetchStarted(total: 1500))
        var snapshot = tracker.snapshot()
        #expect(snapshot.rendition == "360 px (2/2)")
        snapshot.done = 123
        #expect(ProgressLine.plain(snapshot).hasPrefix("fetch 360 px (2/2) 123/1500 (8%)"))
        #expect(ProgressLine.live(snapshot, width: 120, color: false).hasPrefix("fetch 360 px (2/2)  ["))
        let entry = try #require(BuildEventLog.entry(for: .renditionStarted(resolution: 360, position: 2, count: 2)))
        #expect(entry.message == "fetch: 360 px, resolution 2 of 2")
    }

    @Test(.computes) func theETAUsesThePaceOfRequestedGIFsOnly() {
        // 100 fresh GIFs finished at once; 20 requested ones took 10 s: 80 to go take 40 s.
        let snapshot = ProgressSnapshot(stage: .fetch, total: 200, done: 120, toRequest: 100, requestedDone: 20, fetchSeconds: 10)
        #expect(snapshot.etaSeconds == 40)
        #expect(snapshot.percent == 60)
        #expect(ProgressSnapshot(stage: .fetch, total: 10, done: 0, fetchSeconds: 3).etaSeconds == nil)
    }

    @Test(.computes) func theTrackerFoldsEventsIntoCounters() {
        let tracker = ProgressTracker()
        let start = ContinuousClock.now
        func attempt(_ id: String, _ outcome: AttemptEvent.Outcome, bytes: Int64 = 0) -> BuildEvent {
            .attempt(
                AttemptEvent(
                    exerciseID: id, url: "http://x/\(id)", attempt: 1, status: 200, elapsed: .milliseconds(5),
                    outcome: outcome, reason: nil, bytes: bytes, retryIn: nil))
        }
        func stored(_ id: String, _ origin: GIFOrigin) -> BuildEvent {
            .gifFinished(
                exerciseID: id,
                result: .stored(
                    StoredGIF(
                        exerciseID: id, sha256: "ab", bytes: 10,
                        info: GIFInfo(width: 1, height: 1, frameCount: 1, durationMilliseconds: 0, loopCount: 0, version: "89a"),
                        newlyStored: true, resolutionMismatch: false, origin: origin)))
        }
        func rejected(_ id: String, _ reason: RejectionReason) -> BuildEvent {
            .gifFinished(exerciseID: id, result: .rejected(FetchRejection(exerciseID: id, url: "u", reason: reason, detail: "d", status: nil)))
        }
        tracker.observe(.stageStarted(.fetch), at: start)
        tracker.observe(.fetchStarted(total: 5), at: start)
        // Fresh and known-missing exercises finish before the plan says how many need a request.
        for event in [stored("a", .fresh), rejected("b", .knownMissing)] { tracker.observe(event, at: start) }
        tracker.observe(.fetchPlanned(total: 5, toRequest: 3), at: start)
        #expect(tracker.snapshot(at: start).done == 2 && tracker.snapshot(at: start).toRequest == 3)
        for event in [
            attempt("c", .retry), attempt("c", .downloaded, bytes: 1000),
            stored("c", .downloaded), attempt("d", .failed), rejected("d", .httpStatus(500))
        ] {
            tracker.observe(event, at: start + .seconds(1))
        }
        tracker.observe(.stageStarted(.pack), at: start + .seconds(2))
        let snapshot = tracker.snapshot(at: start + .seconds(9))
        #expect(snapshot.stage == .pack)
        #expect(snapshot.total == 5 && snapshot.done == 4)
        #expect(snapshot.requestedDone == 2 && snapshot.failures == 1 && snapshot.retries == 1)
        #expect(snapshot.bytesDownloaded == 1000)
        #expect(snapshot.fetchSeconds == 2, "the fetch clock stops when the next stage starts")
        #expect(snapshot.stageSeconds == 7)

        // A second fetch (a damaged GIF's exercises downloaded again) counts its own exercises from
        // zero, and the count never passes its total.
        tracker.observe(.fetchStarted(total: 2), at: start + .seconds(10))
        tracker.observe(.fetchPlanned(total: 2, toRequest: 2), at: start + .seconds(10))
        for event in [stored("a", .downloaded), stored("c", .downloaded), stored("c", .downloaded)] {
            tracker.observe(event, at: start + .seconds(11))
        }
        let again = tracker.snapshot(at: start + .seconds(12))
        #expect(again.total == 2 && again.done == 2 && again.requestedDone == 2)
    }

    @Test(.computes) func plainProgressIsDueEveryIntervalAndEveryTenthOfTheWay() {
        var schedule = PlainProgressSchedule(interval: 10)
        var due: [Bool] = []
        for (done, seconds) in [(0, 0.0), (5, 1), (10, 2), (15, 3), (15, 12.5), (19, 13), (45, 14), (49, 15)] {
            due.append(schedule.isDue(ProgressSnapshot(stage: .fetch, total: 100, done: done), at: seconds))
        }
        // The first call starts the clock; 10% crossed; 10 s passed; several tenths at once give one line.
        #expect(due == [false, false, true, false, true, false, true, false])
        let packing = schedule.isDue(ProgressSnapshot(stage: .pack, total: 100, done: 100), at: 100)
        #expect(!packing, "only while fetching")
    }

    @Test(.computes) func jsonLogLinesAreOneObjectWithTypedFieldsAndNoSecret() throws {
        let key = "sk-live-0123456789"
        let redactor = SecretRedactor(secrets: [key, ""])
        let record = LogRecord(
            timestamp: Date(timeIntervalSince1970: 1_700_000_000.25), level: .warning, label: "gifpack",
            message: "server said \"no\"\n\u{1B}[31mkey \(key)",
            fields: [
                "exercise_id": .string("0001"), "attempt": .int(2), "duration_ms": .double(12.5),
                "retried": .bool(true), "level": .string("shadowed"), "echo": .string("k=\(key)")
            ])
        let line = record.jsonLine(redactor: redactor)
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1B}"))
        #expect(!line.contains(key))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["timestamp"] as? String == "2023-11-14T22:13:20.250Z")
        #expect(object["level"] as? String == "warning")
        #expect(object["message"] as? String == "server said \"no\"\n\u{1B}[31mkey <redacted>")
        #expect(object["attempt"] as? Int == 2)
        #expect(object["duration_ms"] as? Double == 12.5)
        #expect(object["retried"] as? Bool == true)
        #expect(object["_level"] as? String == "shadowed", "a field never overwrites the record's own keys")
        #expect(object["echo"] as? String == "k=<redacted>")
        #expect(SecretRedactor(secrets: ["k"]).redact("pack") == "pack", "a one-letter test key cannot be told from text")
    }

    @Test(.computes) func theSecretSearchFindsTheKeyAnywhereAndOnlyTheKey() throws {
        let key = "abcab-0123"
        let redactor = SecretRedactor(secrets: [key])
        for text in [key, "x" + key, key + "x", "abcabcab-0123", "ééé\(key)ü", "a\u{0}\(key)"] {
            #expect(redactor.mentionsSecret(text), "\(text)")
            #expect(!redactor.redact(text).contains(key), "\(text)")
        }
        for text in ["", "abcab-012", "bcab-0123", "abcab_0123", "ABCAB-0123", String(repeating: "abcab-012", count: 50)] {
            #expect(!redactor.mentionsSecret(text), "\(text)")
            #expect(redactor.redact(text) == text)
        }
        #expect(!SecretRedactor(secrets: []).mentionsSecret(key))
        // A tree without the key comes back as it is; one with it anywhere (a key, a nested string) is cleaned.
        let clean = JSONValue.object(["a": .array([.string("x"), .integer(1)]), "b": .null])
        #expect(redactor.redact(clean) == clean)
        let echoed = JSONValue.object(["a": .array([.string("k=\(key)")]), key: .bool(true)])
        #expect(redactor.redact(echoed) == .object(["a": .array([.string("k=<redacted>")]), "<redacted>": .bool(true)]))
        #expect(!redactor.mentionsSecret(redactor.redact(echoed)))
        // A report: searched as encoded bytes; one holding the key anywhere is cleaned.
        var report = BuildReport(generator: "g", exitStatus: .success, message: "fine")
        #expect(redactor.redact(report) == report)
        report.stateErrors = ["write failed near \(key)/x"]
        let cleaned = redactor.redact(report)
        #expect(cleaned.stateErrors == ["write failed near <redacted>/x"])
        // A secret the encoder would escape is looked for in the decoded strings.
        let quoted = SecretRedactor(secrets: ["ab\"cd\\ef"])
        report.stateErrors = ["said ab\"cd\\ef"]
        #expect(quoted.redact(report).stateErrors == ["said <redacted>"])
    }

    @Test(.computes) func textLogLinesEscapeControlCharactersAndQuoteValues() {
        let redactor = SecretRedactor(secrets: ["topsecret"])
        let record = LogRecord(
            timestamp: Date(timeIntervalSince1970: 0), level: .info, label: "gifpack", message: "line\none\r",
            fields: [
                "url": .string("http://h/x"), "exercise_id": .string("a b"), "event": .string("attempt"),
                "detail": .string("topsecret\u{1B}"), "status": .int(503)
            ])
        let line = record.textLine(color: false, redactor: redactor)
        #expect(line == #"1970-01-01T00:00:00.000Z info    line\none\r event=attempt exercise_id="a b" status=503 url=http://h/x detail=<redacted>\x1b"#)
        let colored = record.textLine(color: true, redactor: redactor)
        #expect(colored.contains("\u{1B}[36minfo   \u{1B}[0m"))
    }

    @Test(.computes) func buildEventsBecomeLogEntriesWithTheirFields() throws {
        let attempt = AttemptEvent(
            exerciseID: "0042", url: "http://127.0.0.1:1/image?exerciseId=0042", attempt: 2, status: 503,
            elapsed: .milliseconds(1500), outcome: .retry, reason: .httpStatus(503), bytes: 0, retryIn: .milliseconds(250))
        let entry = try #require(BuildEventLog.entry(for: .attempt(attempt)))
        #expect(entry.level == .info)
        #expect(entry.fields["event"] == .string("attempt"))
        #expect(entry.fields["exercise_id"] == .string("0042"))
        #expect(entry.fields["url"] == .string(attempt.url))
        #expect(entry.fields["attempt"] == .int(2))
        #expect(entry.fields["status"] == .int(503))
        #expect(entry.fields["duration_ms"] == .double(1500))
        #expect(entry.fields["outcome"] == .string("retry"))
        #expect(entry.fields["reason"] == .string("http-503"))
        #expect(entry.fields["retry_in_ms"] == .double(250))
        var ok = attempt
        ok.outcome = .downloaded
        #expect(BuildEventLog.entry(for: .attempt(ok))?.level == .debug, "successes only with --verbose")
        #expect(LogSeverity.debug < .info && LogSeverity.error > .warning)

        // The level a logger is asked about before an entry is made is the entry's own.
        let stored = StoredGIF(
            exerciseID: "0042", sha256: "ab", bytes: 10,
            info: GIFInfo(width: 1, height: 1, frameCount: 1, durationMilliseconds: 0, loopCount: 0, version: "89a"),
            newlyStored: false, resolutionMismatch: false, origin: .fresh)
        func rejected(_ reason: RejectionReason) -> GIFFetchResult {
            .rejected(FetchRejection(exerciseID: "0042", url: "u", reason: reason, detail: "d", status: nil))
        }
        let events: [BuildEvent] = [
            .attempt(attempt), .attempt(ok), .gifFinished(exerciseID: "0042", result: .stored(stored)),
            .gifFinished(exerciseID: "0042", result: rejected(.knownMissing)),
            .gifFinished(exerciseID: "0042", result: rejected(.httpStatus(500))),
            .fetchStarted(total: 3), .fetchPlanned(total: 3, toRequest: 1), .catalogFetched(exercises: 3, pages: 1)
        ]
        for event in events {
            #expect(BuildEventLog.level(for: event) == BuildEventLog.entry(for: event)?.level, "\(event)")
        }
        #expect(BuildEventLog.level(for: .gifFinished(exerciseID: "0042", result: .stored(stored))) == .trace)
        #expect(BuildEventLog.level(for: .fetchStarted(total: 3)) == nil)
    }

    @Test(.computes) func theStepSummaryIsAShortMarkdownTable() {
        var report = BuildReport(generator: "gifpack test", exitStatus: .partial, message: "wrote 1 | one")
        report.gifs = .init(
            wanted: 10, valid: 9, downloaded: 7, notModified: 1, skippedFresh: 1, reusedLastGood: 0, newlyStored: 6,
            deduplicated: 1, rejected: 1, rejectedByReason: ["http-404": 1], missing: 1, bytesDownloaded: 70_000)
        report.packs = [
            .init(
                name: "all", version: 2, file: "packs/all-v2.tar.zst", outcome: "published", exercises: 10,
                missing: 1, distinctGIFs: 8, bytes: 50_000, uncompressedBytes: 110_000)
        ]
        report.http.requests = 12
        report.http.retries = 2
        report.http.quotaRemaining = 88
        report.stageSeconds["total"] = 4.2
        report.complete(startedAt: Date(timeIntervalSince1970: 0), finishedAt: Date(timeIntervalSince1970: 4.2))
        let markdown = StepSummary.markdown(report)
        #expect(markdown.hasPrefix("### ⚠️ gifpack build: written with exercises missing (exit 3)\n"))
        #expect(markdown.contains("wrote 1 \\| one"), "a pipe in text cannot break the table")
        #expect(markdown.contains("| downloaded | 7 (1 deduplicated, 70 kB) |"))
        #expect(markdown.contains("| missing | 1 (http-404: 1) |"))
        #expect(markdown.contains("| all | 2 | new version | 10 | 8 | 50 kB | 2.20 |"))
        #expect(markdown.contains("12 requests (2 retries), quota left 88 · 4.2s"))
        #expect(report.bytes == .init(downloaded: 70_000, packed: 50_000, packedUncompressed: 110_000, written: 50_000, compressionRatio: 2.2))
        #expect(report.finishedAt == "1970-01-01T00:00:04.200Z")
    }

    @Test(.computes) func humanUnits() {
        #expect(HumanUnits.bytes(999) == "999 B")
        #expect(HumanUnits.bytes(2_150_000) == "2.1 MB" || HumanUnits.bytes(2_150_000) == "2.2 MB")
        #expect(HumanUnits.bytes(70_221) == "70 kB")
        #expect(HumanUnits.rate(350_000) == "350 kB/s")
        #expect(HumanUnits.duration(4.25) == "4.2s" || HumanUnits.duration(4.25) == "4.3s")
        #expect(HumanUnits.duration(65) == "1m05s")
        #expect(HumanUnits.duration(7380) == "2h03m")
    }
}

@Suite("Operations: log lines never carry terminal controls", .timeLimit(.minutes(3)))
struct LogLineControlTests {
    @Test(.computes) func c1ControlsAndBidiOverridesAreEscapedInTextAndJSONLines() throws {
        let record = LogRecord(
            timestamp: Date(timeIntervalSince1970: 0), level: .info, label: "gifpack",
            message: "id 0001\u{9B}2J", fields: ["name": .string("abc\u{202E}fig.exe")])
        let redactor = SecretRedactor(secrets: [])
        for line in [record.textLine(color: false, redactor: redactor), record.jsonLine(redactor: redactor)] {
            #expect(!line.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x202E }, "\(line)")
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.jsonLine(redactor: redactor).utf8)) as? [String: Any])
        #expect(object["name"] as? String == "abc\u{202E}fig.exe", "JSON escapes keep the value")
    }
}
