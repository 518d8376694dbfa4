import BackofficePlatform
import Foundation
import PostgresNIO

/// A customer's FitPoints: the wallet's balance and its totals (a wallet not opened yet holds 0).
package struct WalletBalance: Sendable, Equatable {
    package var customerID: UUID
    package var balance: Int64
    /// Every point the wallet ever received, and every point that left it.
    package var credited: Int64
    package var debited: Int64
    /// When points last moved, nil when they never did.
    package var updatedAt: Date?

    /// What the audit log records of a wallet.
    var snapshot: String {
        get throws {
            struct Snapshot: Encodable { let balance: Int64, credited: Int64, debited: Int64 }
            return try AuditRecord.json(Snapshot(balance: balance, credited: credited, debited: debited))
        }
    }
}

extension WalletBalance: RowDecodable {
    /// Selected from `customers c LEFT JOIN fitpoints_accounts a ON a.id = c.id`.
    package static let columns =
        "c.id, coalesce(a.balance, 0), coalesce(a.credited, 0), coalesce(a.debited, 0), a.updated_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, Int64, Int64, Int64, Date?).self)
        self.init(customerID: c.0, balance: c.1, credited: c.2, debited: c.3, updatedAt: c.4)
    }

    /// The customer's balance.
    /// - Throws: `DomainError.notFound` when the customer does not exist.
    static func fetch(_ customerID: UUID, in unit: UnitOfWork) async throws -> WalletBalance {
        let wallet = try await unit.one(
            """
            SELECT \(unescaped: columns) FROM customers c LEFT JOIN fitpoints_accounts a ON a.id = c.id WHERE \
            c.id = \(customerID)
            """,
            as: WalletBalance.self, else: DomainError.notFound("Customer \(customerID.text)"))
        return wallet
    }
}

/// One entry of a wallet: a transfer seen from the wallet, `points` positive when it received
/// them, negative when they left it, with the account on the other side and what caused it.
package struct LedgerEntry: Sendable, Equatable {
    package var id: Int64
    package var movementID: UUID
    package var kind: Ledger.MovementKind
    package var points: Int64
    package var counterparty: Ledger.AccountKind
    package var reason: String?
    package var ruleID: String?
    package var ruleVersion: Int?
    package var sourceEventID: String?
    package var challengeID: UUID?
    package var createdAt: Date
}

extension LedgerEntry: RowDecodable {
    /// Selected from `entries e JOIN fitpoints_accounts o ON o.id = e.other` (see `page`).
    package static let columns = """
        e.id, e.movement_id, e.kind, e.points, o.kind, e.reason, e.rule_id, e.rule_version, e.source_event_id,
            e.challenge_id, e.created_at
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode((Int64, UUID, String, Int64, String, String?, String?, Int?, String?, UUID?, Date).self)
        self.init(
            id: c.0, movementID: c.1, kind: try .init(known: c.2), points: c.3, counterparty: try .init(known: c.4),
            reason: c.5, ruleID: c.6,
            ruleVersion: c.7, sourceEventID: c.8, challengeID: c.9, createdAt: c.10)
    }

    /// The wallet's entries older than `before` (all without it), newest first: one index range
    /// scan per side of the transfer, merged (an earning never debits a wallet: the index of
    /// debits leaves earnings out).
    static func page(wallet: UUID, before: Int64?, limit: Int) -> PostgresQuery {
        let before = before ?? Int64.max
        let fields =
            """
            t.id, t.movement_id, t.kind, t.reason, t.rule_id, t.rule_version, t.source_event_id, t.challenge_id, \
            t.created_at
            """
        return """
            SELECT \(unescaped: columns) FROM (
                (SELECT \(unescaped: fields), t.amount AS points, t.debit_account AS other FROM fitpoints_transfers t
                 WHERE t.credit_account = \(wallet) AND t.id < \(before) ORDER BY t.id DESC LIMIT \(limit))
                UNION ALL
                (SELECT \(unescaped: fields), -t.amount, t.credit_account FROM fitpoints_transfers t
                 WHERE t.debit_account = \(wallet) AND t.kind <> 'earning' AND t.id < \(before) ORDER BY t.id DESC
                     LIMIT \(limit))
            ) e JOIN fitpoints_accounts o ON o.id = e.other
            ORDER BY e.id DESC LIMIT \(limit)
            """
    }
}

/// A customer's FitPoints balance (`fitpoints.read`).
package struct GetWalletBalance: Query {
    package static let action: Action = "fitpoints.read"
    package let customerID: UUID
    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> WalletBalance {
        try await WalletBalance.fetch(customerID, in: unit)
    }
}

/// A customer's ledger entries, newest first, one page (`fitpoints.read`).
package struct WalletLedger: Query {
    package static let action: Action = "fitpoints.read"
    package let customerID: UUID
    package let before: Int64?
    package let limit: Int

    package init(customerID: UUID, before: Int64?, limit: Int) {
        (self.customerID, self.before, self.limit) = (customerID, before, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [LedgerEntry] {
        try await Customer.requireExisting(customerID, in: unit)
        return try await unit.all(LedgerEntry.page(wallet: Ledger.wallet(customerID), before: before, limit: limit))
    }
}
