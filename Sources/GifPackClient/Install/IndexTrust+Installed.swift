import Foundation
import GifPackFormat
import GifPackIndexReader

/// The trust step's part that knows the install manifest (``InstalledIndex``), which the index
/// reader (GifPackIndexReader) does not.
extension IndexTrust {
    /// A `304` for the index a generation was installed from: that index was verified then; it
    /// still counts only until its `expires` (a frozen mirror answers `304` forever).
    func acceptUnchanged(_ record: InstalledIndex, location: String) throws(PackClientError) {
        guard let expires = record.expires, let expiry = IndexTimestamp.parse(expires) else {
            throw Self.refuse(.unsigned, location, "the installed index has no expires field")
        }
        let now = self.now ?? Date()
        guard expiry > now else {
            throw Self.refuse(
                .expired, location, "it is unchanged (304 Not Modified) and expired at \(expires) (now \(IndexTimestamp.format(now))); the publisher has not re-signed it — a stale or frozen mirror?")
        }
    }
}
