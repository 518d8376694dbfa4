import PostgresNIO
import Synchronization

/// Answers a request whose database connection closes under it: 503 (`DomainError.unavailable`,
/// `Retry-After`) at once, through `RequestWork.connectionLost()`.
///
/// PostgresNIO never answers a statement written to a connection that has just closed (the write
/// fails and the statement's promise is dropped). The check of `isClosed` before each statement
/// narrows that race, but a primary killed under load still leaves statements in it: without the
/// watch, their requests would wait for their deadline, and one whose commit was under way (which
/// holds the deadline's answer back) would wait forever.
///
/// The watch keeps which request work holds each leased connection (a lease's, and a statement's
/// after its commit, `RequestDeadline.watching`: each hold released by its own holder only), and
/// listens to each connection's close once (one callback per connection, however many leases it
/// serves).
package final class ConnectionWatch: Sendable {
    /// The service's one watch.
    package static let shared = ConnectionWatch()

    /// One work's hold of a connection, for its `release`.
    package struct Hold: Sendable {
        let id: UInt64
    }

    private struct State {
        /// The request work holding each leased connection, by the connection's identity.
        var holders: [ObjectIdentifier: [(hold: UInt64, work: any RequestWork)]] = [:]
        /// The connections whose close is listened to, kept until their close is handled (so that
        /// no other connection takes the identity meanwhile).
        var listening: [ObjectIdentifier: PostgresConnection] = [:]
        var nextHold: UInt64 = 0
    }
    private let state = Mutex(State())

    /// `work` holds `connection` until `release(_:_:)` with the hold returned; when the connection
    /// closes before that, the work is told (at once when it is closed already).
    @discardableResult
    package func hold(_ connection: PostgresConnection, for work: any RequestWork) -> Hold {
        let key = ObjectIdentifier(connection)
        let (hold, isNew) = state.withLock { state in
            state.nextHold += 1
            state.holders[key, default: []].append((state.nextHold, work))
            guard state.listening[key] == nil else { return (state.nextHold, false) }
            state.listening[key] = connection
            return (state.nextHold, true)
        }
        if isNew {
            connection.closeFuture.whenComplete { _ in self.closed(key) }
        }
        return Hold(id: hold)
    }

    /// The work of `hold` gave `connection` back (another's hold of it stays).
    package func release(_ connection: PostgresConnection, _ hold: Hold) {
        state.withLock { state in
            let key = ObjectIdentifier(connection)
            state.holders[key]?.removeAll { $0.hold == hold.id }
            if state.holders[key]?.isEmpty == true { state.holders[key] = nil }
        }
    }

    private func closed(_ key: ObjectIdentifier) {
        let holders = state.withLock { state in
            state.listening[key] = nil
            return state.holders.removeValue(forKey: key) ?? []
        }
        for holder in holders { holder.work.connectionLost() }
    }
}
