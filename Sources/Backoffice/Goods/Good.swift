import BackofficePlatform
import Foundation
import PostgresNIO

/// A good a partner sells in the app's shop, priced in US cents and/or FitPoints: its SKU, what the
/// partner sets (`fields`, read as the good's own: `good.name`), and where it stands.
@dynamicMemberLookup
package struct Good: Sendable, Equatable {
    /// draft → active (in the catalog) ⇄ draft; → archived, final.
    package enum Status: String, Sendable, Codable, CaseIterable { case draft, active, archived }

    package var id: UUID
    package var tenantID: UUID
    package var sku: String
    package var fields: GoodFields
    package var status: Status
    package var createdAt: Date
    package var updatedAt: Date
    package var version: Int64

    package subscript<Value>(dynamicMember field: KeyPath<GoodFields, Value>) -> Value { fields[keyPath: field] }

    /// What the audit log keeps of it.
    var snapshot: String? {
        get throws {
            struct Snapshot: Encodable {
                let sku: String, name: String, category: String, price_cents: Int64?, price_fitpoints: Int64?,
                    stock: Int64, status: String
                let image_urls: [String]
            }
            return try AuditRecord.json(
                Snapshot(
                    sku: sku, name: fields.name, category: fields.category, price_cents: fields.priceCents,
                    price_fitpoints: fields.priceFitPoints, stock: fields.stock, status: status.rawValue,
                    image_urls: fields.imageURLs))
        }
    }
}

extension Good: RowDecodable {
    package static let columns = """
        id, tenant_id, sku, name, description, category, price_cents, price_fitpoints, stock::int8, status,
            image_urls, created_at, updated_at, version
        """

    package init(row: PostgresRow) throws {
        let c = try row.decode(
            (UUID, UUID, String, String, String, String, Int64?, Int64?, Int64, String, [String], Date, Date, Int64)
                .self)
        self.init(
            id: c.0, tenantID: c.1, sku: c.2,
            fields: GoodFields(
                stored: c.3, description: c.4, category: c.5, priceCents: c.6, priceFitPoints: c.7, stock: c.8,
                imageURLs: c.10),
            status: try Status(known: c.9), createdAt: c.11, updatedAt: c.12, version: c.13)
    }
}

/// The fields a partner sets on a good, validated together whether they come from a form, an
/// update or an import row. Lengths count as PostgreSQL's `length()` does, so an accepted value
/// never fails a CHECK.
package struct GoodFields: Sendable, Equatable {
    package var name: String
    package var description: String
    package var category: String
    package var priceCents: Int64?
    package var priceFitPoints: Int64?
    package var stock: Int64
    package var imageURLs: [String]

    package init(
        name: String, description: String?, category: String, priceCents: Int64?, priceFitPoints: Int64?, stock: Int64,
        imageURLs: [String]?
    ) {
        self.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        self.description = (description ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        self.category = category.trimmingCharacters(in: .whitespaces)
        self.priceCents = priceCents
        self.priceFitPoints = priceFitPoints
        self.stock = stock
        self.imageURLs = (imageURLs ?? []).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The fields as stored: checked and trimmed when they were written, so a row is read as it is
    /// (no per-row trimming on a catalog page).
    init(
        stored name: String, description: String, category: String, priceCents: Int64?, priceFitPoints: Int64?,
        stock: Int64, imageURLs: [String]
    ) {
        (self.name, self.description, self.category, self.priceCents, self.priceFitPoints, self.stock, self.imageURLs) =
            (name, description, category, priceCents, priceFitPoints, stock, imageURLs)
    }

    static let maxPrice: Int64 = 100_000_000
    static let maxStock: Int64 = 1_000_000_000

    /// Records every rule the fields break.
    func validate(into validation: inout Validation) {
        validation.text(name, "name", max: 200)
        validation.text(description, "description", max: 5000, required: false)
        validation.require(
            Validation.isSlug(category), "category", "invalid_category",
            "must be 2–63 lower-case letters, digits or dashes")
        validation.require(
            priceCents != nil || priceFitPoints != nil, "price_cents", "price_required",
            "a good needs a price in cents, in FitPoints, or both")
        if let priceCents {
            validation.require(
                (1...Self.maxPrice).contains(priceCents), "price_cents", "out_of_range", "must be from 1 to 100,000,000"
            )
        }
        if let priceFitPoints {
            validation.require(
                (1...Self.maxPrice).contains(priceFitPoints), "price_fitpoints", "out_of_range",
                "must be from 1 to 100,000,000")
        }
        validation.require(
            (0...Self.maxStock).contains(stock), "stock", "out_of_range", "must be from 0 to 1,000,000,000")
        validation.require(imageURLs.count <= 10, "image_urls", "too_many", "at most 10 images")
        for (index, url) in imageURLs.enumerated() {
            validation.require(Self.isHTTPS(url), "image_urls[\(index)]", "not_https", "must be an https URL")
        }
    }

    /// An absolute `https://` URL with a host, at most 2,000 characters, no spaces.
    static func isHTTPS(_ text: String) -> Bool {
        guard text.unicodeScalars.count <= 2000, !text.contains(where: \.isWhitespace), let url = URL(string: text),
            url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty
        else { return false }
        return true
    }

    /// Whether `sku` is a sku: a letter or digit, then up to 63 letters, digits, dots, dashes or underscores.
    package static func isSKU(_ sku: String) -> Bool {
        Validation.matches(sku, length: 1...64) { index, byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (index > 0 && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")))
        }
    }
}
