import BackofficeAPI
import BackofficePlatform
import Foundation
import NIOCore

/// One customer's recommendations, as the app reads them (the generated handler and the
/// hand-encoded path alike): read once, tagged by the recommendations answered and their versions,
/// so an unchanged list is 304 without writing a body.
struct CustomerRecommendationsRequest: Sendable {
    let customerID: UUID

    /// The customer's id as the generated path gives it, decoded (`customer_id`; anything but a UUID
    /// is refused by name).
    init(customerID: String) throws { self.customerID = try parseID(customerID, "customer_id") }

    /// The customer's id as the request's path writes it, percent-encoded (the hand-encoded path).
    init(pathSegment: Substring) throws {
        try self.init(customerID: String(pathSegment).removingPercentEncoding ?? String(pathSegment))
    }

    func run(_ database: Database, context: OperationContext) async throws -> (
        items: [CustomerRecommendation], etag: String
    ) {
        let items = try await database.read(CustomerRecommendations(customerID: customerID), context: context)
        // The featured content's live titles count too: an archived video leaves the list.
        return (
            items,
            EntityTag.digest(
                "r", items.map { "\($0.id.text):\($0.version):\($0.featured.map { "\($0.id.text)=\($0.title)" })" })
        )
    }
}

/// Writes a customer's recommendations as JSON by hand: the bytes the generated encoder writes
/// (keys sorted, absent values omitted), a test holding the two equal.
enum CustomerRecommendationsJSON {
    static func list(_ items: [CustomerRecommendation]) -> ByteBuffer {
        JSONBytes.page(items[...], nextCursor: nil, bytesPerItem: 900, write)
    }

    private static func write(_ item: CustomerRecommendation, into out: inout JSONBytes) {
        out.raw("{\"body\":")
        out.string(item.body)
        out.raw(",\"featured\":[")
        for (index, piece) in item.featured.enumerated() {
            out.raw(index == 0 ? "{\"id\":" : ",{\"id\":")
            out.uuid(piece.id)
            out.raw(",\"kind\":")
            out.string(piece.kind)
            out.raw(",\"title\":")
            out.string(piece.title)
            out.raw("}")
        }
        out.raw("],\"html\":")
        out.string(item.html)
        out.raw(",\"id\":")
        out.uuid(item.id)
        out.raw(",\"kind\":")
        out.string(item.kind.rawValue)
        out.raw(",\"published_at\":")
        out.date(item.publishedAt)
        out.raw(",\"title\":")
        out.string(item.title)
        out.optional(",\"valid_until\":", item.validUntil)
        out.raw("}")
    }
}

extension HotList {
    /// `GET /v1/customers/{customer_id}/recommendations`, written by `CustomerRecommendationsJSON`, 304
    /// when the app holds the list.
    static let customerRecommendations = HotList(route: "/v1/customers/{customer_id}/recommendations") {
        segments, _, database, context in
        let (items, etag) = try await CustomerRecommendationsRequest(pathSegment: segments[0]).run(
            database, context: context)
        return HotPage(etag: etag) { CustomerRecommendationsJSON.list(items) }
    }
}
