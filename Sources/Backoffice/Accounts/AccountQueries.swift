import BackofficePlatform
import Foundation
import PostgresNIO

/// One page of customer accounts (`accounts.list`), ordered by (email, id) after the account
/// `afterID`. Deleted accounts are hidden unless asked for by status or `includeDeleted`. A role
/// that sees PII masked may neither filter nor sort by it (`pii_masked`; its pages are ordered by
/// id), so masked emails cannot be recovered a character at a time.
package struct ListCustomerAccounts: Query {
    package static let action: Action = "accounts.list"
    package var status: AccountStatus?
    package var emailPrefix: String?
    package var includeDeleted: Bool
    package var afterID: UUID?
    package var limit: Int

    package init(
        status: AccountStatus? = nil, emailPrefix: String? = nil, includeDeleted: Bool = false, afterID: UUID? = nil,
        limit: Int
    ) {
        (self.status, self.emailPrefix, self.includeDeleted, self.afterID, self.limit) = (
            status, emailPrefix, includeDeleted, afterID, limit
        )
    }

    package func read(in unit: UnitOfWork) async throws -> [Customer] {
        let masks = unit.context.masksPII
        if masks, !(emailPrefix ?? "").isEmpty { throw DomainError.piiMasked(field: "email_prefix") }
        let statuses: [String] =
            if let status { [status.rawValue] } else if includeDeleted { AccountStatus.allCases.map(\.rawValue) } else {
                ["active", "locked"]
            }
        let after = afterID ?? platformTenantID
        if masks {
            return try await unit.page(limit: limit) { fetch in
                try await byID(fetch, statuses: statuses, after: after, in: unit)
            }.map(\.masked)
        }
        return try await unit.page(limit: limit) { fetch in
            try await byEmail(fetch, statuses: statuses, after: after, in: unit)
        }
    }

    private func byID<Fetch: PageFetch>(_: Fetch.Type, statuses: [String], after: UUID, in unit: UnitOfWork)
        async throws -> [Customer]
    {
        try await unit.rows(CustomerPage<CustomersByID, Fetch>(statuses: statuses, afterID: after))
    }

    private func byEmail<Fetch: PageFetch>(_: Fetch.Type, statuses: [String], after: UUID, in unit: UnitOfWork)
        async throws -> [Customer]
    {
        guard let prefix = emailPrefix, !prefix.isEmpty else {
            return try await unit.rows(CustomerPage<CustomersByEmail, Fetch>(statuses: statuses, afterID: after))
        }
        return try await unit.rows(
            CustomerPage<CustomersByEmailPrefix, Fetch>(statuses: statuses, afterID: after, prefix: prefix))
    }
}

/// One customer account with its open lock (`accounts.read`), masked for roles that see PII masked.
package struct GetCustomerAccount: Query {
    package static let action: Action = "accounts.read"
    package let id: UUID
    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> Customer {
        let customer = try await Customer.fetch(id, in: unit)
        return unit.context.masksPII ? customer.masked : customer
    }
}

/// The account's audit events, oldest first (`accounts.history`): the log's page of the events
/// that name it (`ListAuditEvents`), for a role that reads an account's history but not the log.
/// - Throws: 404 for an account the principal does not see.
package struct CustomerAccountHistory: Query {
    package static let action: Action = "accounts.history"
    package let id: UUID
    let events: ListAuditEvents

    package init(id: UUID, afterID: Int64, limit: Int) {
        self.id = id
        let filter = AuditFilter(tenantID: platformTenantID, targetID: id.text)
        events = ListAuditEvents(filter: filter, afterID: afterID, limit: limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [AuditEventRecord] {
        _ = try await Customer.fetch(id, in: unit)
        return try await events.read(in: unit)
    }
}

/// Appeals, oldest first, optionally of one status (`appeals.list`).
package struct ListAppeals: Query {
    package static let action: Action = "appeals.list"
    package let status: AppealStatus?
    package let after: (createdAt: Date, id: UUID)?
    package let limit: Int
    package init(status: AppealStatus?, after: (createdAt: Date, id: UUID)?, limit: Int) {
        self.status = status
        self.after = after
        self.limit = limit
    }

    package func read(in unit: UnitOfWork) async throws -> [Appeal] {
        let afterAt = after?.createdAt ?? Date(timeIntervalSince1970: 0)
        let afterID = after?.id ?? platformTenantID
        return try await unit.all(
            """
            SELECT \(unescaped: Appeal.columns) FROM appeals
            WHERE (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)) AND (created_at, id) >
                (\(afterAt), \(afterID))
            ORDER BY created_at, id LIMIT \(limit)
            """)
    }
}

/// One appeal (`appeals.read`).
package typealias GetAppeal = GetByID<Appeal>

extension Appeal: ReadByID {
    package static let table = "appeals"
    package static let readAction: Action = "appeals.read"
}
