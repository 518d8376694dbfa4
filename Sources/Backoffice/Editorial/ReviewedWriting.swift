import BackofficePlatform
import Foundation
import PostgresNIO

/// What a writer writes of a reviewed kind (a video's content, a recipe, a food's figures):
/// checked, then stored as a version.
package protocol WrittenContent: Sendable, Equatable {
    /// Refuses content that breaks a rule, naming each field (422).
    func check(in unit: UnitOfWork) async throws
    /// Adds version `version` of record `id` with this content, written by the principal now.
    func store(as version: Int, of id: UUID, in unit: UnitOfWork) async throws
}

/// The fields an update sends; those absent keep their value.
package protocol ContentChanges: Sendable {
    associatedtype Content: WrittenContent
    func applied(to content: Content) -> Content
}

/// Reviewed content written as one `Written` value, created and updated by the generic use cases.
package protocol WrittenReviewed: Reviewed {
    associatedtype Written: WrittenContent
    /// The newest version's content.
    var written: Written { get }
}

extension Reviewed {
    /// The permissions to write a first version and a new one (`videos.create`, `videos.update`).
    package static var createAction: Action { declared("\(table).create") }
    package static var updateAction: Action { declared("\(table).update") }
}

/// An expert or a manager writes a record of a reviewed kind (`<kind>.create`): a draft, version
/// 1, its content checked and stored.
package struct CreateReviewed<Record: WrittenReviewed>: AuditedOperation {
    package static var action: Action { Record.createAction }
    let content: Record.Written

    package init(content: Record.Written) { self.content = content }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Record> {
        try await content.check(in: unit)
        let (id, writer) = (unit.newID(), unit.principal.operatorID)
        try await unit.execute(
            """
            INSERT INTO \(unescaped: Record.table) (id, author_id, state, version, created_at, updated_at, updated_by)
            VALUES (\(id), \(writer), 'draft', 1, \(unit.now), \(unit.now), \(writer))
            """)
        try await content.store(as: 1, of: id, in: unit)
        return try await Record.audited(Self.action, id, before: nil, in: unit)
    }
}

/// A writer saves a new version (`<kind>.update`) as articles' writers do: `If-Match` required
/// (428; 412 naming who saved since), a draft or a published record (its live version stays
/// until the new one is approved), never one in review or archived (409); an expert only its
/// own (404). Content equal to the newest version's changes nothing.
package struct UpdateReviewed<Record: WrittenReviewed, Changes: ContentChanges>: AuditedOperation
where Changes.Content == Record.Written {
    package static var action: Action { Record.updateAction }
    let id: UUID
    let changes: Changes
    let ifMatch: String?

    package init(id: UUID, changes: Changes, ifMatch: String?) {
        (self.id, self.changes, self.ifMatch) = (id, changes, ifMatch)
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Record> {
        let before = try await Record.forNewVersion(id, ifMatch: ifMatch, in: unit)
        let content = changes.applied(to: before.written)
        try await content.check(in: unit)
        if content == before.written { return .unchanged(before) }
        try await content.store(as: before.version + 1, of: before.id, in: unit)
        try await Record.newVersion(before.version + 1, of: before.id, in: unit)
        return try await Record.audited(Self.action, before.id, before: before, in: unit)
    }
}
