import BackofficePlatform
import Foundation
import PostgresNIO

/// How customers earn FitPoints: points per unit of a metric with a daily cap per customer,
/// points per badge, points per event such as a subscription renewal. Every rule has a stable
/// id (`steps`, `badge:first-5k`, `event:subscription_renewal`) that ledger entries record with
/// the rules' version.
package struct EarningRules: Sendable, Codable, Equatable {
    package struct MetricRule: Sendable, Codable, Equatable {
        package var metric: Metric
        package var pointsPerUnit: Double
        /// The most a customer earns by this rule in one UTC day.
        package var dailyCap: Int64
        /// Only workouts at least this intense earn (workout_minutes only).
        package var minIntensity: MET.Intensity?

        package var ruleID: String { metric.rawValue }

        /// Points due for a day's `units` when `paid` were already paid: never negative, never
        /// over the cap, and the same however the day's events were batched.
        func due(units: Double, paid: Int64) -> Int64 {
            // 1e-9: 0.29 × 100 is 28.999…
            let earned = min(Double(dailyCap), (units * pointsPerUnit + 1e-9).rounded(.down))
            return max(0, Int64(earned) - paid)
        }

        /// Whether `event` counts for this rule.
        func counts(_ event: ActivityEvent) -> Bool {
            guard event.metric == metric else { return false }
            guard let minIntensity else { return true }
            return (event.details.intensity?.rank ?? 0) >= minIntensity.rank
        }
    }

    package struct BadgeRule: Sendable, Codable, Equatable {
        package var badge: String
        package var points: Int64
        package var ruleID: String { "badge:\(badge)" }
    }

    /// Something that happens to a customer's account and earns points.
    package enum RewardEvent: String, Sendable, Codable, CaseIterable {
        case subscriptionStarted = "subscription_started"
        case subscriptionRenewal = "subscription_renewal"
    }

    package struct EventRule: Sendable, Codable, Equatable {
        package var event: RewardEvent
        package var points: Int64
        package var ruleID: String { "event:\(event.rawValue)" }
    }

    package var metrics: [MetricRule]
    package var badges: [BadgeRule]
    package var events: [EventRule]

    package init(metrics: [MetricRule] = [], badges: [BadgeRule] = [], events: [EventRule] = []) {
        (self.metrics, self.badges, self.events) = (metrics, badges, events)
    }

    /// The rule that pays for `metric`, if any.
    package func rule(for metric: Metric) -> MetricRule? { metrics.first { $0.metric == metric } }

    /// The largest rate, cap or award a rule may set.
    package static let maximumPoints: Double = 1_000_000

    /// Rules as a manager writes them (a file or the API), unchecked: numbers as sent, names as text.
    package struct Draft: Sendable, Codable {
        package struct Metric: Sendable, Codable {
            package var metric: String, pointsPerUnit: Double, dailyCap: Double?, minIntensity: String?
            package init(metric: String, pointsPerUnit: Double, dailyCap: Double?, minIntensity: String? = nil) {
                (self.metric, self.pointsPerUnit, self.dailyCap, self.minIntensity) = (
                    metric, pointsPerUnit, dailyCap, minIntensity
                )
            }
        }
        package struct Award: Sendable, Codable {
            package var name: String, points: Double
            package init(name: String, points: Double) { (self.name, self.points) = (name, points) }
        }
        package var metrics: [Metric]
        package var badges: [Award]
        package var events: [Award]
        package init(metrics: [Metric] = [], badges: [Award] = [], events: [Award] = []) {
            (self.metrics, self.badges, self.events) = (metrics, badges, events)
        }
    }

    /// The rules `draft` describes.
    /// - Throws: `DomainError.invalid` naming each bad field (`metrics[0].daily_cap`): an unknown
    ///   metric, badge name or event, a rate that is not positive, a cap or award that is not a
    ///   whole number from 1 to 1,000,000, a metric with two rules.
    package static func validated(_ draft: Draft) throws -> EarningRules {
        var validation = Validation()
        var rules = EarningRules()
        for (index, draft) in draft.metrics.enumerated() {
            let field = "metrics[\(index)]"
            let metric = Backoffice.Metric(rawValue: draft.metric)
            validation.require(
                metric != nil, "\(field).metric", "unknown_metric",
                "must be one of \(Backoffice.Metric.allCases.map(\.rawValue).joined(separator: ", "))")
            let rate = draft.pointsPerUnit
            validation.require(
                rate.isFinite && rate > 0, "\(field).points_per_unit", "not_positive", "must be greater than 0")
            validation.require(
                !(rate > maximumPoints), "\(field).points_per_unit", "out_of_range", "must be at most 1,000,000")
            let cap = validation.wholeNumber(
                draft.dailyCap, "\(field).daily_cap", code: "invalid_cap", in: 1...Int64(maximumPoints))
            var intensity: MET.Intensity?
            if let text = draft.minIntensity {
                intensity = MET.Intensity(rawValue: text)
                validation.require(
                    intensity != nil, "\(field).min_intensity", "unknown_intensity",
                    "must be light, moderate or vigorous")
                validation.require(
                    metric == .workoutMinutes, "\(field).min_intensity", "not_allowed",
                    "applies to workout_minutes only")
            }
            if let metric, rules.rule(for: metric) != nil {
                validation.require(false, "\(field).metric", "duplicate", "\(metric.rawValue) already has a rule")
            }
            if let metric, let cap, rate.isFinite, rate > 0, rate <= maximumPoints {
                rules.metrics.append(
                    MetricRule(metric: metric, pointsPerUnit: rate, dailyCap: cap, minIntensity: intensity))
            }
        }
        for (index, draft) in draft.badges.enumerated() {
            let field = "badges[\(index)]"
            let slugOK = Validation.isSlug(draft.name)
            validation.require(
                slugOK, "\(field).badge", "invalid_badge", "must be a badge's slug (lower-case letters, digits, dashes)"
            )
            validation.require(
                !rules.badges.contains { $0.badge == draft.name }, "\(field).badge", "duplicate", "already has a rule")
            if let points = validation.wholeNumber(
                draft.points, "\(field).points", code: "invalid_points", in: 1...Int64(maximumPoints)), slugOK
            {
                rules.badges.append(BadgeRule(badge: draft.name, points: points))
            }
        }
        for (index, draft) in draft.events.enumerated() {
            let field = "events[\(index)]"
            let event = RewardEvent(rawValue: draft.name)
            validation.require(
                event != nil, "\(field).event", "unknown_event",
                "must be one of \(RewardEvent.allCases.map(\.rawValue).joined(separator: ", "))")
            validation.require(
                !rules.events.contains { $0.event == event }, "\(field).event", "duplicate", "already has a rule")
            if let points = validation.wholeNumber(
                draft.points, "\(field).points", code: "invalid_points", in: 1...Int64(maximumPoints)), let event
            {
                rules.events.append(EventRule(event: event, points: points))
            }
        }
        try validation.check()
        return rules
    }

    static let storage: (encoder: JSONEncoder, decoder: JSONDecoder) = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return (encoder, decoder)
    }()

    /// The JSON the rules are stored and audited as.
    /// - Throws: `inconsistent` when they cannot be encoded (never an empty `{}` stored in their place).
    var json: String {
        get throws {
            do { return String(decoding: try Self.storage.encoder.encode(self), as: UTF8.self) } catch {
                throw DomainError.inconsistent("the earning rules cannot be encoded as JSON: \(error)")
            }
        }
    }
}

