import Foundation

/// A row that a newest-first list pages through (`ListNewestFirst`): its table and the permission
/// that lists it.
package protocol ListedNewestFirst: RowDecodable, NewestFirst, Sendable {
    /// The table its rows are in (row-level security narrows it to the principal's tenant).
    static var table: String { get }
    /// The permission of `policies/access.yaml` that lists it (`challenges.list`).
    static var listAction: Action { get }
}

/// One page of `Row`s, newest first, after the keyset (`created_at`, `id`) of `after`
/// (`Row.listAction`): the list query of every table that pages this way, named by a typealias
/// in its domain (`ListChallenges`).
package struct ListNewestFirst<Row: ListedNewestFirst>: Query {
    package static var action: Action { Row.listAction }
    package let after: (createdAt: Date, id: UUID)?
    package let limit: Int

    package init(after: (createdAt: Date, id: UUID)?, limit: Int) { (self.after, self.limit) = (after, limit) }

    package func read(in unit: UnitOfWork) async throws -> [Row] {
        try await unit.newestFirst(Row.table, after: after, limit: limit)
    }
}

/// A row that a list by id pages through (`ListByID`): its table, the column a list may be
/// narrowed to one owner by, and the permission that lists it.
package protocol ListedByID: RowDecodable, Sendable {
    /// The table its rows are in (row-level security narrows it to the principal's tenant).
    static var table: String { get }
    /// The column of the owner a list may be narrowed to (`tenant_id`).
    static var ownerColumn: String { get }
    /// The permission of `policies/access.yaml` that lists it (`operators.list`).
    static var listAction: Action { get }
}

/// One page of `Row`s by id after `afterID`, of one owner or of all (`Row.listAction`): the list
/// query of every table that pages by id, named by a typealias in its domain (`ListOperators`).
package struct ListByID<Row: ListedByID>: Query {
    package static var action: Action { Row.listAction }
    package let owner: UUID?
    package let afterID: UUID
    package let limit: Int

    package init(owner: UUID?, afterID: UUID, limit: Int) {
        (self.owner, self.afterID, self.limit) = (owner, afterID, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [Row] {
        try await unit.all(
            """
            SELECT \(unescaped: Row.columns) FROM \(unescaped: Row.table)
            WHERE (\(owner)::uuid IS NULL OR \(unescaped: Row.ownerColumn) = \(owner)) AND id > \(afterID)
            ORDER BY id LIMIT \(limit)
            """)
    }
}

/// A row read by its id (`GetByID`, `fetch`): its table, what a missing one is called, and the
/// permission that reads it.
package protocol ReadByID: RowDecodable, Sendable {
    /// The table its rows are in (row-level security narrows it to the principal's tenant), or
    /// the tables it joins, the row's own named `alias`.
    static var table: String { get }
    /// The alias of the row's own table in a `table` that joins others (`d`); nil by default.
    static var alias: String? { get }
    /// What the 404 calls a missing one: by default the type's name in words (`Moderation case`).
    static var noun: String { get }
    /// The permission of `policies/access.yaml` that reads one (`challenges.read`).
    static var readAction: Action { get }
}

extension ReadByID {
    package static var alias: String? { nil }

    package static var noun: String {
        String(describing: Self.self).reduce(into: "") { words, letter in
            words += letter.isUppercase && !words.isEmpty ? " " + letter.lowercased() : String(letter)
        }
    }

    /// The row `id` as the principal may see it; with `forUpdate`, locked until the unit ends.
    /// - Throws: `DomainError.notFound`, also for a row the principal's tenant does not see (its
    ///   existence is not revealed).
    package static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Self {
        try await unit.byID(table, alias: alias, id, forUpdate: forUpdate, notFound: "\(noun) \(id.text)")
    }
}

/// One `Row` by its id (`Row.readAction`): the read of every table read this way, named by a
/// typealias in its domain (`GetTenant`).
package struct GetByID<Row: ReadByID>: Query {
    package static var action: Action { Row.readAction }
    package let id: UUID

    package init(id: UUID) { self.id = id }

    package func read(in unit: UnitOfWork) async throws -> Row { try await Row.fetch(id, in: unit) }
}
