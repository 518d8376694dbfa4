import Foundation
import PostgresNIO
import BackofficePlatform

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
    /// empty rule selects every customer. Subscription state is the one part today: weight goal,
    /// age band, activity level and having a health profile join when health profiles are stored.
    package struct Audience: Sendable, Equatable {
        /// The subscription states selected (empty: any).
        package var subscriptions: Set<Subscription>

        package init(subscriptions: Set<Subscription> = []) { self.subscriptions = subscriptions }

        /// Whether the rule selects `customer` (the SQL's rule, stated in Swift for the tests to
        /// compare with).
        package func selects(_ customer: Customer) -> Bool {
            subscriptions.isEmpty || subscriptions.contains(customer.subscription)
        }

        /// The states in a fixed order, as stored.
        var stored: [String] { Subscription.allCases.filter(subscriptions.contains).map(\.rawValue) }
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
            }
            return try AuditRecord.json(
                Snapshot(
                    kind: kind.rawValue, title: title, status: status.rawValue, subscriptions: audience.stored,
                    version: version, valid_from: validFrom, valid_until: validUntil))
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
        retract_reason, created_by, created_at, updated_by, updated_at, version
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (
                UUID, String, String, String, String, [String], Date?, Date?, String, Date?, Date?, String?, UUID, Date,
                UUID, Date, Int64
            ).self)
        guard let kind = Kind(rawValue: c.1), let status = Status(rawValue: c.8) else {
            throw DomainError.inconsistent("recommendation \(c.0) kind \(c.1) status \(c.8)")
        }
        self.init(
            id: c.0, kind: kind, title: c.2, body: c.3, html: c.4,
            audience: Audience(subscriptions: Set(c.5.compactMap(Subscription.init(rawValue:)))), validFrom: c.6,
            validUntil: c.7, status: status, publishedAt: c.9, retractedAt: c.10, retractReason: c.11, createdBy: c.12,
            createdAt: c.13, updatedBy: c.14, updatedAt: c.15, version: c.16)
    }

    /// The recommendation, locked until the unit ends with `forUpdate`.
    package static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Recommendation {
        let lock = forUpdate ? "FOR UPDATE" : ""
        return try await unit.one(
            "SELECT \(unescaped: columns) FROM recommendations WHERE id = \(id) \(unescaped: lock)",
            as: Recommendation.self, else: DomainError.notFound("Recommendation \(id.text)"))
    }
}

/// What a manager writes: the recommendation's words, kind, audience and validity window.
package struct RecommendationDraft: Sendable, Equatable {
    package var kind: Recommendation.Kind
    package var title: String
    package var body: String
    package var audience: Recommendation.Audience
    package var validFrom: Date?
    package var validUntil: Date?

    package init(
        kind: Recommendation.Kind, title: String, body: String, audience: Recommendation.Audience,
        validFrom: Date?, validUntil: Date?
    ) {
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
