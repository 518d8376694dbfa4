import BackofficeConsole
import BackofficePlatform
import Foundation

/// Customers by status at the end of each day of a range (UTC), from the daily changes the
/// database keeps (`customer_daily_statuses`), in one statement: the counts before the range and
/// each day's changes, added up here.
package struct CustomersOverTime: Query {
    package static let action: Action = "accounts.list"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    /// For each day of the range, in order: the number of customers in each status at its end.
    package func read(in unit: UnitOfWork) async throws -> [[AccountStatus: Int]] {
        let rows = try await unit.all(
            """
            SELECT CASE WHEN day < \(range.from.description)::date THEN -1 ELSE (day - DATE '1970-01-01') END::integer,
                status, sum(delta)::bigint
            FROM customer_daily_statuses WHERE day <= \(range.through.description)::date GROUP BY 1, 2
            """,
            { try $0.decode((Int32, String, Int64).self) })
        let changes = DailyChanges(
            try rows.map { (day: $0.0, row: (status: try AccountStatus(known: $0.1), delta: Int($0.2))) })
        return changes.days(of: range) { before in
            before.reduce(into: [:]) { $0[$1.status, default: 0] += $1.delta }
        } _: { running, today in
            for change in today { running[change.status, default: 0] += change.delta }
            return running
        }
    }
}

/// Locks placed and appeals filed on each day of a range, and the appeals open now with the
/// oldest one's filing time; one statement.
package struct LocksAndAppeals: Query {
    package static let action: Action = "appeals.list"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    package struct Figures: Sendable, Equatable {
        package var locks: [UTCDay: Int] = [:]
        package var appeals: [UTCDay: Int] = [:]
        package var openAppeals = 0
        package var oldestOpenAppeal: Date?
    }

    package func read(in unit: UnitOfWork) async throws -> Figures {
        let (start, end) = (range.from.start, range.through.advanced(by: 1).start)
        let rows = try await unit.all(
            """
            SELECT 'lock', ((locked_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01')::integer, count(*)::bigint,
                NULL::timestamptz FROM account_locks WHERE locked_at >= \(start) AND locked_at < \(end) GROUP BY 2
            UNION ALL SELECT 'appeal', ((created_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01')::integer,
                count(*)::bigint, NULL FROM appeals WHERE created_at >= \(start) AND created_at < \(end) GROUP BY 2
            UNION ALL SELECT 'open', 0, count(*)::bigint, min(created_at) FROM appeals WHERE status = 'open'
            """,
            { try $0.decode((String, Int32, Int64, Date?).self) })
        var figures = Figures()
        for (kind, day, count, oldest) in rows {
            switch kind {
            case "lock": figures.locks[UTCDay(number: Int(day))] = Int(count)
            case "appeal": figures.appeals[UTCDay(number: Int(day))] = Int(count)
            default: (figures.openAppeals, figures.oldestOpenAppeal) = (Int(count), oldest)
            }
        }
        return figures
    }
}

/// FitPoints moved on each day of a range (UTC) and the issuance account's balance at the end of
/// each, from the daily flows the ledger's inserts keep (`fitpoints_daily_flows`), in one statement.
/// Issued is what left the issuance account (net of what returned to it); redeemed is spent in
/// shops less refunded; expired is what expiry took from wallets.
package struct FitPointsFlows: Query {
    package static let action: Action = "fitpoints.read"
    let range: ReportRange

    package init(range: ReportRange) { self.range = range }

    package struct Day: Sendable, Equatable {
        package var issued: Int64 = 0
        package var redeemed: Int64 = 0
        package var expired: Int64 = 0
        package var issuanceBalance: Int64 = 0
    }

    package func read(in unit: UnitOfWork) async throws -> [Day] {
        let rows = try await unit.all(
            """
            SELECT CASE WHEN day < \(range.from.description)::date THEN -1 ELSE (day - DATE '1970-01-01') END::integer,
                kind, sum(points)::bigint, sum(issuance_change)::bigint
            FROM fitpoints_daily_flows WHERE day <= \(range.through.description)::date GROUP BY 1, 2
            """,
            { try $0.decode((Int32, String, Int64, Int64).self) })
        let changes = DailyChanges(rows.map { (day: $0.0, row: (kind: $0.1, points: $0.2, issuance: $0.3)) })
        return changes.days(of: range) { before in
            before.reduce(Int64(0)) { $0 + $1.issuance }
        } _: { balance, today in
            var figures = Day()
            for change in today {
                figures.issued -= change.issuance
                balance += change.issuance
                switch change.kind {
                case "redemption": figures.redeemed += change.points
                case "refund": figures.redeemed -= change.points
                case "expiry": figures.expired += change.points
                default: break
                }
            }
            figures.issuanceBalance = balance
            return figures
        }
    }
}

/// The challenges running now (published, started, not ended), soonest to end first, with how
/// many customers have a score and how many reached the target; at most 10.
package struct RunningChallenges: Query {
    package static let action: Action = "challenges.list"

    package init() {}

    package struct Row: Sendable, Equatable {
        package let id: UUID
        package let name: String
        package let endsAt: Date
        package let participants: Int
        package let reachedTarget: Int?
    }

    package func read(in unit: UnitOfWork) async throws -> [Row] {
        try await unit.all(
            """
            SELECT c.id, c.name, c.ends_at,
                (SELECT count(*) FROM challenge_scores s WHERE s.challenge_id = c.id)::bigint,
                CASE WHEN c.target IS NULL THEN NULL ELSE (SELECT count(*) FROM challenge_scores s
                    WHERE s.challenge_id = c.id AND s.score >= c.target) END::bigint
            FROM challenges c WHERE c.status = 'published' AND c.starts_at <= \(unit.now) AND c.ends_at > \(unit.now)
            ORDER BY c.ends_at, c.id LIMIT 10
            """,
            {
                let (id, name, ends, participants, reached) = try $0.decode((UUID, String, Date, Int64, Int64?).self)
                return Row(
                    id: id, name: name, endsAt: ends, participants: Int(participants),
                    reachedTarget: reached.map(Int.init))
            })
    }
}

/// Shop applications waiting for a decision: how many, and when the oldest was submitted.
package struct WaitingShopApplications: Query {
    package static let action: Action = "shop_applications.list"

    package init() {}

    package func read(in unit: UnitOfWork) async throws -> (count: Int, oldest: Date?) {
        try await unit.first(
            "SELECT count(*)::bigint, min(submitted_at) FROM shop_applications WHERE status = 'pending'",
            { row in
                let (count, oldest) = try row.decode((Int64, Date?).self)
                return (Int(count), oldest)
            }) ?? (0, nil)
    }
}
