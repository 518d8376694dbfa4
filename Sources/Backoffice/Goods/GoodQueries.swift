import BackofficePlatform
import Foundation
import PostgresNIO

/// The principal's tenant's goods by sku (`goods.list`); a platform role sees every tenant's.
/// `search` keeps the goods whose SKU starts with it or whose name contains it (any case).
package struct ListGoods: Query {
    package static let action: Action = "goods.list"
    let status: Good.Status?
    let category: String?
    let search: String?
    let after: (sku: String, id: UUID)?
    let limit: Int

    package init(
        status: Good.Status?, category: String?, search: String? = nil, after: (sku: String, id: UUID)?, limit: Int
    ) {
        (self.status, self.category, self.search, self.after, self.limit) = (status, category, search, after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [Good] {
        let start = after ?? ("", platformTenantID)
        // A partner's own goods by its (tenant, sku) index (row-level security would allow no others anyway).
        let tenant = unit.tenantScope
        // LIKE's own characters in the search are matched as themselves.
        let pattern = search.map(BrowseCatalog.escapeLike)
        return try await unit.all(
            """
            SELECT \(unescaped: Good.columns) FROM goods
            WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant))
              AND (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue)) AND (\(category)::text IS NULL
                  OR category = \(category))
              AND (\(pattern)::text IS NULL OR sku ILIKE \(pattern) || '%' OR name ILIKE '%' || \(pattern) || '%')
              AND (sku, id) > (\(start.sku), \(start.id))
            ORDER BY sku, id LIMIT \(limit)
            """)
    }
}

/// One good of the principal's tenant (`goods.read`); another tenant's is 404.
package typealias GetGood = GetByID<Good>

extension Good: ReadByID {
    package static let table = "goods"
    package static let readAction: Action = "goods.read"
}

/// A good as the app's shop shows it: active, with its partner's name.
package struct CatalogItem: Sendable, Equatable {
    package var good: Good
    package var partnerName: String
}

extension CatalogItem: RowDecodable {
    package static let columns =
        Good.columns.split(separator: ",").map { "g." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .joined(separator: ", ") + ", t.name"

    package init(row: PostgresRow) throws {
        // The good's columns come first (a tuple decodes the leading columns), the partner's name last.
        self.init(good: try Good(row: row), partnerName: try row.makeRandomAccess()[14].decode(String.self))
    }
}

/// The app's shop (`catalog.read`): active goods of every partner by name, optionally in one
/// category and/or with `search` in the name (case-insensitive, at least 2 characters; a
/// trigram index serves it).
package struct BrowseCatalog: Query {
    package static let action: Action = "catalog.read"
    let category: String?
    let search: String?
    let after: (name: String, id: UUID)?
    let limit: Int

    package init(category: String?, search: String?, after: (name: String, id: UUID)?, limit: Int) {
        self.category = category
        self.search = search?.trimmingCharacters(in: .whitespaces)
        (self.after, self.limit) = (after, limit)
    }

    package func read(in unit: UnitOfWork) async throws -> [CatalogItem] {
        if let search {
            guard search.count >= 2 else {
                throw DomainError.invalid("q", "too_short", "must be at least 2 characters")
            }
        }
        let pattern = search.map { "%" + Self.escapeLike($0) + "%" }
        let start = after ?? ("", platformTenantID)
        return try await unit.all(
            """
            SELECT \(unescaped: CatalogItem.columns) FROM goods g JOIN tenants t ON t.id = g.tenant_id
            WHERE g.status = 'active' AND (\(category)::text IS NULL OR g.category = \(category))
              AND (\(pattern)::text IS NULL OR g.name ILIKE \(pattern))
              AND (g.name, g.id) > (\(start.name), \(start.id))
            ORDER BY g.name, g.id LIMIT \(limit)
            """)
    }

    /// `text` with LIKE's wildcards taken literally.
    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

/// The principal's tenant's goods on sale whose stock is below `threshold`, lowest first
/// (`goods.list`), at most `limit`: what to restock.
package struct LowStockGoods: Query {
    package static let action: Action = ListGoods.action
    let threshold: Int64
    let limit: Int

    package init(threshold: Int64 = 5, limit: Int = 10) { (self.threshold, self.limit) = (threshold, limit) }

    package func read(in unit: UnitOfWork) async throws -> [Good] {
        let tenant = unit.tenantScope
        return try await unit.all(
            """
            SELECT \(unescaped: Good.columns) FROM goods
            WHERE (\(tenant)::uuid IS NULL OR tenant_id = \(tenant)) AND status = 'active' AND stock < \(threshold)
            ORDER BY stock, sku LIMIT \(limit)
            """)
    }
}
