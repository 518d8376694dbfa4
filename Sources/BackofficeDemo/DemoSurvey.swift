import Backoffice
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// What a seed step reads before it runs, in one transaction as the system: whether it ran
/// already (a count), what it builds on (ids), and whom it acts as (operators by email).
struct DemoSurvey {
    let connection: PostgresConnection
    let logger: Logger

    /// The first column of the first row as a number (a count); 0 when there is no row.
    func count(_ query: PostgresQuery) async throws -> Int {
        try await firstRow(query, on: connection, logger: logger) { try $0.decode(Int.self) } ?? 0
    }

    /// The first column of every row, as ids, in the query's order.
    func ids(_ query: PostgresQuery) async throws -> [UUID] {
        var ids: [UUID] = []
        for try await id in try await connection.query(query, logger: logger).decode(UUID.self) { ids.append(id) }
        return ids
    }

    /// The operators with these emails that exist, by email.
    func operators(_ emails: [String]) async throws -> [String: Operator] {
        var found: [String: Operator] = [:]
        for try await row in try await connection.query(
            "SELECT \(unescaped: Operator.columns) FROM operators WHERE email = ANY(\(emails))", logger: logger)
        {
            let person = try Operator(row: row)
            found[person.email] = person
        }
        return found
    }
}

extension DemoEnvironment {
    /// The demo's manager: reviews the experts' work and features content.
    static let managerEmail = "manager@healthtrack.example"

    /// `body` run on a survey of the demo database, in one transaction as the system.
    static func survey<T: Sendable>(_ database: Database, _ body: (DemoSurvey) async throws -> T) async throws -> T {
        try await database.transaction(for: .system) {
            try await body(DemoSurvey(connection: $0, logger: database.logger))
        }
    }

    /// `context` acting as the app's backend (the `app_service` role, of the platform tenant).
    static func asApp(_ context: OperationContext, _ database: Database) -> OperationContext {
        context.acting(
            as: Principal(operatorID: database.ids.next(), role: .appService, tenantID: platformTenantID, tokenID: nil))
    }

    /// The expert as the writer and the manager as the reviewer, when `table` is empty and both
    /// exist: the start of a step that adds reviewed content once (named `name` in the audit log).
    static func reviewedSeed(
        _ table: String, by expert: String, _ name: String, _ database: Database, _ policies: PolicySet
    ) async throws -> (writer: OperationContext, reviewer: OperationContext)? {
        let found = try await survey(database) {
            (
                try await $0.count("SELECT count(*) FROM \(unescaped: table)"),
                try await $0.operators([expert, managerEmail])
            )
        }
        guard found.0 == 0, let writer = found.1[expert], let manager = found.1[managerEmail] else { return nil }
        return writerAndReviewer(.system(name, policies: policies), writer, manager)
    }

    /// `context` acting as each of the writer and the reviewer (the expert and the manager).
    static func writerAndReviewer(_ context: OperationContext, _ writer: Operator, _ reviewer: Operator)
        -> (writer: OperationContext, reviewer: OperationContext)
    {
        (context.acting(as: principal(writer)), context.acting(as: principal(reviewer)))
    }
}
