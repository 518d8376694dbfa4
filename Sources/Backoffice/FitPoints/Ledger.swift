import BackofficePlatform
import Foundation
import PostgresNIO

/// The FitPoints ledger: double-entry and append-only (`fitpoints_accounts`,
/// `fitpoints_transfers`, migration 0010).
///
/// Guarantees, kept by the database whatever the caller does:
/// - every transfer takes a positive amount from one account and gives it to another, so every
///   movement (a set of transfers) balances;
/// - transfers are never changed or removed;
/// - a wallet's or a challenge budget's totals are applied by the database in the statement that
///   records its transfers (the service role cannot write a balance), so a balance is always the
///   sum of its transfers; the platform's accounts (which every movement touches) are summed when
///   read (`fitpoints_balances`), so movements never queue on them;
/// - a wallet or a challenge budget never goes below zero, also under concurrent debits: a
///   movement that would overdraw one changes nothing (`insufficient_fitpoints`,
///   `budget_exhausted`).
package enum Ledger {
    /// The platform's account that points are issued from (earnings, manager credits).
    package static let issuance = UUID(uuidString: "00000000-0000-0000-0000-0000000f0001")!
    /// The platform's account that redeemed points go to (orders paid in FitPoints).
    package static let redemption = UUID(uuidString: "00000000-0000-0000-0000-0000000f0002")!
    /// The platform's account that expired points go to.
    package static let expiry = UUID(uuidString: "00000000-0000-0000-0000-0000000f0003")!

    /// A customer's wallet: its id is the customer's. Every customer has one from the statement
    /// that inserts the customer (migration 0016), so movements never open wallets.
    package static func wallet(_ customerID: UUID) -> UUID { customerID }

    /// What an account is, for the entries that name it.
    package enum AccountKind: String, Sendable, CaseIterable {
        case wallet, issuance, redemption, expiry
        case challengeBudget = "challenge_budget"
    }

    /// Why points moved.
    package enum MovementKind: String, Sendable, CaseIterable {
        case adjustment, earning, redemption, refund, expiry
        case challengeFunding = "challenge_funding"
        case challengeReward = "challenge_reward"
    }

    /// One transfer of a movement: `amount` (> 0) leaves `debit` and reaches `credit`, with
    /// what caused it.
    package struct Transfer: Sendable {
        package var kind: MovementKind
        package var debit: UUID
        package var credit: UUID
        package var amount: Int64
        package var reason: String?
        package var ruleID: String?
        package var ruleVersion: Int?
        package var sourceEventID: String?
        package var challengeID: UUID?

        package init(
            _ kind: MovementKind, from debit: UUID, to credit: UUID, amount: Int64, reason: String? = nil,
            ruleID: String? = nil,
            ruleVersion: Int? = nil, sourceEventID: String? = nil, challengeID: UUID? = nil
        ) {
            (self.kind, self.debit, self.credit, self.amount, self.reason) = (kind, debit, credit, amount, reason)
            (self.ruleID, self.ruleVersion, self.sourceEventID, self.challengeID) = (
                ruleID, ruleVersion, sourceEventID, challengeID
            )
        }
    }

    /// Opens the budget account of a challenge (empty; its id is the challenge's), or finds it open.
    /// - Throws: `inconsistent` when an account of another kind has the challenge's id (the
    ///   database refuses such a challenge, migration 0022): a budget is never another account.
    static func openBudget(of challengeID: UUID, in unit: UnitOfWork) async throws {
        let kind = try await unit.first(
            """
            WITH opened AS (
                INSERT INTO fitpoints_accounts (id, kind) VALUES (\(challengeID), 'challenge_budget') ON CONFLICT (id)
                    DO NOTHING RETURNING kind
            )
            SELECT kind FROM opened UNION ALL SELECT kind FROM fitpoints_accounts WHERE id = \(challengeID)
            """, { try $0.decode(String.self) })
        guard kind == AccountKind.challengeBudget.rawValue else {
            throw DomainError.inconsistent(
                "the FitPoints account \(challengeID.text) is a \(kind ?? "missing account"), not a challenge budget")
        }
    }

    /// The stored balance of a wallet or a budget (0 when it was never opened).
    static func balance(of account: UUID, in unit: UnitOfWork) async throws -> Int64 {
        try await unit.first(
            "SELECT balance FROM fitpoints_accounts WHERE id = \(account)", { try $0.decode(Int64.self) }) ?? 0
    }

    /// Records one movement: all of `transfers` or none. Returns the first transfer's id (the
    /// ids of one movement are consecutive).
    /// - Throws: `conflict(insufficient_fitpoints)` when a wallet would go below zero,
    ///   `conflict(budget_exhausted)` when a challenge budget would.
    @discardableResult
    static func post(_ transfers: [Transfer], movement: UUID, in unit: UnitOfWork) async throws -> Int64? {
        guard !transfers.isEmpty else { return nil }
        // arrays carry no NULL: nil is encoded as a sentinel
        let none = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        do {
            var ids: [Int64] = []  // every row is read: the trigger's refusal arrives after them
            for try await row in try await unit.connection.send(
                """
                INSERT INTO fitpoints_transfers (movement_id, kind, debit_account, credit_account, amount, reason,
                    rule_id, rule_version,
                    source_event_id, challenge_id, created_by, created_at)
                SELECT \(movement), t.kind, t.debit, t.credit, t.amount, NULLIF(t.reason, ''), NULLIF(t.rule_id, ''),
                    NULLIF(t.rule_version, 0),
                    NULLIF(t.source, ''), NULLIF(t.challenge, \(none)), \(unit.principal.operatorID), \(unit.now)
                FROM unnest(\(transfers.map(\.kind.rawValue))::text[], \(transfers.map(\.debit))::uuid[],
                    \(transfers.map(\.credit))::uuid[],
                    \(transfers.map(\.amount))::bigint[], \(transfers.map { $0.reason ?? "" })::text[],
                        \(transfers.map { $0.ruleID ?? "" })::text[],
                    \(transfers.map { $0.ruleVersion ?? 0 })::integer[],
                        \(transfers.map { $0.sourceEventID ?? "" })::text[],
                    \(transfers.map { $0.challengeID ?? none })::uuid[])
                    AS t(kind, debit, credit, amount, reason, rule_id, rule_version, source, challenge)
                RETURNING id
                """, logger: unit.logger)
            { ids.append(try row.decode(Int64.self)) }
            return ids.min()
        } catch let error as PSQLError {
            switch error.serverInfo?[.constraintName] {
            case "fitpoints_wallet_not_negative":
                throw DomainError.conflict(
                    code: "insufficient_fitpoints",
                    detail: "The wallet holds fewer FitPoints than this debit; nothing was changed.")
            case "fitpoints_budget_not_negative":
                throw DomainError.conflict(
                    code: "budget_exhausted",
                    detail: "The challenge's budget holds fewer FitPoints than this payout; nothing was changed.")
            default: throw error
            }
        }
    }
}
