import BackofficePlatform
import Foundation
import PostgresNIO

/// Exercise or nutrition advice a backend manager publishes for the app: Markdown made inert as
/// articles are, shown between its validity dates to the customers its audience rule selects.
package struct Recommendation: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable { case exercise, nutrition }
    /// What is stored: a draft until published, retracted for good.
    package enum Status: String, Sendable, CaseIterable { case draft, published, retracted }

    package var id: UUID
    package var kind: Kind
    package var title: String
    /// Markdown.
    package var body: String
    /// The body rendered and sanitised.
    package var html: String
    package var audience: Audience
    /// The pieces of content it features, `kind:id` in order (the catalogs' featured lists).
    package var featured: [String]
    package var validFrom: Date?
    package var validUntil: Date?
    package var status: Status
    package var publishedAt: Date?
    package var retractedAt: Date?
    package var retractReason: String?
    package var createdBy: UUID
    package var createdAt: Date
    package var updatedBy: UUID
    package var updatedAt: Date
    package var version: Int64

    /// Whom a recommendation is for. Every part is optional and the parts combine with AND; an
    /// empty rule selects every customer. Besides the subscription state, the parts drawn from the
    /// customer's health profile (age band, sex, weight goal, activity level) select only customers
    /// with a profile whose values match; the database matches them (`health_audience_match`), so
    /// no value leaves it.
    package struct Audience: Sendable, Equatable {
        /// The subscription states selected (empty: any).
        package var subscriptions: Set<Subscription>
        package var ageBands: Set<AgeBand> = []
        package var sexes: Set<HealthValues.Sex> = []
        package var weightGoals: Set<HealthValues.WeightGoal> = []
        package var activityLevels: Set<HealthValues.ActivityLevel> = []

        package init(subscriptions: Set<Subscription> = []) { self.subscriptions = subscriptions }

        /// Whether a part of the rule reads the health profile.
        package var usesHealth: Bool {
            !ageBands.isEmpty || !sexes.isEmpty || !weightGoals.isEmpty || !activityLevels.isEmpty
        }

        /// Whether the rule selects `customer`, whose profile's values are `profile` (nil: none), at
        /// `now` (the SQL's rule, stated in Swift for the tests to compare with).
        package func selects(_ customer: Customer, profile: HealthValues? = nil, at now: Date) -> Bool {
            guard subscriptions.isEmpty || subscriptions.contains(customer.subscription) else { return false }
            guard usesHealth else { return true }
            guard let profile else { return false }
            return (ageBands.isEmpty || ageBands.contains(AgeBand(age: profile.age(at: now))))
                && (sexes.isEmpty || sexes.contains(profile.sex))
                && (weightGoals.isEmpty || weightGoals.contains(profile.weightGoal))
                && (activityLevels.isEmpty || activityLevels.contains(profile.activityLevel))
        }

        /// The states in a fixed order, as stored.
        var stored: [String] { Subscription.allCases.filter(subscriptions.contains).map(\.rawValue) }

        /// The health parts, in the order `health` answers them: each its key (the column's and the
        /// contract's field's name, singular), label and every value.
        package static let healthParts: [(key: String, label: String, all: [String])] = [
            ("age_band", "Age band", AgeBand.allCases.map(\.rawValue)),
            ("sex", "Sex", HealthValues.Sex.allCases.map(\.rawValue)),
            ("weight_goal", "Weight goal", HealthValues.WeightGoal.allCases.map(\.rawValue)),
            ("activity_level", "Activity level", HealthValues.ActivityLevel.allCases.map(\.rawValue)),
        ]

        /// The values chosen of each health part (in `healthParts`' order, each in its values' order).
        package var health: [[String]] {
            [
                AgeBand.allCases.filter(ageBands.contains).map(\.rawValue),
                HealthValues.Sex.allCases.filter(sexes.contains).map(\.rawValue),
                HealthValues.WeightGoal.allCases.filter(weightGoals.contains).map(\.rawValue),
                HealthValues.ActivityLevel.allCases.filter(activityLevels.contains).map(\.rawValue),
            ]
        }

        /// The health parts as stored: age bands, sexes, weight goals, activity levels.
        var storedHealth: (bands: [String], sexes: [String], goals: [String], levels: [String]) {
            let chosen = health
            return (chosen[0], chosen[1], chosen[2], chosen[3])
        }

        /// The rule as stored columns read it back.
        init(subscriptions: [String], bands: [String], sexes: [String], goals: [String], levels: [String]) {
            self.subscriptions = Set(subscriptions.compactMap(Subscription.init(rawValue:)))
            ageBands = Set(bands.compactMap(AgeBand.init(rawValue:)))
            self.sexes = Set(sexes.compactMap(HealthValues.Sex.init(rawValue:)))
            weightGoals = Set(goals.compactMap(HealthValues.WeightGoal.init(rawValue:)))
            activityLevels = Set(levels.compactMap(HealthValues.ActivityLevel.init(rawValue:)))
        }

        /// The rule of subscription states and health parts' values (`health`'s order).
        init(subscriptions: [String], health: [[String]]) {
            self.init(
                subscriptions: subscriptions, bands: health[0], sexes: health[1], goals: health[2], levels: health[3])
        }
    }

    /// An audience's age band: years since birth as the year goes (the year now less the birth year).
    package enum AgeBand: String, Sendable, CaseIterable {
        case under18 = "under_18", from18to29 = "18_29", from30to44 = "30_44", from45to59 = "45_59"
        case from60 = "60_plus"

        package init(age: Int) {
            self =
                switch age {
                case ..<18: .under18
                case 18..<30: .from18to29
                case 30..<45: .from30to44
                case 45..<60: .from45to59
                default: .from60
                }
        }
    }

    /// Whether the app shows it at `now`: published, and inside its validity window.
    package func shows(at now: Date) -> Bool {
        status == .published && (validFrom.map { $0 <= now } ?? true) && (validUntil.map { $0 > now } ?? true)
    }

    /// What the audit event keeps: where it stands and whom it is for, not its text.
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let kind: String, title: String, status: String, subscriptions: [String], version: Int64
                let valid_from: Date?, valid_until: Date?
                let age_bands: [String], sexes: [String], weight_goals: [String], activity_levels: [String]
                let featured: [String]
            }
            return try AuditRecord.json(
                Snapshot(
                    kind: kind.rawValue, title: title, status: status.rawValue, subscriptions: audience.stored,
                    version: version, valid_from: validFrom, valid_until: validUntil,
                    age_bands: audience.storedHealth.bands, sexes: audience.storedHealth.sexes,
                    weight_goals: audience.storedHealth.goals, activity_levels: audience.storedHealth.levels,
                    featured: featured))
        }
    }
}