extension MET.Intensity {
    /// Light < moderate < vigorous.
    var rank: Int {
        switch self {
        case .light: 1
        case .moderate: 2
        case .vigorous: 3
        }
    }
}

/// One version of the earning rules.
package struct EarningRuleSet: Sendable, Equatable {
    package var version: Int
    package var rules: EarningRules
    package var createdAt: Date
}

extension EarningRuleSet: RowDecodable {
    package static let columns = "version, rules::text, created_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((Int, String, Date).self)
        let rules = try EarningRules.storage.decoder.decode(EarningRules.self, from: Data(c.1.utf8))
        self.init(version: c.0, rules: rules, createdAt: c.2)
    }

    /// The rules in force, nil before any were set.
    static func current(in unit: UnitOfWork) async throws -> EarningRuleSet? {
        try await unit.first(
            "SELECT \(unescaped: columns) FROM fitpoints_rule_sets ORDER BY version DESC LIMIT 1",
            as: EarningRuleSet.self)
    }
}

/// The earning rules in force (`fitpoints_rules.read`).
/// - Throws: `notFound` before any rules were set.
package struct CurrentEarningRules: Query {
    package static let action: Action = "fitpoints_rules.read"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> EarningRuleSet {
        guard let current = try await EarningRuleSet.current(in: unit) else {
            throw DomainError.notFound("Earning rules (none set yet)")
        }
        return current
    }
}
