import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

let orderColumns = [
    "id", "status", "total_cents", "total_fitpoints", "line_count", "shipping.name", "carrier", "tracking_number",
    "created_at", "version",
]

struct Orders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orders",
        abstract: "Your shop's orders: list, show, accept, ship, deliver, cancel, refund (partner tokens).",
        discussion: """
            An order moves pending_payment → paid → accepted → shipped → delivered; it can be cancelled \
            before it ships (stock, FitPoints and the card authorization released) and refunded after.

            Example: backoffice orders list --status paid && backoffice orders accept 8c1f…
            """,
        subcommands: [
            List.self, Show.self, MoveCommand<Accept>.self, MoveCommand<Ship>.self, MoveCommand<Deliver>.self,
            MoveCommand<Cancel>.self, MoveCommand<Refund>.self,
        ])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List orders, newest first.", discussion: "Example: backoffice orders list --status paid")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions
        @Option(help: "pending_payment, paid, accepted, shipped, delivered, cancelled or refunded.") var status:
            Components.Schemas.OrderStatus?

        func run() async throws {
            try await global.show(.page(orderColumns)) {
                try await $0.listOrders(query: .init(status: status, limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one order with its lines, shipping address and payment.",
            discussion: "Example: backoffice orders show 8c1f…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String

        func run() async throws {
            try await global.show(.single(orderColumns + ["shipping.address", "lines", "payment", "status_reason"])) {
                try await $0.getOrder(path: .init(orderId: id))
            }
        }
    }

    enum Accept: Move {
        static let configuration = CommandConfiguration(
            commandName: "accept",
            abstract: "Accept a paid order for fulfilment.", discussion: "Example: backoffice orders accept 8c1f…")
        static let columns = orderColumns
        static func send(_ client: Client, _ order: OrderID, key: String) async throws -> Operations.AcceptOrder.Output
        {
            try await client.acceptOrder(path: .init(orderId: order.id), headers: .init(idempotencyKey: key))
        }
    }

    enum Ship: Move {
        static let configuration = CommandConfiguration(
            commandName: "ship",
            abstract: "Ship an accepted order (the card payment is captured now).",
            discussion: "Example: backoffice orders ship 8c1f… --carrier UPS --tracking-number 1Z999AA10123456784")
        static let columns = orderColumns
        struct Arguments: ParsableArguments {
            @Argument(help: "Order id.") var id: String
            @Option(help: "The carrier.") var carrier: String
            @Option(help: "The carrier's tracking number.") var trackingNumber: String
        }
        static func send(_ client: Client, _ order: Arguments, key: String) async throws -> Operations.ShipOrder.Output
        {
            try await client.shipOrder(
                path: .init(orderId: order.id), headers: .init(idempotencyKey: key),
                body: .json(.init(carrier: order.carrier, trackingNumber: order.trackingNumber)))
        }
    }

    enum Deliver: Move {
        static let configuration = CommandConfiguration(
            commandName: "deliver",
            abstract: "Record a shipped order's delivery.", discussion: "Example: backoffice orders deliver 8c1f…")
        static let columns = orderColumns
        static func send(_ client: Client, _ order: OrderID, key: String) async throws -> Operations.DeliverOrder.Output
        {
            try await client.deliverOrder(path: .init(orderId: order.id), headers: .init(idempotencyKey: key))
        }
    }

    enum Cancel: Move {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: """
                Cancel an order before it ships (reason required): stock, FitPoints and the card authorization \
                are released.
                """,
            discussion: "Example: backoffice orders cancel 8c1f… --reason \"Out of stock at the warehouse\"")
        static let columns = orderColumns + ["status_reason"]
        static func send(_ client: Client, _ order: ResourceIDWithReason<OrderName>, key: String) async throws
            -> Operations.CancelOrder.Output
        {
            try await client.cancelOrder(
                path: .init(orderId: order.id), headers: .init(idempotencyKey: key),
                body: .json(.init(reason: order.reason)))
        }
    }

    enum Refund: Move {
        static let configuration = CommandConfiguration(
            commandName: "refund",
            abstract:
                "Refund a shipped or delivered order (reason required): the captured amount and the FitPoints go back.",
            discussion: "Example: backoffice orders refund 8c1f… --reason \"Arrived damaged\"")
        static let columns = orderColumns + ["status_reason", "payment"]
        static func send(_ client: Client, _ order: ResourceIDWithReason<OrderName>, key: String) async throws
            -> Operations.RefundOrder.Output
        {
            try await client.refundOrder(
                path: .init(orderId: order.id), headers: .init(idempotencyKey: key),
                body: .json(.init(reason: order.reason)))
        }
    }
}

/// An order, as a move's id argument names it.
enum OrderName: ResourceName { static let name = "Order" }
typealias OrderID = ResourceID<OrderName>

struct Payments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payments",
        abstract: "Card payments at the provider: reconcile what its webhooks did not tell (backend managers).",
        subcommands: [Reconcile.self])

    struct Reconcile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reconcile",
            abstract:
                "Ask the provider about payments whose verdict was never recorded and settle their orders (audited).",
            discussion: "Example: backoffice payments reconcile --older-than-minutes 30   (cron: every 10 minutes)")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Only payments pending at least this long (default 10).") var olderThanMinutes: Int?

        func run() async throws {
            try await global.show(.single(["checked", "completed", "cancelled", "still_pending"])) {
                try await $0.reconcilePayments(body: .json(.init(olderThanMinutes: olderThanMinutes)))
            }
        }
    }
}

extension Components.Schemas.OrderStatus: ExpressibleByArgument {}
