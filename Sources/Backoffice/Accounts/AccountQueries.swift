import Foundation
import PostgresNIO

/// Reads of the Accounts domain (no audit: nothing changes). PII is masked for roles whose
/// policy says so.
public struct AccountQueries: Sendable {
    let database: Database

    public init(database: Database) { self.database = database }

    public struct ListFilter: Sendable {
        public var status: AccountStatus?
        public var emailPrefix: String?
        public var includeDeleted: Bool

        public init(status: AccountStatus? = nil, emailPrefix: String? = nil, includeDeleted: Bool = false) {
            self.status = status
            self.emailPrefix = emailPrefix
            self.includeDeleted = includeDeleted
        }
    }

    /// One page ordered by (email, id) after the account `afterID`. Deleted accounts are hidden unless
    /// asked for by status or `includeDeleted`. A role that sees PII masked may neither filter nor
    /// sort by it (403 `pii_masked`; its pages are ordered by id), so masked emails cannot be
    /// recovered a character at a time.
    public func list(_ filter: ListFilter, afterID: UUID?, limit: Int, context: OperationContext) async throws -> [Customer] {
        try context.authorize(.accountsList)
        if context.masksPII, !(filter.emailPrefix ?? "").isEmpty { throw Problem.piiMasked("email_prefix") }
        let statuses: [String] =
            if let status = filter.status { [status.rawValue] } else if filter.includeDeleted { AccountStatus.allCases.map(\.rawValue) } else {
                ["active", "locked"]
            }
        let after = afterID ?? platformTenantID
        if context.masksPII {
            let statement = ListCustomersByID(statuses: statuses, afterID: after, limit: limit)
            return try await database.transaction(for: context) { try await $0.rowsPlannedEachTime(statement, logger: database.logger) }.map(\.masked)
        }
        let statement = ListCustomers(statuses: statuses, prefix: filter.emailPrefix ?? "", afterID: after, limit: limit)
        return try await database.transaction(for: context) { try await $0.rowsPlannedEachTime(statement, logger: database.logger) }
    }

    public func get(_ id: UUID, context: OperationContext) async throws -> Customer {
        try context.authorize(.accountsRead)
        let customer = try await database.transaction(for: context) { connection in
            try await AccountStore.fetch(id, on: connection, logger: database.logger)
        }
        return context.masksPII ? customer.masked : customer
    }

    /// The account's audit events, oldest first.
    public func history(_ id: UUID, afterID: Int64, limit: Int, context: OperationContext) async throws -> [AuditEventRecord] {
        try context.authorize(.accountsHistory)
        return try await database.transaction(for: context) { connection in
            _ = try await AccountStore.fetch(id, on: connection, logger: database.logger)
            return try await AuditLog.page(
                AuditFilter(tenantID: platformTenantID, targetID: id.uuidString.lowercased()), afterID: afterID, limit: limit, on: connection,
                logger: database.logger)
        }
    }

    /// Appeals, oldest first, optionally of one status.
    public func appeals(status: AppealStatus?, after: (createdAt: Date, id: UUID)?, limit: Int, context: OperationContext) async throws -> [Appeal] {
        try context.authorize(.appealsList)
        let afterAt = after?.createdAt ?? Date(timeIntervalSince1970: 0)
        let afterID = after?.id ?? platformTenantID
        return try await database.transaction(for: context) { connection in
            var appeals: [Appeal] = []
            for try await row in try await connection.query(
                """
                SELECT \(unescaped: Appeal.columns) FROM appeals
                WHERE (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)) AND (created_at, id) > (\(afterAt), \(afterID))
                ORDER BY created_at, id LIMIT \(limit)
                """, logger: database.logger)
            {
                appeals.append(try Appeal.decode(row))
            }
            return appeals
        }
    }
}
