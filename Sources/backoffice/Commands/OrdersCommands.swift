import ArgumentParser
import BackofficeAPI
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
        subcommands: [List.self, Show.self, Accept.self, Ship.self, Deliver.self, Cancel.self, Refund.self])

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

    struct Accept: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "accept",
            abstract: "Accept a paid order for fulfilment.", discussion: "Example: backoffice orders accept 8c1f…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String

        func run() async throws {
            try await global.show(.single(orderColumns)) {
                try await $0.acceptOrder(path: .init(orderId: id), headers: .init(idempotencyKey: global.changeKey()))
            }
        }
    }

    struct Ship: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ship",
            abstract: "Ship an accepted order (the card payment is captured now).",
            discussion: "Example: backoffice orders ship 8c1f… --carrier UPS --tracking-number 1Z999AA10123456784")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String
        @Option(help: "The carrier.") var carrier: String
        @Option(help: "The carrier's tracking number.") var trackingNumber: String

        func run() async throws {
            try await global.show(.single(orderColumns)) {
                try await $0.shipOrder(
                    path: .init(orderId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(carrier: carrier, trackingNumber: trackingNumber)))
            }
        }
    }

    struct Deliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deliver",
            abstract: "Record a shipped order's delivery.", discussion: "Example: backoffice orders deliver 8c1f…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String

        func run() async throws {
            try await global.show(.single(orderColumns)) {
                try await $0.deliverOrder(path: .init(orderId: id), headers: .init(idempotencyKey: global.changeKey()))
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract:
                """
                    Cancel an order before it ships (reason required): stock, FitPoints and the card authorization \
                    are released.
                    """,
            discussion: "Example: backoffice orders cancel 8c1f… --reason \"Out of stock at the warehouse\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String
        @Option(help: "Why (recorded in the audit log).") var reason: String

        func run() async throws {
            try await global.show(.single(orderColumns + ["status_reason"])) {
                try await $0.cancelOrder(
                    path: .init(orderId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(reason: reason)))
            }
        }
    }

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refund",
            abstract:
                "Refund a shipped or delivered order (reason required): the captured amount and the FitPoints go back.",
            discussion: "Example: backoffice orders refund 8c1f… --reason \"Arrived damaged\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Order id.") var id: String
        @Option(help: "Why (recorded in the audit log).") var reason: String

        func run() async throws {
            try await global.show(.single(orderColumns + ["status_reason", "payment"])) {
                try await $0.refundOrder(
                    path: .init(orderId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(reason: reason)))
            }
        }
    }
}

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
