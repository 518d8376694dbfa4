import Foundation
import PostgresNIO
import BackofficePlatform

/// One version of a content policy: a Markdown document managers publish and the app shows.
/// Versions are never changed; the current one is the highest.
package struct ContentPolicy: Sendable, Equatable {
    package var id: UUID
    package var slug: String
    package var version: Int
    package var title: String
    package var body: String
    package var publishedAt: Date
}

/// How content policies are stored (`content_policies`, platform sessions only).
extension ContentPolicy: RowDecodable {
    package static let columns = "id, slug, version, title, body, published_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((UUID, String, Int, String, String, Date).self)
        self.init(id: c.0, slug: c.1, version: c.2, title: c.3, body: c.4, publishedAt: c.5)
    }

    /// The current version of `slug`, nil when it was never published.
    static func current(_ slug: String, in unit: UnitOfWork) async throws -> ContentPolicy? {
        try await unit.first(
            "SELECT \(unescaped: columns) FROM content_policies WHERE slug = \(slug) ORDER BY version DESC LIMIT 1",
            as: ContentPolicy.self)
    }
}

/// A manager publishes a version of a content policy (`content_policies.publish`); the first
/// creates the policy. A text identical to the current version publishes nothing.
package struct PublishContentPolicy: AuditedOperation {
    package static let action: Action = "content_policies.publish"
    package enum Outcome: Sendable { case published, unchanged }
    package let slug: String
    package let title: String
    package let body: String

    package init(slug: String, title: String, body: String) {
        self.slug = slug.trimmingCharacters(in: .whitespaces)
        self.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        self.body = body.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<(ContentPolicy, Outcome)> {
        var validation = Validation()
        validation.require(
            Validation.isSlug(slug), "slug", "invalid_slug",
            "must be 2–63 lower-case letters, digits or dashes, starting with a letter or digit")
        validation.text(title, "title", max: 200)
        validation.text(body, "body", max: 100_000)
        try validation.check()
        // One publication of a policy at a time (versions are only inserted, never updated: no row to lock).
        try await unit.execute("SELECT pg_advisory_xact_lock(hashtext('content_policy:' || \(slug)))")
        let current = try await ContentPolicy.current(slug, in: unit)
        if let current, current.title == title, current.body == body { return .unchanged((current, .unchanged)) }
        let version = (current?.version ?? 0) + 1
        let published = try await unit.one(
            """
            INSERT INTO content_policies (slug, version, id, title, body, published_by, published_at)
            VALUES (\(slug), \(version), \(unit.newID()), \(title), \(body), \(unit.principal.operatorID), \(unit.now))
            RETURNING \(unescaped: ContentPolicy.columns)
            """, as: ContentPolicy.self, else: DomainError.inconsistent("the new version was not returned"))
        struct Snapshot: Encodable { let slug: String, version: Int, title: String }
        let event = AuditRecord(
            action: Self.action, tenantID: platformTenantID, targetType: "content_policy", targetID: slug, reason: nil,
            before: try current.map {
                try AuditRecord.json(Snapshot(slug: $0.slug, version: $0.version, title: $0.title))
            },
            after: try AuditRecord.json(Snapshot(slug: slug, version: version, title: title)))
        return Audited((published, .published), event: event)
    }
}

/// The current version of every policy, by slug (`content_policies.read`).
package struct CurrentContentPolicies: Query {
    package static let action: Action = "content_policies.read"
    package init() {}

    package func read(in unit: UnitOfWork) async throws -> [ContentPolicy] {
        try await unit.all(
            """
                SELECT DISTINCT ON (slug) \(unescaped: ContentPolicy.columns) FROM content_policies ORDER BY slug, \
                version DESC
                """
        )
    }
}

/// The current version of one policy (`content_policies.read`).
package struct GetContentPolicy: Query {
    package static let action: Action = "content_policies.read"
    package let slug: String
    package init(slug: String) { self.slug = slug }

    package func read(in unit: UnitOfWork) async throws -> ContentPolicy {
        guard let policy = try await ContentPolicy.current(slug, in: unit) else {
            throw DomainError.notFound("Content policy '\(slug)'")
        }
        return policy
    }
}

/// Every version of one policy, newest first (`content_policies.read`).
package struct ContentPolicyHistory: Query {
    package static let action: Action = "content_policies.read"
    package let slug: String
    package init(slug: String) { self.slug = slug }

    package func read(in unit: UnitOfWork) async throws -> [ContentPolicy] {
        let versions = try await unit.all(
            """
                SELECT \(unescaped: ContentPolicy.columns) FROM content_policies WHERE slug = \(slug) ORDER BY \
                version DESC
                """,
            as: ContentPolicy.self)
        guard !versions.isEmpty else { throw DomainError.notFound("Content policy '\(slug)'") }
        return versions
    }
}
