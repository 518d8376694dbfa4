import BackofficePlatform
import Foundation
import PostgresNIO

/// A manager drafts a challenge (`challenges.create`). Nothing counts until it is published.
///
/// Its budget is what publishing funds from issuance, so a draft whose budget is past the rule's
/// `over` is what `policies/approvals.yaml` may hold for a second person's approval.
package struct CreateChallenge: ApprovalGated {
    package static let action: Action = "challenges.create"

    /// A challenge as a manager writes it (a file, flags or the API), unchecked.
    package struct Draft: Sendable {
        package var name: String
        package var description: String?
        package var metric: String
        package var aggregation: String
        package var startsAt: Date
        package var endsAt: Date
        package var gracePeriod: String?
        package var eligibility: String?
        package var target: Double?
        package var tiePolicy: String?
        package var rankBands: [(from: Double, to: Double, points: Double, badge: String?)]
        package var targetReward: (points: Double, badge: String?)?
        package var budgetPoints: Double
        /// Why (recorded with the approval request when the budget is held).
        package var reason: String?

        package init(
            name: String, description: String? = nil, metric: String, aggregation: String, startsAt: Date, endsAt: Date,
            gracePeriod: String? = nil,
            eligibility: String? = nil, target: Double? = nil, tiePolicy: String? = nil,
            rankBands: [(from: Double, to: Double, points: Double, badge: String?)] = [],
            targetReward: (points: Double, badge: String?)? = nil,
            budgetPoints: Double, reason: String? = nil
        ) {
            (self.name, self.description, self.metric, self.aggregation, self.startsAt, self.endsAt) =
                (name, description, metric, aggregation, startsAt, endsAt)
            (self.gracePeriod, self.eligibility, self.target, self.tiePolicy) = (
                gracePeriod, eligibility, target, tiePolicy
            )
            (self.rankBands, self.targetReward, self.budgetPoints) = (rankBands, targetReward, budgetPoints)
            self.reason = reason
        }
    }

    package let draft: Draft
    package init(_ draft: Draft) { self.draft = draft }

    /// The budget in whole points (nil when it is no finite number: the draft is refused as it runs).
    package var approvalAmount: Int64? {
        draft.budgetPoints.isFinite ? Int64(max(-1e18, min(1e18, draft.budgetPoints.rounded()))) : nil
    }
    package var approvalTarget: (type: String, id: String) { ("challenges", "drafts") }
    package var approvalSummary: String {
        let points = approvalAmount.map(Validation.grouped) ?? "?"
        return "Draft the challenge \u{201C}\(draft.name)\u{201D} with a budget of \(points) FitPoints"
    }
    package var approvalReason: String? { draft.reason }

    /// The longest grace period: 30 days.
    package static let maximumGrace: Int64 = 30 * 86_400

    package func perform(in unit: UnitOfWork) async throws -> Audited<Challenge> {
        var v = Validation()
        let name = draft.name.trimmingCharacters(in: .whitespacesAndNewlines)
        let description = (draft.description ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        v.text(name, "name", max: 200)
        v.text(description, "description", max: 5000, required: false)
        let reason = draft.reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        v.text(reason, "reason", max: 1000, required: false)
        let metric = Metric(rawValue: draft.metric)
        v.require(
            metric != nil, "metric", "unknown_metric",
            "must be one of \(Metric.allCases.map(\.rawValue).joined(separator: ", "))")
        let aggregation = Challenge.Aggregation(rawValue: draft.aggregation)
        v.require(aggregation != nil, "aggregation", "unknown_aggregation", "must be sum, max or count")
        v.require(draft.endsAt > draft.startsAt, "ends_at", "before_start", "must be after starts_at")
        v.require(draft.endsAt > unit.now, "ends_at", "in_the_past", "must be in the future")
        let gracePeriod = draft.gracePeriod ?? "PT0S"
        let grace = ISODuration.seconds(gracePeriod)
        v.require(
            grace.map { $0 <= Self.maximumGrace } ?? false, "grace_period", "invalid_duration",
            "must be an ISO 8601 duration of days and hours (P2D, PT36H) up to 30 days")
        let eligibility = Challenge.Eligibility(rawValue: draft.eligibility ?? "all")
        v.require(eligibility != nil, "eligibility", "unknown_eligibility", "must be all or subscribers")
        let tiePolicy = Challenge.TiePolicy(rawValue: draft.tiePolicy ?? "standard")
        v.require(tiePolicy != nil, "tie_policy", "unknown_tie_policy", "must be standard, dense or earliest")
        if let target = draft.target {
            v.require(target.isFinite && target > 0, "target", "not_positive", "must be greater than 0")
        }
        func whole(_ value: Double, _ field: String, minimum: Int64) -> Int64? {
            v.wholeNumber(value, field, code: "invalid_number", in: minimum...1_000_000_000)
        }
        var bands: [Challenge.RankBand] = []
        for (index, band) in draft.rankBands.enumerated() {
            let field = "rewards.ranks[\(index)]"
            let from = whole(band.from, "\(field).from", minimum: 1)
            let to = whole(band.to, "\(field).to", minimum: 1)
            let points = whole(band.points, "\(field).points", minimum: 0)
            guard let from, let to, let points else { continue }
            v.require(to >= from, "\(field).to", "before_from", "must be at least from")
            v.require(
                !bands.contains { Int64($0.from) <= to && from <= Int64($0.to) }, "\(field).from", "overlapping",
                "overlaps another band")
            bands.append(Challenge.RankBand(from: Int(from), to: Int(to), points: points, badge: band.badge))
        }
        var targetReward: Challenge.TargetReward?
        if let reward = draft.targetReward {
            v.require(
                draft.target != nil, "rewards.target", "no_target", "a target reward needs the challenge's target")
            if let points = whole(reward.points, "rewards.target.points", minimum: 0) {
                targetReward = .init(points: points, badge: reward.badge)
            }
        }
        let budget = whole(draft.budgetPoints, "budget_points", minimum: 0)
        let badges = Set(bands.compactMap(\.badge) + [targetReward?.badge].compactMap { $0 })
        if !badges.isEmpty {
            let known = Set(
                try await unit.all("SELECT slug FROM badges WHERE slug = ANY(\(Array(badges))::text[])") {
                    try $0.decode(String.self)
                })
            for missing in badges.subtracting(known).sorted() {
                v.require(false, "rewards", "unknown_badge", "no badge '\(missing)'")
            }
        }
        try v.check()
        guard let metric, let aggregation, let grace, let eligibility, let tiePolicy, let budget else {
            throw DomainError.inconsistent("validated challenge fields missing")
        }
        let rewards = Challenge.Rewards(ranks: bands, target: targetReward)
        let rewardsJSON = String(decoding: try JSONEncoder().encode(rewards), as: UTF8.self)
        let created = try await unit.one(
            """
            INSERT INTO challenges (id, name, description, metric, aggregation, starts_at, ends_at, grace_seconds,
                grace_period, eligibility,
                target, tie_policy, rewards, budget_points, created_by, created_at, updated_at)
            VALUES (\(unit.newID()), \(name), \(description), \(metric.rawValue), \(aggregation.rawValue),
                \(draft.startsAt), \(draft.endsAt),
                \(grace), \(gracePeriod), \(eligibility.rawValue), \(draft.target), \(tiePolicy.rawValue),
                    \(rewardsJSON)::jsonb, \(budget),
                \(unit.principal.operatorID), \(unit.now), \(unit.now))
            RETURNING \(unescaped: Challenge.columns)
            """, as: Challenge.self, else: DomainError.inconsistent("the new challenge was not returned"))
        let why = reason?.isEmpty == false ? reason : nil
        return Audited(created, event: try challengeEvent(Self.action, nil, created, detail: why))
    }
}

/// A manager publishes a draft (`challenges.publish`): its budget account is opened and funded
/// with `budget_points` from issuance, and the activity already stored inside its window is
/// scored. From then on its state follows the time. Anything but a draft is 409.
package struct PublishChallenge: AuditedOperation {
    package static let action: Action = "challenges.publish"
    package let challengeID: UUID
    package let ifMatch: String?

    package init(challengeID: UUID, ifMatch: String? = nil) {
        (self.challengeID, self.ifMatch) = (challengeID, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Challenge> {
        let before = try await Challenge.fetch(challengeID, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        guard before.status == .draft else {
            let state = before.state(at: unit.now).rawValue
            throw DomainError.invalidTransition(
                "Only a draft can be published; this challenge is \(state).", current: state)
        }
        guard before.endsAt > unit.now else {
            throw DomainError.invalid("ends_at", "in_the_past", "the challenge's window is over")
        }
        try await Ledger.openBudget(of: challengeID, in: unit)
        if before.budgetPoints > 0 {
            try await Ledger.post(
                [
                    Ledger.Transfer(
                        .challengeFunding, from: Ledger.issuance, to: challengeID, amount: before.budgetPoints,
                        reason: "budget of \(before.name)",
                        challengeID: challengeID)
                ], movement: unit.newID(), in: unit)
        }
        try await ChallengeScores.backfill(before, in: unit)
        let after = try await unit.one(
            """
            UPDATE challenges SET status = 'published', published_at = \(unit.now), version = version + 1, updated_at
                = \(unit.now)
            WHERE id = \(challengeID) RETURNING \(unescaped: Challenge.columns)
            """, as: Challenge.self, else: DomainError.notFound("Challenge \(challengeID.text)"))
        return Audited(
            after,
            event: try challengeEvent(
                Self.action, before, after, detail: "funded with \(before.budgetPoints) FitPoints"))
    }
}

func challengeEvent(_ action: Action, _ before: Challenge?, _ after: Challenge, detail: String?) throws -> AuditRecord {
    AuditRecord(
        action: action, tenantID: platformTenantID, targetType: "challenge", targetID: after.id.text, reason: detail,
        before: try before?.snapshot, after: try after.snapshot)
}
