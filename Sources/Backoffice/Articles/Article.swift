import BackofficePlatform
import Foundation
import PostgresNIO

/// An article experts write for the app: its newest version (being written or in review) and
/// where it stands. Versions are never changed; `liveVersion` is the one the app shows, and stays
/// live while a newer version is written and reviewed.
package struct Article: Sendable, Equatable {
    package typealias State = ReviewState

    package var id: UUID
    package var slug: String
    package var authorID: UUID
    package var state: State
    package var version: Int
    package var liveVersion: Int?
    package var reviewComment: String?
    package var reviewedBy: UUID?
    package var reviewedAt: Date?
    package var submittedAt: Date?
    package var publishedAt: Date?
    package var liveAt: Date?
    package var createdAt: Date
    package var updatedAt: Date
    package var updatedBy: UUID
    /// The newest version's content.
    package var content: ArticleContent
    /// Who wrote the newest version.
    package var writtenBy: UUID
    /// The newest version's words and minutes to read.
    package var words: Int
    package var readingMinutes: Int
}

/// What a writer writes: one version of an article.
package struct ArticleContent: Sendable, Equatable, Codable {
    package static let categories = ["nutrition", "exercise", "recovery", "mindset", "sleep", "wellbeing"]

    package var title: String
    package var summary: String
    package var category: String
    /// Markdown.
    package var body: String
    package var coverURL: String?
    package var byline: String?
    package var tags: [String]

    package init(
        title: String, summary: String, category: String, body: String, coverURL: String?, byline: String?,
        tags: [String]
    ) {
        self.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        self.summary = summary.trimmingCharacters(in: .whitespacesAndNewlines)
        self.category = category
        self.body = body.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        self.coverURL = coverURL.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        self.byline = byline.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        self.tags = tags.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// Refuses content that breaks a rule, naming each field.
    func validate() throws {
        var validation = Validation()
        validation.text(title, "title", max: 200)
        validation.text(summary, "summary", max: 500)
        validation.text(body, "body", max: MarkdownRendering.maxLength)
        validation.require(
            Self.categories.contains(category), "category", "unknown_category",
            "must be one of \(Self.categories.joined(separator: ", "))")
        if let coverURL {
            validation.require(
                coverURL.count <= 2000 && URL(string: coverURL)?.scheme == "https"
                    && URL(string: coverURL)?.host != nil,
                "cover_url", "invalid_url", "must be an https URL")
        }
        validation.text(byline, "byline", max: 120, required: false)
        validation.require(tags.count <= 10, "tags", "too_many", "at most 10 tags")
        validation.require(
            tags.allSatisfy { $0.count <= 40 && Validation.matches($0, length: 1...40) { Self.slugByte($0, $1) } },
            "tags", "invalid_tag", "each tag is 1–40 lower-case letters, digits or dashes")
        try validation.check()
    }

    static func slugByte(_ index: Int, _ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (index > 0 && byte == UInt8(ascii: "-"))
    }

    /// A slug made from a title: ASCII letters and digits, the rest as single dashes ("Sleep: the
    /// basics" → "sleep-the-basics"); "article" when nothing is left.
    static func slug(from title: String) -> String {
        let folded = title.folding(
            options: [.diacriticInsensitive, .caseInsensitive], locale: Locale(identifier: "en"))
        var slug = ""
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                slug.unicodeScalars.append(scalar)
            } else if !slug.isEmpty, slug.last != "-" {
                slug += "-"
            }
        }
        slug = String(slug.prefix(90)).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return slug.count >= 2 ? slug : "article-\(slug)".trimmingCharacters(in: CharacterSet(charactersIn: "-"))
    }
}

/// One stored version of an article.
package struct ArticleVersion: Sendable, Equatable {
    package var version: Int
    package var content: ArticleContent
    package var writtenBy: UUID
    package var writtenAt: Date
}

/// How articles are stored (`articles` with its newest version from `article_versions`; platform sessions only).
extension Article: RowDecodable {
    package static let columns = """
        a.id, a.slug, a.author_id, a.state, a.version, a.live_version, a.review_comment, a.reviewed_by, \
        a.reviewed_at, a.submitted_at, a.first_published_at, a.live_at, a.created_at, a.updated_at, a.updated_by, \
        v.title, v.summary, v.category, v.body, v.cover_url, v.byline, v.tags, v.written_by, v.words, v.reading_minutes
        """
    /// The articles with their newest version (alias `a`, the version `v`).
    package static let source = "articles a JOIN article_versions v ON v.article_id = a.id AND v.version = a.version"

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (
                UUID, String, UUID, String, Int, Int?, String?, UUID?, Date?, Date?, Date?, Date?, Date, Date, UUID,
                String, String, String, String, String?, String?, [String], UUID, Int, Int
            ).self)
        self.init(
            id: c.0, slug: c.1, authorID: c.2, state: try State(known: c.3), version: c.4, liveVersion: c.5,
            reviewComment: c.6, reviewedBy: c.7, reviewedAt: c.8, submittedAt: c.9, publishedAt: c.10, liveAt: c.11,
            createdAt: c.12, updatedAt: c.13, updatedBy: c.14,
            content: ArticleContent(
                title: c.15, summary: c.16, category: c.17, body: c.18, coverURL: c.19, byline: c.20, tags: c.21),
            writtenBy: c.22, words: c.23, readingMinutes: c.24)
    }

    /// What the audit event keeps of an article: where it stands, not its text (the versions keep that).
    package var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let slug: String, state: String, version: Int, liveVersion: Int?, title: String
            }
            return try AuditRecord.json(
                Snapshot(
                    slug: slug, state: state.rawValue, version: version, liveVersion: liveVersion, title: content.title)
            )
        }
    }
}

extension ArticleVersion: RowDecodable {
    package static let columns =
        "version, title, summary, category, body, cover_url, byline, tags, written_by, written_at"

    package init(row: PostgresRow) throws {
        let c = try row.decode((Int, String, String, String, String, String?, String?, [String], UUID, Date).self)
        self.init(
            version: c.0,
            content: ArticleContent(
                title: c.1, summary: c.2, category: c.3, body: c.4, coverURL: c.5, byline: c.6, tags: c.7),
            writtenBy: c.8, writtenAt: c.9)
    }
}
