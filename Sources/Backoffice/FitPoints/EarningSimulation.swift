import BackofficePlatform
import Foundation
import PostgresNIO

/// What draft earning rules would have paid for the activity recorded over the last `days` UTC
/// days (today included), per metric and in total, beside what the rules in force paid for the
/// same activity (`fitpoints_rules.simulate`). Nothing is changed. It counts every stored event,
/// also those of accounts that were locked (which earned nothing when they arrived).
package struct SimulateEarningRules: Query {
    package static let action: Action = "fitpoints_rules.simulate"
    package static let maximumDays = 90
    package let draft: EarningRules.Draft
    package let days: Int

    package init(_ draft: EarningRules.Draft, days: Int) { (self.draft, self.days) = (draft, days) }

    package struct Line: Sendable, Equatable {
        package var ruleID: String
        package var metric: Metric?
        package var events: Int64
        package var customers: Int64
        /// What the draft would have paid.
        package var points: Int64
        /// What the rules in force paid for the same events.
        package var currentPoints: Int64
    }

    package struct Outcome: Sendable, Equatable {
        package var since: Date
        package var until: Date
        package var lines: [Line]
        package var points: Int64 { lines.reduce(0) { $0 + $1.points } }
        package var currentPoints: Int64 { lines.reduce(0) { $0 + $1.currentPoints } }
    }

    package func read(in unit: UnitOfWork) async throws -> Outcome {
        var validation = Validation()
        validation.require(
            (1...Self.maximumDays).contains(days), "days", "out_of_range", "must be from 1 to \(Self.maximumDays)")
        try validation.check()
        let rules = try EarningRules.validated(draft)
        let since = Calendar.utc.startOfDay(for: unit.now).addingTimeInterval(-Double(days - 1) * 86_400)
        let until = unit.now

        let paid = Dictionary(
            uniqueKeysWithValues: try await unit.all(
                """
                SELECT t.rule_id, sum(t.amount)::bigint FROM fitpoints_transfers t JOIN activity_events e ON
                    e.event_id = t.source_event_id
                WHERE t.kind = 'earning' AND e.occurred_at >= \(since) AND e.occurred_at < \(until) GROUP BY t.rule_id
                """
            ) { try $0.decode((String, Int64).self) })

        var lines: [Line] = []
        for rule in rules.metrics {
            let intensities = MET.Intensity.allCases.filter { $0.rank >= (rule.minIntensity?.rank ?? 0) }.map(
                \.rawValue)
            guard
                let (events, customers, points) = try await unit.first(
                    """
                    WITH days AS (
                        SELECT customer_id, sum(value) AS units, count(*) AS events FROM activity_events
                        WHERE metric = \(rule.metric.rawValue) AND occurred_at >= \(since) AND occurred_at < \(until)
                          AND (\(rule.minIntensity == nil) OR intensity = ANY(\(intensities)::text[]))
                        GROUP BY customer_id, (occurred_at AT TIME ZONE 'UTC')::date)
                    SELECT coalesce(sum(events), 0)::bigint, count(DISTINCT customer_id),
                           coalesce(sum(LEAST(\(rule.dailyCap)::float8, floor(units * \(rule.pointsPerUnit) + 1e-9))),
                               0)::bigint
                    FROM days
                    """, { try $0.decode((Int64, Int64, Int64).self) })
            else { throw DomainError.inconsistent("the simulation returned no row") }
            lines.append(
                Line(
                    ruleID: rule.ruleID, metric: rule.metric, events: events, customers: customers, points: points,
                    currentPoints: paid[rule.ruleID] ?? 0))
        }
        for (ruleID, points) in paid.sorted(by: { $0.key < $1.key })
        where !lines.contains(where: { $0.ruleID == ruleID }) {
            lines.append(
                Line(
                    ruleID: ruleID, metric: Metric(rawValue: ruleID), events: 0, customers: 0, points: 0,
                    currentPoints: points))
        }
        return Outcome(since: since, until: until, lines: lines)
    }
}
