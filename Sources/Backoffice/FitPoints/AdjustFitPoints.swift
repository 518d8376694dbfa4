import BackofficePlatform
import Foundation

/// A manager corrects a customer's FitPoints (`fitpoints.adjust`, reason required): a credit
/// is issued to the wallet, a debit returns points to issuance. A debit larger than the balance
/// is 409 `insufficient_fitpoints` and changes nothing; a deleted account's wallet is frozen
/// (409 `account_deleted`).
///
/// Dual control counts the account's corrections of the last `window` with it, either way
/// (`recentlyCorrected`, quoted before deciding), so a correction split in parts is held as the
/// whole would be. Its step reads them again under the wallet's lock: corrections made since the
/// quote that bring it past the threshold are 409 `corrections_changed`, and nothing changes.
package struct AdjustFitPoints: ApprovalGated {
    package static let action: Action = "fitpoints.adjust"
    /// The largest correction one adjustment may make, either way.
    package static let maximumPoints: Int64 = 1_000_000
    /// How far back an account's corrections count towards the approval threshold.
    package static let window: TimeInterval = 24 * 3600
    package let customerID: UUID
    package let points: Int64
    package let reason: String?
    /// The points the account's corrections moved within `window` before this one, either way, as
    /// quoted; nil when not quoted (the system's own, or a request held before corrections were
    /// counted): then it counts alone, as it did when it was held.
    package var recentlyCorrected: Int64?

    package init(customerID: UUID, points: Int64, reason: String?, recentlyCorrected: Int64? = nil) {
        (self.customerID, self.points, self.reason) = (customerID, points, reason)
        self.recentlyCorrected = recentlyCorrected
    }

    package var approvalAmount: Int64? { Int64(points.magnitude) + (recentlyCorrected ?? 0) }
    package var approvalTarget: (type: String, id: String) { ("customer", customerID.text) }
    package var approvalSummary: String {
        let by = (points > 0 ? "+" : "") + Validation.grouped(points)
        let earlier = recentlyCorrected.flatMap {
            $0 > 0 ? ", \(Validation.grouped($0)) corrected in the last 24 h" : nil
        }
        return "Adjust the FitPoints of account \(customerID.text) by \(by)" + (earlier ?? "")
    }
    package var approvalReason: String? { reason }
    package static var isQuoted: Bool { true }

    package func quoted(in unit: UnitOfWork) async throws -> AdjustFitPoints {
        var quoted = self
        quoted.recentlyCorrected = try await Self.corrected(customerID, in: unit)
        return quoted
    }

    /// The points the account's corrections moved within `window`, either way.
    static func corrected(_ customerID: UUID, in unit: UnitOfWork) async throws -> Int64 {
        let wallet = Ledger.wallet(customerID)
        return try await unit.first(
            """
            SELECT coalesce(sum(amount), 0)::bigint FROM fitpoints_transfers
            WHERE kind = 'adjustment' AND (credit_account = \(wallet) OR debit_account = \(wallet))
                AND created_at > \(unit.now.addingTimeInterval(-Self.window))
            """, { try $0.decode(Int64.self) }) ?? 0
    }

    /// Refuses (409 `corrections_changed`) when corrections made since the quote bring this one
    /// past the threshold. Corrections of one account queue on a transaction-scoped advisory lock
    /// of its own (taken before the ledger's row locks, and by nothing else), so 30 at once read
    /// each other's.
    private func refuseWhenCorrectedSince(in unit: UnitOfWork) async throws {
        guard let quoted = recentlyCorrected else { return }
        try await unit.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('fitpoints-corrections:' || \(customerID.text), 0))")
        var now = self
        let corrected = try await Self.corrected(customerID, in: unit)
        now.recentlyCorrected = corrected
        guard corrected > quoted, now.needsApproval(unit.policies) != nil else { return }
        throw DomainError.conflict(
            code: "corrections_changed",
            detail: "This account's FitPoints were corrected since this correction was asked for "
                + "(\(Validation.grouped(corrected)) in the last 24 h, \(Validation.grouped(quoted)) then): "
                + "nothing changed; ask for it again, so that whoever decides sees them.")
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(LedgerEntry, WalletBalance)> {
        var validation = Validation()
        validation.require(points != 0, "points", "zero", "must not be 0")
        validation.require(
            points.magnitude <= Self.maximumPoints.magnitude, "points", "out_of_range",
            "must be at most \(Self.maximumPoints) either way")
        validation.text(reason, "reason", max: 1000)
        try validation.check()
        let reason = try requireReason(reason)
        let customer = try await Customer.fetch(customerID, in: unit)
        guard customer.status != .deleted else {
            throw DomainError.conflict(code: "account_deleted", detail: "The account is deleted; its wallet is frozen.")
        }
        try await refuseWhenCorrectedSince(in: unit)
        let wallet = Ledger.wallet(customerID)
        let before = try await WalletBalance.fetch(customerID, in: unit)
        let transfer =
            points > 0
            ? Ledger.Transfer(.adjustment, from: Ledger.issuance, to: wallet, amount: points, reason: reason)
            : Ledger.Transfer(.adjustment, from: wallet, to: Ledger.issuance, amount: -points, reason: reason)
        let movement = unit.newID()
        guard let id = try await Ledger.post([transfer], movement: movement, in: unit),
            let entry = try await unit.first(
                LedgerEntry.page(wallet: wallet, before: id + 1, limit: 1), as: LedgerEntry.self)
        else { throw DomainError.inconsistent("the adjustment was not recorded") }
        let after = try await WalletBalance.fetch(customerID, in: unit)
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "fitpoints_wallet", targetID: customerID.text,
            reason: reason,
            before: try before.snapshot, after: try after.snapshot)
        return Audited((entry, after), event: event)
    }
}