/// Lists are newest change first.
extension Recommendation: NewestFirst {
    package var listedAt: Date { updatedAt }
}

extension Recommendation: RowDecodable {
    package static let columns = """
        id, kind, title, body, html, subscriptions, valid_from, valid_until, status, published_at, retracted_at, \
        retract_reason, created_by, created_at, updated_by, updated_at, version, age_bands, sexes, weight_goals, \
        activity_levels, featured
        """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "recommendation")
        id = try cells.next()
        kind = try Kind(known: cells.next(String.self))
        (title, body, html) = (try cells.next(), try cells.next(), try cells.next())
        let subscriptions: [String] = try cells.next()
        (validFrom, validUntil) = (try cells.next(), try cells.next())
        status = try Status(known: cells.next(String.self))
        (publishedAt, retractedAt, retractReason) = (try cells.next(), try cells.next(), try cells.next())
        (createdBy, createdAt, updatedBy, updatedAt) = (
            try cells.next(), try cells.next(), try cells.next(), try cells.next()
        )
        version = try cells.next()
        audience = Audience(
            subscriptions: subscriptions, bands: try cells.next(), sexes: try cells.next(), goals: try cells.next(),
            levels: try cells.next())
        featured = try cells.next()
    }
}

/// What a manager writes: the recommendation's words, kind, audience and validity window.
package struct RecommendationDraft: Sendable, Equatable {
    package var kind: Recommendation.Kind
    package var title: String
    package var body: String
    package var audience: Recommendation.Audience
    /// The content it features, `kind:id` (checked when saved: at most ten, each live).
    package var featured: [String]
    package var validFrom: Date?
    package var validUntil: Date?

    package init(
        kind: Recommendation.Kind, title: String, body: String, audience: Recommendation.Audience,
        featured: [String] = [], validFrom: Date?, validUntil: Date?
    ) {
        self.featured = featured.map { FeaturedItem(text: $0)?.text ?? $0 }
        self.kind = kind
        self.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        self.body = body.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        (self.audience, self.validFrom, self.validUntil) = (audience, validFrom, validUntil)
    }

    /// Refuses a draft that breaks a rule, naming each field.
    func validate() throws {
        var validation = Validation()
        validation.text(title, "title", max: 200)
        validation.text(body, "body", max: 20000)
        if let validFrom, let validUntil {
            validation.require(validUntil > validFrom, "valid_until", "before_valid_from", "must be after valid_from")
        }
        try validation.check()
    }
}

extension Recommendation: PlatformOwned {
    package static let auditTargetType = "recommendation"
}
