import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A response as stored for Idempotency-Key replay: status and body, encoded once.
package struct StoredResponse<Body: Codable & Sendable>: Codable, Sendable {
    package let status: Int
    package let body: Body
    package init(status: Int, body: Body) { (self.status, self.body) = (status, body) }
}

/// A response body that carries a secret (a token, a webhook secret): the secret exists only in
/// the one response that delivers it, so the idempotency store keeps `withoutSecret()` instead,
/// and a replay says the secret was delivered earlier.
package protocol SecretBearing {
    func withoutSecret() -> Self
}

/// A key's record is not an answer of the shape its reader expects: a change that chooses its path
/// from what it reads (held for approval, or made) whose twin under the same key took the other
/// path meanwhile. The caller chooses again, and the key's record (`recordedStatus`) decides; one
/// that escapes is the service's fault (500), logged with why the record did not read.
package struct KeyAnsweredOtherPath: Error {
    /// The status the key's record holds (`Idempotency.reserved` for a staged change's reservation).
    package let status: Int
    /// Why the record did not read as the expected answer.
    package let failure: String
}

/// The arguments of one idempotent run: the request's `Idempotency-Key` (nil: none sent), what the
/// key is fingerprinted with (the body, or the path's id and the body), the contract's operation id
/// (also fingerprinted) and the request's context.
package struct IdempotentCall<Request: Encodable & Sendable>: Sendable {
    package let key: String?
    package let request: Request
    package let operationID: String
    package let context: OperationContext
    package init(key: String?, request: Request, operationID: String, context: OperationContext) {
        (self.key, self.request, self.operationID, self.context) = (key, request, operationID, context)
    }
}

