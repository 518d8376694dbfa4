import BackofficePlatform
import Foundation
import PostgresNIO

/// What a settlement paid (or, in a dry run, would pay).
package struct Settlement: Sendable, Codable, Equatable {
    package struct Payout: Sendable, Codable, Equatable {
        package var customerID: UUID
        package var rank: Int
        package var score: Double
        package var points: Int64
        package var badges: [String]
    }
    package var dryRun: Bool
    package var settledAt: Date?
    /// Everyone who ranked on the frozen board.
    package var participants: Int
    /// The budget account's balance before paying.
    package var budget: Int64
    package var paid: Int64
    /// What the budget lacks to pay the rewards (0 when it is enough).
    package var shortfall: Int64
    package var payouts: [Payout]
}

/// A manager settles a challenge once its board is frozen (`challenges.settle`): everyone is
/// ranked under the tie policy (tied customers share their rank's band), rank bands and the
/// target reward are paid from the challenge's budget account and its badges awarded, all in one
/// transaction. A budget too small for the rewards is 409 `budget_exceeded` and pays nothing (no
/// challenge pays more than it was given). Settling again returns the first settlement and
/// awards nothing. `dryRun` computes the same and changes nothing (before the board freezes,
/// it previews the live board).
package struct SettleChallenge: AuditedOperation {
    package static let action: Action = "challenges.settle"
    package let challengeID: UUID
    package let dryRun: Bool

    package init(challengeID: UUID, dryRun: Bool) { (self.challengeID, self.dryRun) = (challengeID, dryRun) }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(Challenge, Settlement)> {
        let before = try await Challenge.fetch(challengeID, forUpdate: !dryRun, in: unit)
        if before.status == .settled, let settled = try await Self.stored(challengeID, in: unit) {
            return .unchanged((before, settled))
        }
        guard before.status == .published else {
            throw DomainError.invalidTransition(
                "Only a published challenge can be settled; this one is a draft.", current: "draft")
        }
        guard dryRun || unit.now >= before.frozenAt else {  // a dry run previews a live board too
            throw DomainError.conflict(
                code: "board_not_frozen",
                detail:
                    """
                    The board freezes at \(ISO8601DateFormatter().string(from: before.frozenAt)) (the end of the \
                    window plus the grace period).
                    """
            )
        }
        let board = try await ChallengeLeaderboard.standings(EntireBoard.self, of: before, after: nil, in: unit)
        let ranks = Ranking.ranks(board.map(\.standing), policy: before.tiePolicy)
        var payouts: [Settlement.Payout] = []
        for (standing, rank) in zip(board.lazy.map(\.standing), ranks) {
            var payout = Settlement.Payout(
                customerID: standing.customerID, rank: rank, score: standing.score, points: 0, badges: [])
            if let band = before.rewards.ranks.first(where: { ($0.from...$0.to).contains(rank) }) {
                payout.points += band.points
                if let badge = band.badge { payout.badges.append(badge) }
            }
            if let target = before.target, standing.score >= target, let reward = before.rewards.target {
                payout.points += reward.points
                if let badge = reward.badge { payout.badges.append(badge) }
            }
            if payout.points > 0 || !payout.badges.isEmpty { payouts.append(payout) }
        }
        let budget = try await Ledger.balance(of: challengeID, in: unit)
        let total = payouts.reduce(Int64(0)) { $0 + $1.points }
        let settlement = Settlement(
            dryRun: dryRun, settledAt: dryRun ? nil : unit.now, participants: board.count, budget: budget, paid: total,
            shortfall: max(0, total - budget), payouts: payouts)
        if dryRun { return .unchanged((before, settlement)) }
        guard settlement.shortfall == 0 else {
            throw DomainError.conflict(
                code: "budget_exceeded",
                detail: "The rewards need \(total) FitPoints; the challenge's budget holds \(budget). Nothing was paid."
            )
        }

        let paying = payouts.filter { $0.points > 0 }
        try await Ledger.post(
            paying.map {
                Ledger.Transfer(
                    .challengeReward, from: challengeID, to: Ledger.wallet($0.customerID), amount: $0.points,
                    reason: "rank \($0.rank) in \(before.name)",
                    sourceEventID: "challenge:\(challengeID.text):\($0.customerID.text)",
                    challengeID: challengeID)
            }, movement: unit.newID(), in: unit)
        let ruleSet = try await EarningRuleSet.current(in: unit)
        for badge in Set(payouts.flatMap(\.badges)).sorted() {
            let holders = payouts.filter { $0.badges.contains(badge) }.map(\.customerID)
            _ = try await BadgeAwards.award(
                badge, to: holders, source: "challenge:\(challengeID.text)", paidBy: ruleSet, in: unit)
        }
        let json = String(decoding: try Self.coder.encoder.encode(settlement), as: UTF8.self)
        let after = try await unit.one(
            """
            UPDATE challenges SET status = 'settled', settled_at = \(unit.now), settlement = \(json)::jsonb, version =
                version + 1,
                updated_at = \(unit.now)
            WHERE id = \(challengeID) RETURNING \(unescaped: Challenge.columns)
            """, as: Challenge.self, else: DomainError.notFound("Challenge \(challengeID.text)"))
        let detail = "paid \(total) FitPoints to \(paying.count) of \(board.count) participants"
        return Audited((after, settlement), event: try challengeEvent(Self.action, before, after, detail: detail))
    }

    static let coder: (encoder: JSONEncoder, decoder: JSONDecoder) = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return (encoder, decoder)
    }()

    /// The settlement made when the challenge was settled.
    static func stored(_ id: UUID, in unit: UnitOfWork) async throws -> Settlement? {
        guard
            let json = try await unit.first(
                "SELECT settlement::text FROM challenges WHERE id = \(id)", { try $0.decode(String?.self) }), let json
        else { return nil }
        return try coder.decoder.decode(Settlement.self, from: Data(json.utf8))
    }
}
