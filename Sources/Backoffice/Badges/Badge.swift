import Foundation
import PostgresNIO
import BackofficePlatform

/// A badge managers define. With a `metric` and `threshold` it is awarded by a rule: to whoever
/// reports one event of that metric reaching the threshold (a 5,000 m run). Challenges award
/// badges too. A customer holds a badge at most once; the earning rules may pay points for it.
package struct Badge: Sendable, Equatable {
    package var slug: String
    package var name: String
    package var description: String
    package var metric: Metric?
    package var threshold: Double?
    package var createdAt: Date
}

extension Badge: RowDecodable {
    package static let columns = "slug, name, description, metric, threshold, created_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((String, String, String, String?, Double?, Date).self)
        self.init(
            slug: c.0, name: c.1, description: c.2, metric: try c.3.map { try Metric(known: $0) }, threshold: c.4,
            createdAt: c.5)
    }
}

/// A badge a customer holds: how it was earned and when.
package struct BadgeAward: Sendable, Equatable {
    package var badge: Badge
    package var source: String
    package var awardedAt: Date
}

extension BadgeAward: RowDecodable {
    package static let columns =
        "b.slug, b.name, b.description, b.metric, b.threshold, b.created_at, a.source, a.awarded_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((String, String, String, String?, Double?, Date, String, Date).self)
        let badge = Badge(
            slug: c.0, name: c.1, description: c.2, metric: try c.3.map { try Metric(known: $0) }, threshold: c.4,
            createdAt: c.5)
        self.init(badge: badge, source: c.6, awardedAt: c.7)
    }
}

/// A manager defines a badge (`badges.create`). A slug is taken once (409 `already_exists`).
package struct CreateBadge: AuditedOperation {
    package static let action: Action = "badges.create"
    package let slug: String
    package let name: String
    package let description: String
    package let metric: String?
    package let threshold: Double?

    package init(slug: String, name: String, description: String?, metric: String?, threshold: Double?) {
        self.slug = slug.trimmingCharacters(in: .whitespaces)
        self.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        self.description = (description ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        (self.metric, self.threshold) = (metric, threshold)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Badge> {
        var validation = Validation()
        validation.require(
            Validation.isSlug(slug), "slug", "invalid_slug",
            "must be 2–63 lower-case letters, digits or dashes")
        validation.text(name, "name", max: 100)
        validation.text(description, "description", max: 1000, required: false)
        let known = metric.flatMap(Metric.init(rawValue:))
        validation.require(
            metric == nil || known != nil, "metric", "unknown_metric",
            "must be one of \(Metric.allCases.map(\.rawValue).joined(separator: ", "))")
        validation.require(
            (metric == nil) == (threshold == nil), "threshold", "required",
            "a badge awarded by a rule needs both metric and threshold")
        if let threshold {
            validation.require(
                threshold.isFinite && threshold > 0, "threshold", "not_positive", "must be greater than 0")
        }
        try validation.check()
        let badge = try await unit.one(
            """
            INSERT INTO badges (slug, name, description, metric, threshold, created_by, created_at)
            VALUES (\(slug), \(name), \(description), \(known?.rawValue), \(threshold), \(unit.principal.operatorID),
                \(unit.now))
            RETURNING \(unescaped: Badge.columns)
            """, as: Badge.self, else: DomainError.inconsistent("the new badge was not returned"))
        struct Snapshot: Encodable { let slug: String, name: String, metric: String?, threshold: Double? }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "badge", targetID: slug, reason: nil,
            before: nil,
            after: try AuditRecord.json(Snapshot(slug: slug, name: name, metric: known?.rawValue, threshold: threshold))
        )
        return Audited(badge, event: event)
    }
}

/// Every badge, by slug (`badges.list`).
package struct ListBadges: Query {
    package static let action: Action = "badges.list"
    package init() {}
    package func read(in unit: UnitOfWork) async throws -> [Badge] {
        try await unit.all("SELECT \(unescaped: Badge.columns) FROM badges ORDER BY slug")
    }
}

/// The badges a customer holds, newest first (`badges.read`).
package struct CustomerBadges: Query {
    package static let action: Action = "badges.read"
    package let customerID: UUID
    package init(customerID: UUID) { self.customerID = customerID }

    package func read(in unit: UnitOfWork) async throws -> [BadgeAward] {
        try await Customer.requireExisting(customerID, in: unit)
        return try await unit.all(
            """
            SELECT \(unescaped: BadgeAward.columns) FROM badge_awards a JOIN badges b ON b.slug = a.badge
            WHERE a.customer_id = \(customerID) ORDER BY a.awarded_at DESC, b.slug
            """)
    }
}

/// Awarding badges, from challenges and rules.
enum BadgeAwards {
    /// Awards `badge` to `customers` who do not hold it yet, and pays the points `ruleSet` (the
    /// earning rules in force, read once by the caller) gives for it (once per customer and
    /// badge). Returns the customers newly awarded.
    static func award(
        _ badge: String, to customers: [UUID], source: String, paidBy ruleSet: EarningRuleSet?, in unit: UnitOfWork
    ) async throws
        -> [UUID]
    {
        guard !customers.isEmpty else { return [] }
        let customers = customers.sorted { $0.orderKey < $1.orderKey }  // one lock order for concurrent awards
        let awarded = try await unit.all(
            """
            INSERT INTO badge_awards (customer_id, badge, source, awarded_at)
            SELECT c, \(badge), \(source), \(unit.now) FROM unnest(\(customers)::uuid[]) AS c
            ON CONFLICT DO NOTHING RETURNING customer_id
            """
        ) { try $0.decode(UUID.self) }
        guard !awarded.isEmpty, let ruleSet, let rule = ruleSet.rules.badges.first(where: { $0.badge == badge })
        else { return awarded }
        try await Ledger.post(
            awarded.map {
                Ledger.Transfer(
                    .earning, from: Ledger.issuance, to: Ledger.wallet($0), amount: rule.points, ruleID: rule.ruleID,
                    ruleVersion: ruleSet.version,
                    sourceEventID: "badge:\(badge):\($0.text)")
            }, movement: unit.newID(), in: unit)
        return awarded
    }

    /// Awards the badges whose rule `events` meet (one event of the badge's metric reaching its
    /// threshold); returns how many awards were made.
    @discardableResult
    static func awardByRules(for events: [ActivityEvent], paidBy ruleSet: EarningRuleSet?, in unit: UnitOfWork)
        async throws -> Int
    {
        let metrics = Array(Set(events.map(\.metric.rawValue)))
        guard !metrics.isEmpty else { return 0 }
        let badges = try await unit.all(
            "SELECT \(unescaped: Badge.columns) FROM badges WHERE metric = ANY(\(metrics)::text[])", as: Badge.self)
        var count = 0
        for badge in badges {
            guard let metric = badge.metric, let threshold = badge.threshold else { continue }
            let earners = Set(events.filter { $0.metric == metric && $0.value >= threshold }.map(\.customerID))
            count += try await award(
                badge.slug, to: Array(earners), source: "rule:\(metric.rawValue)>=\(threshold)", paidBy: ruleSet,
                in: unit
            ).count
        }
        return count
    }
}
