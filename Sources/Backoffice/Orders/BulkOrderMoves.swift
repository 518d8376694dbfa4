import BackofficePlatform
import Foundation
import PostgresNIO

/// One order of a bulk move: its id and, to ship it, its carrier and tracking number.
package struct BulkOrderItem: Sendable, Codable, Equatable {
    package var orderID: UUID
    package var carrier: String?
    package var trackingNumber: String?

    package init(orderID: UUID, carrier: String? = nil, trackingNumber: String? = nil) {
        (self.orderID, self.carrier, self.trackingNumber) = (orderID, carrier, trackingNumber)
    }
}

/// What one order's move came to: its state after (or, in a dry run, the state it would reach).
package typealias BulkOrderOutcome = BulkOutcome<Order.Status>

/// A partner accepts, ships or delivers up to 500 orders at once (`orders.bulk`, and each order's
/// own move permission). Each order is its own audited change — the same use case as the move
/// alone (`AdvanceOrder`, `ShipOrder`), so a refusal of one (another state, a missing tracking
/// number, the provider refusing a capture, another shop's order: not found) leaves the others
/// done; not all or nothing. The answer lists each order's outcome in the order asked. A dry run
/// changes nothing and says what each move would do, checked as the move checks it. A repeat of the
/// same bulk answers the orders moved already as refused with their state now.
package struct BulkOrderMoves: Sendable {
    package static let action: Action = "orders.bulk"
    /// The moves a bulk may make (cancel and refund give money back and need a reason each).
    package static let moves: Set<OrderMove> = [.accept, .ship, .deliver]
    let move: OrderMove
    let items: [BulkOrderItem]
    let dryRun: Bool
    let payments: any PaymentGateway

    package init(move: OrderMove, items: [BulkOrderItem], dryRun: Bool, payments: any PaymentGateway) {
        (self.move, self.items, self.dryRun, self.payments) = (move, items, dryRun, payments)
    }

    /// Checks the bulk itself: a move it may make, 1 to 500 orders, each once.
    func check() throws {
        var validation = Validation()
        validation.require(
            Self.moves.contains(move), "move", "not_bulk", "accept, ship or deliver (cancel and refund one at a time)")
        validation.require(
            (1...Bulk.limit).contains(items.count), "orders", "out_of_range", "1 to \(Bulk.limit) orders")
        validation.require(
            Set(items.map(\.orderID)).count == items.count, "orders", "duplicate_order", "each order at most once")
        try validation.check()
    }

    /// Runs the bulk for `context`'s principal: the bulk's permission and the move's, then each
    /// order's move in turn (or, for a dry run, its check).
    package func run(_ database: Database, context: OperationContext) async throws -> [BulkOrderOutcome] {
        try context.permit(Self.action)
        try context.permit(move.action)
        try check()
        if dryRun { return try await database.read(CheckOrderMoves(move: move, items: items), context: context) }
        let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.orderID, $0) })
        return try await Bulk.each(items.map(\.orderID)) { id in
            try await perform(byID[id]!, database, context: context).order.status
        }
    }

    /// One order's move, as the move alone makes it.
    private func perform(_ item: BulkOrderItem, _ database: Database, context: OperationContext) async throws
        -> OrderDetail
    {
        guard move == .ship else {
            return try await database.run(AdvanceOrder(orderID: item.orderID, move: move), context: context)
        }
        let ship = ShipOrder(
            orderID: item.orderID, carrier: item.carrier ?? "", trackingNumber: item.trackingNumber ?? "",
            payments: payments)
        let outcome = try await database.runStaged(ship, context: context)
        guard outcome.refused == nil else { throw ShipOrder.refusedByProvider }
        return outcome.detail
    }
}

/// A bulk move's dry run: each order read (another shop's is not found) and checked as its move
/// checks it (its state; for a shipment, the carrier and tracking number).
struct CheckOrderMoves: Query {
    static let action = BulkOrderMoves.action
    let move: OrderMove
    let items: [BulkOrderItem]

    func read(in unit: UnitOfWork) async throws -> [BulkOrderOutcome] {
        let orders = try await unit.all(
            "SELECT \(unescaped: Order.columns) FROM orders o WHERE o.id = ANY(\(items.map(\.orderID)))",
            as: Order.self)
        let byID = Dictionary(uniqueKeysWithValues: orders.map { ($0.id, $0) })
        return items.map { item in
            do {
                guard let order = byID[item.orderID] else { throw DomainError.notFound("Order \(item.orderID.text)") }
                try OrderTransition.check(order, to: move.target)
                if move == .ship { try ShipOrder.check(carrier: item.carrier, trackingNumber: item.trackingNumber) }
                return BulkOrderOutcome(id: item.orderID, kind: .wouldDo, state: move.target)
            } catch {
                return BulkOrderOutcome(id: item.orderID, kind: .refused, refusal: error)
            }
        }
    }
}
