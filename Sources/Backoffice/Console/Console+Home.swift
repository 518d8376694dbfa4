import Foundation
import Hummingbird

extension Console {
    /// The operator's home: for a shop, the orders to handle by state and the goods low in
    /// stock; for everyone, where to go from here.
    func registerHome(on group: RouterGroup<AppRequestContext>) {
        get("home", on: group) { console in
            let links = console.navigation.items(
                for: console.principal.role, policies: console.context.policies, current: ""
            ).filter {
                $0.href != "/console/home"
            }
            var data: [String: Any] = ["links": links]
            let shop = console.principal.knownRole.map { !$0.isPlatform } ?? false
            if shop, console.may(OrderCountsByStatus.action) {
                let counts = try await console.read(OrderCountsByStatus())
                data["orderStates"] = OrderBoard.tabs.prefix(4).map { status in
                    [
                        "label": OrderBoard.label(status), "count": counts[status] ?? 0,
                        "href": "/console/orders?status=\(status.rawValue)",
                    ]
                        as [String: Any]
                }
                data["toHandle"] = (counts[.paid] ?? 0) + (counts[.accepted] ?? 0)
                data["showsOrders"] = true
            }
            if shop, console.may(LowStockGoods.action) {
                let low = try await console.read(LowStockGoods())
                data["lowStock"] = low.map(GoodView.init)
                data["hasLowStock"] = !low.isEmpty
                data["showsStock"] = true
            }
            return console.page("home", title: "Home", data)
        }
    }
}
