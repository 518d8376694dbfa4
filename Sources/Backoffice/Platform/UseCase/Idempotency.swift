import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// A response as stored for Idempotency-Key replay: status and body, encoded once.
public struct StoredResponse<Body: Codable & Sendable>: Codable, Sendable {
    public let status: Int
    public let body: Body

    public init(status: Int, body: Body) {
        self.status = status
        self.body = body
    }
}

/// A response body that carries a secret (a token, a webhook secret): the secret exists only in
/// the one response that delivers it, so the idempotency store keeps `withoutSecret()` instead,
/// and a replay says the secret was delivered earlier.
protocol SecretBearing {
    func withoutSecret() -> Self
}

/// Idempotency-Key handling: keys are scoped to the principal and kept for
/// `policies/retention.yaml` hours. The first request's response is stored in the same
/// transaction as its change; the same key with the same request replays it (no second change);
/// the same key with a different request is 409 `idempotency_key_reused`.
struct Idempotency: Sendable {
    let database: Database

    /// Runs `operation` once per (principal, key); `respond` shapes the response that is stored.
    func run<Operation: AuditedOperation, Body: Codable & Sendable>(
        _ operation: Operation, key: String?, request: some Encodable, operationID: String, context: OperationContext,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Body>
    ) async throws -> StoredResponse<Body> {
        guard let key else {
            return try await database.run(operation, context: context) { _, output in try respond(output) }
        }
        guard (1...255).contains(key.utf8.count) else {
            throw DomainError.invalid("Idempotency-Key", "out_of_range", "must be 1–255 characters")
        }
        try context.permit(Operation.self)
        let fingerprint = Self.fingerprint(operationID: operationID, request: request)
        if let stored: StoredResponse<Body> = try await replay(key: key, fingerprint: fingerprint, context: context) { return stored }
        let keepHours = context.policies.retention.idempotencyKeepHours
        do {
            return try await database.savepoint(context) {
                try await database.run(operation, context: context) { connection, output in
                    let response = try respond(output)
                    let body = try JSONEncoder().encode(StoredResponse(status: response.status, body: Self.storable(response.body)))
                    let saved = try await connection.send(
                        """
                        INSERT INTO idempotency_keys (tenant_id, principal_id, key, request_hash, status, body)
                        VALUES (\(context.principal.tenantID), \(context.principal.operatorID), \(key), \(ByteBuffer(bytes: fingerprint)),
                                \(response.status), \(ByteBuffer(data: body)))
                        ON CONFLICT (tenant_id, principal_id, key) DO UPDATE
                            SET request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, created_at = now()
                            WHERE idempotency_keys.created_at <= now() - make_interval(hours => \(keepHours)::int)
                        RETURNING 1
                        """, logger: database.logger)
                    var inserted = false
                    for try await _ in saved { inserted = true }
                    if !inserted { throw ConcurrentDuplicate() }  // a concurrent request with this key won: undo ours, replay its
                    return response
                }
            }
        } catch {
            // A concurrent request with this key may have won (its record, or its change conflicting
            // with ours): answer with its record. Not when the database is gone or too slow.
            if case DomainError.unavailable = error { throw error }
            if case DomainError.timedOut = error { throw error }
            if let stored: StoredResponse<Body> = try await replay(key: key, fingerprint: fingerprint, context: context) { return stored }
            throw error
        }
    }

    private struct ConcurrentDuplicate: Error {}

    /// What may be kept of a response body: everything but a secret it carries.
    static func storable<Body>(_ body: Body) -> Body {
        guard let bearing = body as? any SecretBearing else { return body }
        return bearing.withoutSecret() as? Body ?? body
    }

    private func replay<Body: Codable & Sendable>(key: String, fingerprint: [UInt8], context: OperationContext) async throws -> StoredResponse<Body>?
    {
        let keepHours = context.policies.retention.idempotencyKeepHours
        let found: (ByteBuffer, ByteBuffer)? = try await database.transaction(for: context) { connection in
            for try await row in try await connection.send(
                """
                SELECT request_hash, body FROM idempotency_keys
                WHERE tenant_id = \(context.principal.tenantID) AND principal_id = \(context.principal.operatorID) AND key = \(key)
                  AND created_at > now() - make_interval(hours => \(keepHours)::int)
                """, logger: database.logger
            ).decode((ByteBuffer, ByteBuffer).self) {
                return row
            }
            return nil
        }
        guard let (hash, body) = found else { return nil }
        guard Array(hash.readableBytesView) == fingerprint else { throw DomainError.idempotencyKeyReused }
        ServiceMetrics.idempotentReplays.increment()
        return try JSONDecoder().decode(StoredResponse<Body>.self, from: Data(body.readableBytesView))
    }

    /// SHA-256 over the operation and its decoded request (path parameters and body), keys sorted.
    static func fingerprint(operationID: String, request: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var hasher = SHA256()
        hasher.update(data: Data(operationID.utf8))
        hasher.update(data: (try? encoder.encode(request)) ?? Data())
        return Array(hasher.finalize())
    }
}
