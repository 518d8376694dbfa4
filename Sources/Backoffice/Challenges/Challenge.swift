import BackofficePlatform
import Foundation
import PostgresNIO

/// A challenge: customers ranked by an aggregation of one metric over a window, whose leaders
/// (and whoever reaches the target) are paid FitPoints from the challenge's own budget.
///
/// Its state follows from the time once published (no job moves it): scheduled before
/// `startsAt`, active until `endsAt`, then closed. Activity counts by when it happened: events
/// dated inside the window still count until `frozenAt` (`endsAt` + the grace period); then the
/// board is frozen and the challenge can be settled, once.
package struct Challenge: Sendable, Equatable {
    package enum Aggregation: String, Sendable, CaseIterable { case sum, max, count }
    package enum Eligibility: String, Sendable, CaseIterable { case all, subscribers }
    /// How tied scores rank: `standard` competition ranking ("1224"), `dense` ("1223"), or
    /// `earliest`: ties are broken by who reached the score first, by activity time.
    package enum TiePolicy: String, Sendable, CaseIterable { case standard, dense, earliest }
    package enum Status: String, Sendable { case draft, published, settled }
    package enum State: String, Sendable { case draft, scheduled, active, closed, settled }

    /// FitPoints (and optionally a badge) for every rank from `from` to `to`; tied customers
    /// share the band of their rank.
    package struct RankBand: Sendable, Codable, Equatable {
        package var from: Int
        package var to: Int
        package var points: Int64
        package var badge: String?
    }

    /// FitPoints (and optionally a badge) for everyone whose score reaches the target.
    package struct TargetReward: Sendable, Codable, Equatable {
        package var points: Int64
        package var badge: String?
    }

    package struct Rewards: Sendable, Codable, Equatable {
        package var ranks: [RankBand]
        package var target: TargetReward?
    }

    package var id: UUID
    package var name: String
    package var description: String
    package var metric: Metric
    package var aggregation: Aggregation
    package var startsAt: Date
    package var endsAt: Date
    /// ISO 8601, as written (`P2D`, `PT36H`).
    package var gracePeriod: String
    package var graceSeconds: Int64
    package var eligibility: Eligibility
    package var target: Double?
    package var tiePolicy: TiePolicy
    package var rewards: Rewards
    package var budgetPoints: Int64
    package var status: Status
    package var publishedAt: Date?
    package var settledAt: Date?
    package var createdAt: Date
    package var updatedAt: Date
    package var version: Int64

    /// When the board freezes: the end of the window plus the grace period.
    package var frozenAt: Date { endsAt.addingTimeInterval(Double(graceSeconds)) }

    package func state(at now: Date) -> State {
        switch status {
        case .draft: .draft
        case .settled: .settled
        case .published: now < startsAt ? .scheduled : now < endsAt ? .active : .closed
        }
    }

    /// What the audit log records of a challenge.
    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let name: String, metric: String, aggregation: String, starts_at: Date, ends_at: Date,
                    grace_period: String, status: String
                let budget_points: Int64, version: Int64
            }
            return try AuditRecord.json(
                Snapshot(
                    name: name, metric: metric.rawValue, aggregation: aggregation.rawValue, starts_at: startsAt,
                    ends_at: endsAt,
                    grace_period: gracePeriod,
                    status: status.rawValue, budget_points: budgetPoints, version: version))
        }
    }
}

extension Challenge: RowDecodable {
    package static let columns = """
        id, name, description, metric, aggregation, starts_at, ends_at, grace_period, grace_seconds, eligibility,
            target, tie_policy,
        rewards::text, budget_points, status, published_at, settled_at, created_at, updated_at, version
        """

    package init(row: PostgresRow) throws {
        let d = try row.decode(
            (
                UUID, String, String, String, String, Date, Date, String, Int64, String, Double?, String, String, Int64,
                String, Date?, Date?, Date,
                Date, Int64
            )
            .self)
        self.init(
            id: d.0, name: d.1, description: d.2, metric: try .init(known: d.3), aggregation: try .init(known: d.4),
            startsAt: d.5, endsAt: d.6,
            gracePeriod: d.7, graceSeconds: d.8, eligibility: try .init(known: d.9), target: d.10,
            tiePolicy: try .init(known: d.11),
            rewards: try JSONDecoder().decode(Rewards.self, from: Data(d.12.utf8)), budgetPoints: d.13,
            status: try .init(known: d.14),
            publishedAt: d.15, settledAt: d.16, createdAt: d.17, updatedAt: d.18, version: d.19)
    }
}

/// ISO 8601 durations of days and times (`P2D`, `PT36H`, `P1DT12H30M`, `P1W`): years and months
/// have no fixed length and are refused.
package enum ISODuration {
    package static func seconds(_ text: String) -> Int64? {
        guard
            let match = text.wholeMatch(
                of: /P(?:(\d{1,4})W)?(?:(\d{1,5})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,7})M)?(?:(\d{1,8})S)?)?/)
        else { return nil }
        let parts = [match.1, match.2, match.3, match.4, match.5]
        guard parts.contains(where: { $0 != nil }), !text.hasSuffix("T") else { return nil }
        let weights: [Int64] = [604_800, 86_400, 3_600, 60, 1]
        return zip(parts, weights).reduce(Int64(0)) { total, pair in
            total + (pair.0.flatMap { Int64($0) } ?? 0) * pair.1
        }
    }
}

extension Challenge: NewestFirst {
    package var listedAt: Date { createdAt }
}
