import Foundation
import Logging
import PostgresNIO

extension Database {
    /// Runs `body`, turning a `PSQLError` into what `translate` makes of it.
    package func translatingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw Database.translate(error, logger: logger)
        }
    }

    /// Maps database failures that clients can act on to domain errors; everything else becomes 503
    /// (connection) or 500, never echoing the database's message. Logged with the request id and
    /// only the SQLSTATE and the names of the constraint, table and column: never the server's
    /// message or detail, which can quote the failing row.
    package static func translate(_ error: PSQLError, logger: Logger) -> any Error {
        var logger = logger
        if let requestID = RequestScope.current?.requestID { logger[metadataKey: "request_id"] = .string(requestID) }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            var metadata: Logger.Metadata = ["sqlstate": .string(state)]
            for (key, field) in [
                ("constraint", PSQLError.ServerInfo.Field.constraintName), ("table", .tableName),
                ("column", .columnName),
            ] {
                if let value = error.serverInfo?[field] { metadata[key] = .string(value) }
            }
            logger.error("database error", metadata: metadata)
            switch state {
            case PostgresError.Code.uniqueViolation.raw:
                return DomainError.conflict(
                    code: "already_exists", detail: "A resource with these values already exists.")
            case PostgresError.Code.insufficientPrivilege.raw:
                // A definer function's refusal may say why (`RAISE … USING HINT = '…'`): a reason, never a value.
                return error.serverInfo?[.hint].map { DomainError.refusedBecause($0) } ?? DomainError.refused
            case PostgresError.Code.noDataFound.raw:
                // A definer function's "not found" (`RAISE … USING ERRCODE = 'no_data_found', HINT = 'customer'`):
                // the hint names what is missing, never a value.
                return DomainError.notFound(error.serverInfo?[.hint] ?? "resource")
            case PostgresError.Code.deadlockDetected.raw, PostgresError.Code.serializationFailure.raw:
                return DomainError.contention
            case PostgresError.Code.queryCanceled.raw:  // statement_timeout
                ServiceMetrics.statementTimeouts.increment()
                return DomainError.timedOut
            case PostgresError.Code.checkViolation.raw, PostgresError.Code.notNullViolation.raw:
                return DomainError.invalid([
                    FieldIssue(field: "body", code: "constraint", message: "violates a constraint")
                ])
            case let state where state.hasPrefix("22"):  // data exception: a value out of range or not representable
                return DomainError.invalid([
                    FieldIssue(field: "body", code: "invalid_value", message: "a value cannot be stored")
                ])
            case let state where state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53"):
                // connection exception; shutdown or restart of the server; out of connections or memory
                return DomainError.unavailable
            default:
                return DomainError.inconsistent("database error \(state)")
            }
        case .connectionError, .poolClosed, .serverClosedConnection, .clientClosedConnection, .connectionClosed:
            logger.error("database unavailable", metadata: ["error_code": "\(error.code)"])
            return DomainError.unavailable
        default:
            logger.error("database error", metadata: ["error_code": "\(error.code)"])
            return DomainError.inconsistent("database error \(error.code)")
        }
    }
}
