import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird
import Synchronization

/// A challenge as the list and its page show it.
struct ChallengeView {
    let id: String, name: String, description: String, metric: String, aggregation: String, state: String
    let startsAt: ShownTime, endsAt: ShownTime, frozenAt: ShownTime, gracePeriod: String, eligibility: String,
        tiePolicy: String
    let target: String?, bands: [String], targetReward: String?, budget: String

    init(_ challenge: Challenge, now: Date) {
        id = challenge.id.text
        name = challenge.name
        description = challenge.description
        metric = challenge.metric.rawValue.replacingOccurrences(of: "_", with: " ")
        aggregation = challenge.aggregation.rawValue
        state = challenge.state(at: now).rawValue
        startsAt = ConsoleTime.text(challenge.startsAt)
        endsAt = ConsoleTime.text(challenge.endsAt)
        frozenAt = ConsoleTime.text(challenge.frozenAt)
        gracePeriod = Durations.exact(seconds: Int(challenge.graceSeconds), none: "no grace period")
        eligibility = challenge.eligibility.rawValue
        tiePolicy = challenge.tiePolicy.rawValue
        target = challenge.target.map { Figures.exact($0) }
        bands = challenge.rewards.ranks.map { band in
            let ranks = band.from == band.to ? "rank \(band.from)" : "ranks \(band.from)–\(band.to)"
            return "\(ranks): \(Money.fitPoints(band.points))" + (band.badge.map { " and the \($0) badge" } ?? "")
        }
        targetReward = challenge.rewards.target.map {
            "\(Money.fitPoints($0.points))" + ($0.badge.map { " and the \($0) badge" } ?? "")
        }
        budget = Money.fitPoints(challenge.budgetPoints)
    }
}

/// A leaderboard row, in the page and in the live stream (JSON the page's script writes as text):
/// the customer by display name (masked as the role requires), linking to the account by id.
struct LeaderboardRowView: Encodable {
    let rank: Int, customer: String, name: String, score: String, events: Int, reached: Bool

    init(_ entry: LeaderboardEntry) {
        rank = entry.rank
        customer = entry.standing.customerID.text
        name = CustomerNames.shown(entry.displayName)
        score = Figures.exact(entry.standing.score)
        events = entry.events
        reached = entry.reachedTarget
    }

    static func json(_ entries: [LeaderboardEntry]) throws -> String {
        String(decoding: try JSONEncoder().encode(entries.map(LeaderboardRowView.init)), as: UTF8.self)
    }
}

/// The create form's fields, read into `CreateChallenge.Draft`: times in the operator's zone, the
/// grace period in whole hours, rank bands one per line (`1-3 500 gold-medal`: ranks, FitPoints,
/// an optional badge).
struct ChallengeForm {
    let form: ConsoleForm

    init(_ form: ConsoleForm) { self.form = form }

    func draft() throws -> CreateChallenge.Draft {
        var issues: [FieldIssue] = []
        func time(_ field: String) -> Date? {
            guard form.text(field) != nil else {
                issues.append(FieldIssue(field: field, code: "required", message: "is required"))
                return nil
            }
            return form.time(field, issues: &issues)
        }
        func number(_ field: String) -> Double? {
            guard let text = form.text(field) else { return nil }
            guard let value = Double(text), value.isFinite else {
                issues.append(FieldIssue(field: field, code: "invalid_number", message: "must be a number"))
                return nil
            }
            return value
        }
        let (startsAt, endsAt) = (time("starts_at"), time("ends_at"))
        let graceHours = form.text("grace_hours")
        if let graceHours, graceHours.count > 4 || !graceHours.allSatisfy(\.isASCIIDigit) {
            issues.append(
                FieldIssue(
                    field: "grace_hours", code: "invalid_hours", message: "must be a whole number of hours (0 for none)"
                ))
        }
        var bands: [(from: Double, to: Double, points: Double, badge: String?)] = []
        for line in (form["rank_bands"] ?? "").split(whereSeparator: \.isNewline) where !line.allSatisfy(\.isWhitespace)
        {
            let parts = line.split(whereSeparator: \.isWhitespace)
            let ranks = parts.first?.split(separator: "-", maxSplits: 1).compactMap { Double($0) } ?? []
            guard parts.count >= 2, parts.count <= 3, !ranks.isEmpty, let points = Double(parts[1]) else {
                issues.append(
                    FieldIssue(
                        field: "rank_bands", code: "invalid_band",
                        message: "'\(line)' is not ranks, points and a badge (1-3 500 gold-medal)"))
                continue
            }
            bands.append((ranks[0], ranks.last ?? ranks[0], points, parts.count == 3 ? String(parts[2]) : nil))
        }
        let targetPoints = number("target_points")
        let budget = number("budget_points")
        let target = number("target")
        if budget == nil, !issues.contains(where: { $0.field == "budget_points" }) {
            issues.append(
                FieldIssue(field: "budget_points", code: "required", message: "is required (0 for no rewards)"))
        }
        guard issues.isEmpty, let startsAt, let endsAt, let budget else { throw DomainError.invalid(issues) }
        return CreateChallenge.Draft(
            name: form["name"] ?? "", description: form.text("description"), metric: form["metric"] ?? "",
            aggregation: form["aggregation"] ?? "",
            startsAt: startsAt, endsAt: endsAt, gracePeriod: graceHours.map { "PT\($0)H" },
            eligibility: form["eligibility"], target: target,
            tiePolicy: form["tie_policy"], rankBands: bands,
            targetReward: targetPoints.map { ($0, form.text("target_badge")) },
            budgetPoints: budget, reason: form.text("reason"))
    }

    /// The use case's reward fields shown next to the form's.
    static func issues(_ issues: [FieldIssue]) -> [FieldIssue] {
        issues.map { issue in
            if issue.field == "grace_period" {
                return FieldIssue(
                    field: "grace_hours", code: issue.code, message: "must be at most 720 hours (30 days)")
            }
            let field =
                issue.field.hasPrefix("rewards.target")
                ? "target_points" : issue.field.hasPrefix("rewards") ? "rank_bands" : issue.field
            return FieldIssue(field: field, code: issue.code, message: issue.message)
        }
    }
}
