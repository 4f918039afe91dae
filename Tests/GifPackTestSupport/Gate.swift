import Foundation

/// A gate that jobs on threads of their own (a worker's, a blocking pool's: never a cooperative
/// one) wait at until the test opens it.
final class Gate: @unchecked Sendable {  // @unchecked: `isOpen` is read and written under `condition`.
    private let condition = NSCondition()
    private var isOpen = false

    init() {}

    func wait() {
        condition.lock()
        while !isOpen { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }
}
