import BackofficePlatform
import Foundation
import PostgresNIO

/// Challenge scores, kept incrementally (`challenge_scores`): ingestion adds each batch's events
/// to the scores of the published challenges whose window holds them and whose board is not
/// frozen, so a leaderboard reads scores and never aggregates raw events.
///
/// A score's `achieved_at` is when it was reached by activity time: the latest counted event for
/// `sum` and `count`, the earliest event with the best value for `max`.
enum ChallengeScores {
    /// Adds `events` to the open challenges' scores; returns how many scores changed.
    @discardableResult
    static func record(_ events: [ActivityEvent], in unit: UnitOfWork) async throws -> Int {
        guard let earliest = events.map(\.occurredAt).min(), let latest = events.map(\.occurredAt).max() else {
            return 0
        }
        let metrics = Array(Set(events.map(\.metric.rawValue)))
        let open = try await unit.all(
            """
            SELECT \(unescaped: Challenge.columns) FROM challenges
            WHERE status = 'published' AND metric = ANY(\(metrics)::text[]) AND starts_at <= \(latest) AND ends_at >
                \(earliest)
              AND ends_at + grace_seconds * interval '1 second' > \(unit.now)
            ORDER BY id
            """, as: Challenge.self)
        var changed = 0
        for challenge in open {
            let counted = events.filter {
                $0.metric == challenge.metric && $0.occurredAt >= challenge.startsAt && $0.occurredAt < challenge.endsAt
            }
            changed += try await add(counted, to: challenge, in: unit)
        }
        return changed
    }

    /// One batch's contribution per customer: (score, events, achieved_at).
    static func contributions(_ events: [ActivityEvent], _ aggregation: Challenge.Aggregation) -> [(
        UUID, Double, Int, Date
    )] {
        var byCustomer: [UUID: (score: Double, events: Int, achievedAt: Date)] = [:]
        for event in events {
            let value = aggregation == .count ? 1 : event.score
            guard var current = byCustomer[event.customerID] else {
                byCustomer[event.customerID] = (value, 1, event.occurredAt)
                continue
            }
            current.events += 1
            switch aggregation {
            case .sum, .count:
                current.score += value
                current.achievedAt = max(current.achievedAt, event.occurredAt)
            case .max:
                if value > current.score {
                    (current.score, current.achievedAt) = (value, event.occurredAt)
                } else if value == current.score {
                    current.achievedAt = min(current.achievedAt, event.occurredAt)
                }
            }
            byCustomer[event.customerID] = current
        }
        // In id order, the order every transaction locks score rows in (no deadlock between batches).
        return byCustomer.sorted { $0.key.orderKey < $1.key.orderKey }.map {
            ($0.key, $0.value.score, $0.value.events, $0.value.achievedAt)
        }
    }

    private static func add(_ events: [ActivityEvent], to challenge: Challenge, in unit: UnitOfWork) async throws -> Int
    {
        let rows = contributions(events, challenge.aggregation)
        guard !rows.isEmpty else { return 0 }
        let merge =
            challenge.aggregation == .max
            ? """
            score = greatest(s.score, excluded.score), events = s.events + excluded.events,
            achieved_at = CASE WHEN excluded.score > s.score THEN excluded.achieved_at
                               WHEN excluded.score = s.score THEN least(s.achieved_at, excluded.achieved_at)
                                   ELSE s.achieved_at END
            """
            : """
            score = s.score + excluded.score, events = s.events + excluded.events, achieved_at = \
            greatest(s.achieved_at, excluded.achieved_at)
            """
        try await unit.execute(
            """
            INSERT INTO challenge_scores AS s (challenge_id, customer_id, score, events, achieved_at)
            SELECT \(challenge.id), * FROM unnest(\(rows.map(\.0))::uuid[], \(rows.map(\.1))::float8[],
                \(rows.map { Int32($0.2) })::int[],
                \(rows.map(\.3))::timestamptz[])
            ON CONFLICT (challenge_id, customer_id) DO UPDATE SET \(unescaped: merge)
            """)
        return rows.count
    }

    /// Scores the activity already stored inside `challenge`'s window (at publication).
    static func backfill(_ challenge: Challenge, in unit: UnitOfWork) async throws {
        let value = challenge.aggregation == .count ? "1::float8" : "score"
        let best = challenge.aggregation == .max ? "max(v) OVER w" : "sum(v) OVER w"
        let achieved = challenge.aggregation == .max ? "min(occurred_at) FILTER (WHERE v = best)" : "max(occurred_at)"
        try await unit.execute(
            """
            INSERT INTO challenge_scores (challenge_id, customer_id, score, events, achieved_at)
            SELECT \(challenge.id), customer_id, best, n, \(unescaped: achieved)
            FROM (SELECT customer_id, occurred_at, v, \(unescaped: best) AS best, count(*) OVER w AS n
                  FROM (SELECT customer_id, occurred_at, \(unescaped: value) AS v FROM activity_events
                        WHERE metric = \(challenge.metric.rawValue) AND occurred_at >= \(challenge.startsAt) AND
                            occurred_at < \(challenge.endsAt)) raw
                  WINDOW w AS (PARTITION BY customer_id)) e
            GROUP BY customer_id, best, n
            ON CONFLICT (challenge_id, customer_id) DO NOTHING
            """)
    }
}
