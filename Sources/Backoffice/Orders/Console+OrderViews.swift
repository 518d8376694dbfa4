import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The operator's saved views of the orders board (`SaveOrderView`, `DeleteSavedOrderView`):
    /// the board's state and filter saved under a name, listed on the board as links that open it
    /// so; each operator's own. Each a change in the request's one transaction, audited.
    func registerOrderViews(on group: RouterGroup<AppRequestContext>) {
        post("orders/views", on: group) { console in
            let (filter, _) = try OrderBoard.filter(console.form)
            let status = try console.form.text("status").map { try OrderBoard.status($0) }
            return try await console.submit {
                let view = try await console.run(
                    SaveOrderView(name: console.form.text("name") ?? "", status: status, filter: filter))
                return console.redirect(OrderBoard.link(view), flash: "Saved the view \(view.name).")
            } refused: { issues in
                // Back to the board as it was, saying why (its form is the board's own).
                let message = issues.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
                return console.redirect(
                    OrderBoard.link(status, filter), flash: "The view was not saved: \(message).")
            }
        }
        post("orders/views/{id}/delete", on: group) { console in
            let view = try await console.run(DeleteSavedOrderView(id: try console.routeID()))
            return console.redirect("/console/orders", flash: "Deleted the view \(view.name).")
        }
    }
}

extension OrderBoard {
    /// The board's path a view opens: its state, and its filter as the board's form writes it
    /// (UTC days, both included; dollars).
    static func link(_ view: SavedOrderView) -> String { link(view.status, view.filter) }

    /// The board's path showing `status` narrowed by `filter`.
    static func link(_ status: Order.Status?, _ filter: OrderFilter) -> String {
        func dollars(_ cents: Int64?) -> String? { cents.map { String(format: "%d.%02d", $0 / 100, $0 % 100) } }
        return ConsoleLinks.path(
            "/console/orders",
            [
                "status": status?.rawValue, "from": filter.placedFrom.map { UTCDay($0).description },
                "to": filter.placedTo.map { UTCDay($0.addingTimeInterval(-1)).description }, "sku": filter.sku,
                "min_usd": dollars(filter.totalMinCents), "max_usd": dollars(filter.totalMaxCents),
            ])
    }

    /// The board's list of the operator's views, when its role keeps views.
    static func views(_ console: ConsoleRequest) async throws -> [[String: String]] {
        guard console.may(ListSavedOrderViews.action) else { return [] }
        return try await console.read(ListSavedOrderViews()).map {
            ["id": $0.id.text, "name": $0.name, "href": link($0)]
        }
    }
}
