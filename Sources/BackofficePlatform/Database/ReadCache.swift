import Foundation
import Synchronization

/// Answers of hot reads kept briefly, so that many readers of one page share one read
/// (`Database.read(_:context:maxAge:)`). An answer is reused while it is younger than the age its
/// reader accepts and no change has committed through this `Database` since the read began: a
/// client sees its own changes at once, and changes committed by other processes show within that
/// age. An answer read while a change committed is not kept. At most `capacity` answers are kept
/// (all are dropped when it is reached). Ages are measured on the `Database`'s `WallClock` (so
/// tests move them deterministically); an answer that seems read in the future (the clock went
/// back) is not reused.
package final class ReadCache: Sendable {
    private struct Entry {
        package let value: any Sendable
        package let readAt: Date
    }

    private let state = Mutex<(generation: UInt64, entries: [String: Entry])>((0, [:]))
    package let capacity: Int

    package init(capacity: Int = 1_000) { self.capacity = capacity }

    /// The answer for `key` read less than `maxAge` before `now`, or `read`'s answer (kept for others).
    package func value<T: Sendable>(_ key: String, maxAge: Duration, now began: Date, read: () async throws -> T)
        async throws
        -> T
    {
        let limit = maxAge.inSeconds
        let (generation, kept) = state.withLock { state -> (UInt64, T?) in
            guard let entry = state.entries[key], case let age = began.timeIntervalSince(entry.readAt), age >= 0,
                age < limit
            else {
                return (state.generation, nil)
            }
            return (state.generation, entry.value as? T)
        }
        if let kept { return kept }
        let value = try await read()
        state.withLock { state in
            // a change committed meanwhile: maybe not in this answer
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = Entry(value: value, readAt: began)
        }
        return value
    }

    /// A change committed: no answer kept so far is reused.
    package func changed() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll(keepingCapacity: true)
        }
    }
}
