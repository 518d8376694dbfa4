import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The board's bulk moves (`BulkOrderMoves`): the orders ticked on a tab (to accept: accept; to
    /// ship: ship, each with its tracking number and one carrier; shipped: deliver), checked first
    /// by a dry run whose page offers to make the moves it would, or made at once. Each order is its
    /// own audited change; the page lists each order's outcome. No transaction is held by the
    /// request: shipping calls the payment provider.
    func registerBulkOrders(on group: RouterGroup<AppRequestContext>, payments: any PaymentGateway) {
        post("orders/bulk", on: group, holdsTransaction: false) { console in
            let move = try OrderMove(known: console.form.text("move") ?? "")
            let dryRun = console.form.text("dry_run") == "yes"
            return try await console.submit {
                let bulk = BulkOrderMoves(
                    move: move, items: OrderBoard.bulkItems(console.form), dryRun: dryRun, payments: payments)
                let outcomes = try await bulk.run(database, context: console.context)
                return console.page(
                    "orders_bulk", title: "Orders: \(move.rawValue) in bulk",
                    OrderBoard.bulkResult(outcomes, move: move, dryRun: dryRun, form: console.form))
            } refused: { issues in
                var data = OrderBoard.bulkResult([], move: move, dryRun: dryRun, form: console.form)
                FormRefusal(issues).add(to: &data)
                return console.page(
                    "orders_bulk", title: "Orders: \(move.rawValue) in bulk", status: .unprocessableContent, data)
            }
        }
    }
}

extension OrderBoard {
    /// The move a tab's orders may make in bulk: accept the paid, ship the accepted, deliver the shipped.
    static func bulkMove(_ status: Order.Status) -> OrderMove? {
        switch status {
        case .paid: .accept
        case .accepted: .ship
        case .shipped: .deliver
        default: nil
        }
    }

    /// What the board's bulk form shows for `move`.
    static func bulkForm(_ move: OrderMove) -> [String: Any] {
        ["move": move.rawValue, "ship": move == .ship, "label": "\(label(move)) the selected orders"]
    }

    static func label(_ move: OrderMove) -> String { move.rawValue.prefix(1).uppercased() + move.rawValue.dropFirst() }

    /// The orders a bulk form ticked (`order_<id>`), each with its tracking number (`tracking_<id>`)
    /// and the form's one carrier; ordered by id, so a dry run and its confirmation list them alike.
    static func bulkItems(_ form: ConsoleForm) -> [BulkOrderItem] {
        let carrier = form.text("carrier")
        return form.values.keys.sorted().compactMap { name in
            guard name.hasPrefix("order_"), form.text(name) == "yes",
                let id = UUID(uuidString: String(name.dropFirst("order_".count)))
            else { return nil }
            return BulkOrderItem(orderID: id, carrier: carrier, trackingNumber: form.text("tracking_\(id.text)"))
        }
    }

    /// The result page's values: each order's outcome; after a dry run, the orders it would move,
    /// kept as hidden fields of the form that moves them.
    static func bulkResult(_ outcomes: [BulkOrderOutcome], move: OrderMove, dryRun: Bool, form: ConsoleForm)
        -> [String: Any]
    {
        let ready = outcomes.filter { $0.kind == .wouldDo }
        return [
            "move": move.rawValue, "dryRun": dryRun, "carrier": form.text("carrier") ?? "",
            "verb": label(move), "ready": ready.count, "canConfirm": dryRun && !ready.isEmpty,
            "refused": outcomes.count(where: { $0.kind == .refused }),
            "done": outcomes.count(where: { $0.kind == .done }),
            "outcomes": outcomes.map { outcome in
                [
                    "id": outcome.id.text, "shortID": String(outcome.id.text.prefix(8)),
                    "outcome": outcome.kind == .refused ? "refused" : dryRun ? "would \(move.rawValue)" : "done",
                    "refused": outcome.kind == .refused,
                    "detail": outcome.state.map { "\(label($0))" } ?? problem(outcome.refusal),
                ] as [String: Any]
            },
            "hidden": ready.map {
                ["id": $0.id.text, "tracking": form.text("tracking_\($0.id.text)") ?? ""]
            },
        ]
    }

    /// What a refused order's problem says, as its page would say it.
    private static func problem(_ refusal: (any Error)?) -> String {
        guard let problem = refusal.flatMap(Problem.describing) else { return "" }
        return problem.detail ?? problem.title
    }
}
