import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension APIHandler {
    /// A bulk move of the shop's orders (`BulkOrderMoves`): each order's outcome, in the order asked.
    func moveOrdersInBulk(_ input: Operations.MoveOrdersInBulk.Input) async throws
        -> Operations.MoveOrdersInBulk.Output
    {
        let body: Components.Schemas.BulkOrderMoveRequest = try json(input.body)
        let items = try body.orders.map { order in
            BulkOrderItem(
                orderID: try parseID(order.orderId, "order_id"), carrier: order.carrier,
                trackingNumber: order.trackingNumber)
        }
        let move = try OrderMove(known: body.move.rawValue)
        let bulk = BulkOrderMoves(move: move, items: items, dryRun: body.dryRun ?? false, payments: payments)
        let outcomes = try await bulk.run(database, context: try context())
        let refused = outcomes.filter { $0.kind == .refused }.count
        return .ok(
            .init(
                body: .json(
                    .init(
                        dryRun: body.dryRun ?? false, done: outcomes.count - refused, refused: refused,
                        outcomes: try outcomes.map { try $0.api }))))
    }
}

extension APIHandler {
    /// The orders export (`ExportOrders`): the first page read in the request (a refusal answers
    /// before any byte), the rest as the client takes them.
    func exportOrders(_ input: Operations.ExportOrders.Input) async throws -> Operations.ExportOrders.Output {
        let query = input.query
        let format: RecordFileFormat = query.format == .jsonl ? .jsonl : .csv
        let status = try query.status.map { try Order.Status(known: $0.rawValue) }
        let filter = OrderFilter(
            placedFrom: query.placedFrom, placedTo: query.placedTo, sku: query.sku,
            customerID: try query.customerId.map { try parseID($0, "customer_id") },
            totalMinCents: query.totalMinCents, totalMaxCents: query.totalMaxCents)
        let first = try await read(ExportOrders(status: status, filter: filter, before: nil))
        let pages = try ExportOrders.pages(
            first: first, status: status, filter: filter, format: format, database: database, context: try context())
        let body = HTTPBody(pages, length: .unknown, iterationBehavior: .single)
        return .ok(.init(body: format == .csv ? .csv(body) : .applicationXNdjson(body)))
    }
}

extension APIHandler {
    func listOrderViews(_ input: Operations.ListOrderViews.Input) async throws -> Operations.ListOrderViews.Output {
        .ok(.init(body: .json(.init(items: try await read(ListSavedOrderViews()).map { try $0.api }))))
    }

    func saveOrderView(_ input: Operations.SaveOrderView.Input) async throws -> Operations.SaveOrderView.Output {
        let body: Components.Schemas.OrderViewDraft = try json(input.body)
        let filter = OrderFilter(
            placedFrom: body.placedFrom, placedTo: body.placedTo, sku: body.sku, totalMinCents: body.totalMinCents,
            totalMaxCents: body.totalMaxCents)
        let status = try body.status.map { try Order.Status(known: $0.rawValue) }
        let view = try await change(
            SaveOrderView(name: body.name, status: status, filter: filter), body: body, status: 201
        ) {
            try $0.api
        }
        return .created(.init(body: .json(view)))
    }

    func deleteOrderView(_ input: Operations.DeleteOrderView.Input) async throws -> Operations.DeleteOrderView.Output {
        let id = try parseID(input.path.viewId, "view_id")
        return .ok(
            .init(
                body: .json(
                    try await change(DeleteSavedOrderView(id: id), on: id, body: String?.none) {
                        try $0.api
                    })))
    }
}

extension SavedOrderView {
    var api: Components.Schemas.OrderView {
        get throws {
            .init(
                id: id.text, name: name, status: try status.map { try .init(known: $0.rawValue) },
                placedFrom: filter.placedFrom, placedTo: filter.placedTo, sku: filter.sku,
                totalMinCents: filter.totalMinCents, totalMaxCents: filter.totalMaxCents, createdAt: createdAt)
        }
    }
}

extension BulkOutcome<Order.Status> {
    var api: Components.Schemas.BulkOrderMoveResult.OutcomesPayloadPayload {
        get throws {
            .init(
                orderId: id.text, outcome: try .init(known: kind.rawValue),
                status: try state.map { try .init(known: $0.rawValue) }, problem: .init(refusal: refusal))
        }
    }
}
