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
/// The watch keeps which request work holds each leased connection, and listens to each
/// connection's close once (one callback per connection, however many leases it serves).
package final class ConnectionWatch: Sendable {
    /// The service's one watch.
    package static let shared = ConnectionWatch()

    private struct State {
        /// The request work holding each leased connection, by the connection's identity.
        var holders: [ObjectIdentifier: any RequestWork] = [:]
        /// The connections whose close is listened to, kept until their close is handled (so that
        /// no other connection takes the identity meanwhile).
        var listening: [ObjectIdentifier: PostgresConnection] = [:]
    }
    private let state = Mutex(State())

    /// `work` holds `connection` until `release(_:)`; when the connection closes before that, the
    /// work is told (at once when it is closed already).
    package func hold(_ connection: PostgresConnection, for work: any RequestWork) {
        let key = ObjectIdentifier(connection)
        let isNew = state.withLock { state in
            state.holders[key] = work
            guard state.listening[key] == nil else { return false }
            state.listening[key] = connection
            return true
        }
        if isNew {
            connection.closeFuture.whenComplete { _ in self.closed(key) }
        }
    }

    /// The work holding `connection` gave it back.
    package func release(_ connection: PostgresConnection) {
        _ = state.withLock { $0.holders.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    private func closed(_ key: ObjectIdentifier) {
        let holder = state.withLock { state in
            state.listening[key] = nil
            return state.holders.removeValue(forKey: key)
        }
        holder?.connectionLost()
    }
}
