import BackofficePlatform
import Foundation
import PostgresNIO

/// A partner adds a good to its own tenant, as a draft (`goods.create`). A sku already used in
/// the tenant is 409 `sku_taken`. Platform roles have no shop and cannot create goods (422).
package struct CreateGood: AuditedOperation {
    package static let action: Action = "goods.create"
    let sku: String
    let fields: GoodFields

    package init(sku: String, fields: GoodFields) {
        self.sku = sku.trimmingCharacters(in: .whitespaces)
        self.fields = fields
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Good> {
        var validation = Validation()
        validation.require(
            GoodFields.isSKU(sku), "sku", "invalid_sku",
            "must be 1–64 letters, digits, dots, dashes or underscores, starting with a letter or digit")
        fields.validate(into: &validation)
        let tenant = unit.principal.tenantID
        validation.require(
            tenant != platformTenantID, "tenant", "not_a_partner",
            "goods belong to a partner's tenant; use a partner's token")
        try validation.check()
        let good = try await unit.one(
            """
            INSERT INTO goods (tenant_id, id, sku, name, description, category, price_cents, price_fitpoints, stock,
                image_urls, created_at, updated_at)
            VALUES (\(tenant), \(unit.newID()), \(sku), \(fields.name), \(fields.description), \(fields.category),
                \(fields.priceCents),
                \(fields.priceFitPoints), \(Int32(fields.stock)), \(fields.imageURLs), \(unit.now), \(unit.now))
            ON CONFLICT (tenant_id, sku) DO NOTHING
            RETURNING \(unescaped: Good.columns)
            """, as: Good.self,
            else: DomainError.conflict(code: "sku_taken", detail: "Your shop already has a good with sku '\(sku)'."))
        return Audited(
            good,
            event: AuditRecord(
                action: Self.action, tenantID: tenant, targetType: "good", targetID: good.id.text, reason: nil,
                before: nil, after: try good.snapshot)
        )
    }
}

/// What an update changes: the fields sent, nothing else.
package struct GoodChanges: Sendable {
    package var name: String?
    package var description: String?
    package var category: String?
    package var priceCents: Int64?
    package var priceFitPoints: Int64?
    package var stock: Int64?
    package var status: Good.Status?
    package var imageURLs: [String]?

    package init(
        name: String? = nil, description: String? = nil, category: String? = nil, priceCents: Int64? = nil,
        priceFitPoints: Int64? = nil,
        stock: Int64? = nil, status: Good.Status? = nil, imageURLs: [String]? = nil
    ) {
        (self.name, self.description, self.category, self.priceCents, self.priceFitPoints) = (
            name, description, category, priceCents, priceFitPoints
        )
        (self.stock, self.status, self.imageURLs) = (stock, status, imageURLs)
    }

    /// `good`'s fields with these changes applied.
    func applied(to good: Good) -> GoodFields {
        GoodFields(
            name: name ?? good.name, description: description ?? good.description, category: category ?? good.category,
            priceCents: priceCents ?? good.priceCents, priceFitPoints: priceFitPoints ?? good.priceFitPoints,
            stock: stock ?? good.stock,
            imageURLs: imageURLs ?? good.imageURLs)
    }
}

/// A partner changes a good of its tenant (`goods.update`, `If-Match` required: 428 without,
/// 412 when stale). Another tenant's good is 404. An archived good is 409.
package struct UpdateGood: AuditedOperation {
    package static let action: Action = "goods.update"
    let goodID: UUID
    let changes: GoodChanges
    let ifMatch: String?

    package init(goodID: UUID, changes: GoodChanges, ifMatch: String?) {
        self.goodID = goodID
        self.changes = changes
        self.ifMatch = ifMatch
    }

    package func perform(in unit: UnitOfWork) async throws -> Audited<Good> {
        let before = try await Good.fetch(goodID, forUpdate: true, in: unit)
        guard let ifMatch else { throw DomainError.preconditionRequired }
        try EntityTag.check(ifMatch, version: before.version)
        let status = changes.status ?? before.status
        guard before.status != .archived else {
            throw DomainError.invalidTransition("An archived good cannot change.", current: before.status.rawValue)
        }
        let fields = changes.applied(to: before)
        var validation = Validation()
        fields.validate(into: &validation)
        try validation.check()
        return try await Self.store(fields, status: status, of: before, action: Self.action, in: unit)
    }

    /// Writes `fields` and `status` over `before` (a new version) and audits the change as `action`.
    static func store(
        _ fields: GoodFields, status: Good.Status, of before: Good, action: Action, reason: String? = nil,
        in unit: UnitOfWork
    )
        async throws -> Audited<Good>
    {
        let after = try await unit.one(
            """
            UPDATE goods SET name = \(fields.name), description = \(fields.description), category = \(fields.category),
                price_cents = \(fields.priceCents), price_fitpoints = \(fields.priceFitPoints), stock =
                    \(Int32(fields.stock)),
                image_urls = \(fields.imageURLs), status = \(status.rawValue), updated_at = \(unit.now), version =
                    version + 1
            WHERE id = \(before.id) RETURNING \(unescaped: Good.columns)
            """, as: Good.self, else: DomainError.notFound("Good \(before.id.text)"))
        return Audited(
            after,
            event: AuditRecord(
                action: action, tenantID: before.tenantID, targetType: "good", targetID: before.id.text, reason: reason,
                before: try before.snapshot,
                after: try after.snapshot))
    }
}

/// A partner withdraws a good for good (`goods.archive`): it leaves the catalog; orders keep
/// what was sold. Archived already is 409; `If-Match`, when sent, must be current (412).
package struct ArchiveGood: AuditedOperation {
    package static let action: Action = "goods.archive"
    let goodID: UUID
    let ifMatch: String?

    package func perform(in unit: UnitOfWork) async throws -> Audited<Good> {
        let before = try await Good.fetch(goodID, forUpdate: true, in: unit)
        try EntityTag.check(ifMatch, version: before.version)
        guard before.status != .archived else {
            throw DomainError.invalidTransition("The good is already archived.", current: before.status.rawValue)
        }
        let fields = GoodChanges().applied(to: before)
        return try await UpdateGood.store(fields, status: .archived, of: before, action: Self.action, in: unit)
    }
}