/// Idempotency-Key handling: keys are scoped to the principal and kept for
/// `policies/retention.yaml` hours. The first request's response is stored in the same
/// transaction as its change; the same key with the same request replays it (no second change);
/// the same key with a different request is 409 `idempotency_key_reused`.
package struct Idempotency: Sendable {
    package let database: Database
    package init(database: Database) { self.database = database }

    /// Runs `operation` once per (principal, key); `respond` shapes the response that is stored.
    package func run<Operation: AuditedChange, Body: Codable & Sendable>(
        _ operation: Operation, _ call: IdempotentCall<some Encodable & Sendable>,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Body>
    ) async throws -> StoredResponse<Body> {
        let (key, request, operationID, context) = (call.key, call.request, call.operationID, call.context)
        guard let key else {
            return try await database.run(operation, context: context) { _, output in try respond(output) }
        }
        guard (1...255).contains(key.utf8.count) else {
            throw DomainError.invalid("Idempotency-Key", "out_of_range", "must be 1–255 characters")
        }
        try context.permit(operation.permission)
        let fingerprint = try Self.fingerprint(operationID: operationID, request: request)
        if let stored: StoredResponse<Body> = try await replay(key: key, fingerprint: fingerprint, context: context) {
            return stored
        }
        do {
            return try await database.savepoint(context) {
                try await database.run(operation, context: context) { connection, output in
                    let response = try respond(output)
                    // a concurrent request with this key won: undo ours, replay its
                    try await store(response, key: key, fingerprint: fingerprint, on: connection, context: context)
                    return response
                }
            }
        } catch {
            // A concurrent request with this key may have won (its record, or its change conflicting
            // with ours): answer with its record. Not when the database is gone or too slow.
            if case DomainError.unavailable = error { throw error }
            if case DomainError.timedOut = error { throw error }
            if let stored: StoredResponse<Body> = try await replay(key: key, fingerprint: fingerprint, context: context)
            {
                return stored
            }
            throw error
        }
    }

    /// Runs a staged operation (`StagedOperation`) once per (principal, key) (without a key, once
    /// per call: `Database.runStaged`). Step 1 commits with
    /// the key's record: the final response when nothing is to be called, otherwise the
    /// reservation (status 0, not a response). Step 3 replaces the reservation with the final
    /// response in its own transaction. The same key and request again: a final response is
    /// replayed; a reservation is completed (called again, then recorded), so a request that
    /// ended between the steps is finished by its retry and the call is never made under a new
    /// key. A different request under the key is 409 `idempotency_key_reused`.
    package func runStaged<Operation: StagedOperation, Body: Codable & Sendable>(
        _ operation: Operation, _ call: IdempotentCall<some Encodable & Sendable>,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Body>
    ) async throws -> StoredResponse<Body> {
        let (key, request, operationID, context) = (call.key, call.request, call.operationID, call.context)
        guard let key else { return try respond(try await database.runStaged(operation, context: context)) }
        guard (1...255).contains(key.utf8.count) else {
            throw DomainError.invalid("Idempotency-Key", "out_of_range", "must be 1–255 characters")
        }
        try context.permit(Operation.self)
        let fingerprint = try Self.fingerprint(operationID: operationID, request: request)
        // a concurrent request under the same key may write its record first: then that record decides
        for _ in 0..<3 {
            if let (status, body) = try await lookup(key: key, fingerprint: fingerprint, context: context) {
                guard status == Self.reserved else { return try Self.replayed(status, body) }
                let reservation = try JSONDecoder().decode(Operation.Reservation.self, from: body)
                return try await complete(
                    operation, reservation, key: key, fingerprint: fingerprint, context: context, respond: respond)
            }
            try operation.ready()
            let stage: Stage<Operation.Reservation, StoredResponse<Body>>
            do {
                stage = try await database.run(ReserveStage(staged: operation), context: context) { connection, stage in
                    switch stage {
                    case .done(let output):
                        let response = try respond(output)
                        try await store(response, key: key, fingerprint: fingerprint, on: connection, context: context)
                        return .done(response)
                    case .call(let reservation):
                        try await store(
                            key: key, fingerprint: fingerprint, status: Self.reserved,
                            body: try JSONEncoder().encode(reservation), on: connection, context: context)
                        return .call(reservation)
                    }
                }
            } catch is ConcurrentDuplicate {
                continue
            }
            switch stage {
            case .done(let response): return response
            case .call(let reservation):
                return try await complete(
                    operation, reservation, key: key, fingerprint: fingerprint, context: context, respond: respond)
            }
        }
        throw DomainError.contention
    }

    /// The status of a key's record while its staged operation waits for the verdict of its call.
    package static let reserved = 0

    /// The status the call's key answered before (`reserved` while its staged operation waits on
    /// its call); nil without a key or a kept record. A change that chooses its path from what it
    /// reads (held for approval or made) replays the path it took, whatever it would read now.
    /// - Throws: `idempotencyKeyReused` when the key was made for a different request.
    package func recordedStatus(_ call: IdempotentCall<some Encodable & Sendable>) async throws -> Int? {
        guard let key = call.key else { return nil }
        let fingerprint = try Self.fingerprint(operationID: call.operationID, request: call.request)
        return try await lookup(key: key, fingerprint: fingerprint, context: call.context)?.0
    }

    /// Steps 2 and 3 of a staged operation: the call with no transaction open, then its verdict
    /// recorded with the key's final response. Step 3 is not bound to the request's answer but to a
    /// deadline and a watched connection of its own (`RequestDeadline.runOnItsOwn`).
    private func complete<Operation: StagedOperation, Body: Codable & Sendable>(
        _ operation: Operation, _ reservation: Operation.Reservation, key: String, fingerprint: [UInt8],
        context: OperationContext,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Body>
    ) async throws -> StoredResponse<Body> {
        let verdict = try await operation.call(reservation)
        return try await database.recordingOnItsOwn {
            try await database.run(
                RecordStage(staged: operation, verdict: verdict, reservation: reservation), context: context
            ) {
                connection, output in
                let response = try respond(output)
                let body = try JSONEncoder().encode(
                    StoredResponse(status: response.status, body: Self.storable(response.body)))
                for try await _ in try await connection.send(
                    """
                    UPDATE idempotency_keys SET status = \(response.status), body = \(ByteBuffer(data: body))
                    WHERE tenant_id = \(context.principal.tenantID) AND principal_id = \(context.principal.operatorID)
                        AND key = \(key)
                      AND request_hash = \(ByteBuffer(bytes: fingerprint))
                    """, logger: database.logger)
                {}
                return response
            }
        }
    }

    /// Writes the key's record of `response` (its secrets removed) in the change's transaction.
    private func store<Body: Codable & Sendable>(
        _ response: StoredResponse<Body>, key: String, fingerprint: [UInt8], on connection: PostgresConnection,
        context: OperationContext
    ) async throws {
        let body = try JSONEncoder().encode(StoredResponse(status: response.status, body: Self.storable(response.body)))
        try await store(
            key: key, fingerprint: fingerprint, status: response.status, body: body, on: connection, context: context)
    }

    /// Writes the key's record in the change's transaction.
    /// - Throws: `ConcurrentDuplicate` when another request's record under the key is still kept
    ///   (the caller rolls back and replays it).
    private func store(
        key: String, fingerprint: [UInt8], status: Int, body: Data, on connection: PostgresConnection,
        context: OperationContext
    ) async throws {
        let now = database.clock.now()
        let expired = Self.keptSince(now, context)
        let saved = try await connection.send(
            """
            INSERT INTO idempotency_keys (tenant_id, principal_id, key, request_hash, status, body, created_at)
            VALUES (\(context.principal.tenantID), \(context.principal.operatorID), \(key),
                \(ByteBuffer(bytes: fingerprint)),
                    \(status), \(ByteBuffer(data: body)), \(now))
            ON CONFLICT (tenant_id, principal_id, key) DO UPDATE
                SET request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, created_at =
                    excluded.created_at
                WHERE idempotency_keys.created_at <= \(expired)
            RETURNING 1
            """, logger: database.logger)
        var inserted = false
        for try await _ in saved { inserted = true }
        guard inserted else { throw ConcurrentDuplicate() }
    }

    private struct ConcurrentDuplicate: Error {}

    /// Records created at or before this instant are forgotten (`policies/retention.yaml`'s keep_hours).
    private static func keptSince(_ now: Date, _ context: OperationContext) -> Date {
        now.addingTimeInterval(-Double(context.policies.retention.idempotencyKeepHours) * 3600)
    }

    /// What may be kept of a response body: everything but a secret it carries.
    package static func storable<Body>(_ body: Body) -> Body {
        guard let bearing = body as? any SecretBearing else { return body }
        return bearing.withoutSecret() as? Body ?? body
    }

    private func replay<Body: Codable & Sendable>(key: String, fingerprint: [UInt8], context: OperationContext)
        async throws -> StoredResponse<Body>?
    {
        guard let (status, body) = try await lookup(key: key, fingerprint: fingerprint, context: context) else {
            return nil
        }
        return try Self.replayed(status, body)
    }

    /// A kept response, replayed as `Body`.
    /// - Throws: `KeyAnsweredOtherPath` when the record is not a response of that shape (another
    ///   path's answer, or a staged change's reservation).
    private static func replayed<Body: Codable & Sendable>(_ status: Int, _ body: Data) throws -> StoredResponse<Body> {
        guard status != reserved else { throw KeyAnsweredOtherPath(status: status, failure: "a reservation") }
        do {
            let stored = try JSONDecoder().decode(StoredResponse<Body>.self, from: body)
            ServiceMetrics.idempotentReplays.increment()
            return stored
        } catch {
            throw KeyAnsweredOtherPath(status: status, failure: String(describing: error))
        }
    }

    /// The key's kept record: its status and body.
    /// - Throws: `idempotencyKeyReused` when it was made for a different request.
    private func lookup(key: String, fingerprint: [UInt8], context: OperationContext) async throws -> (Int, Data)? {
        let expired = Self.keptSince(database.clock.now(), context)
        let found: (ByteBuffer, Int, ByteBuffer)? = try await database.transaction(for: context) { connection in
            for try await row in try await connection.send(
                """
                SELECT request_hash, status, body FROM idempotency_keys
                WHERE tenant_id = \(context.principal.tenantID) AND principal_id = \(context.principal.operatorID) AND
                    key = \(key)
                  AND created_at > \(expired)
                """, logger: database.logger
            ).decode((ByteBuffer, Int, ByteBuffer).self) {
                return row
            }
            return nil
        }
        guard let (hash, status, body) = found else { return nil }
        guard Array(hash.readableBytesView) == fingerprint else { throw DomainError.idempotencyKeyReused }
        return (status, Data(body.readableBytesView))
    }

    /// SHA-256 over the operation and its decoded request (path parameters and body), keys sorted.
    /// Throws when the request does not encode: a fingerprint is never of an empty body.
    package static func fingerprint(operationID: String, request: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var hasher = SHA256()
        hasher.update(data: Data(operationID.utf8))
        hasher.update(data: try encoder.encode(request))
        return Array(hasher.finalize())
    }
}
