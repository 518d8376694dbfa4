import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The operator's home: for a shop, its sales, orders and best sellers over a period with
    /// charts, the orders to handle by state and the goods low in stock; for everyone, where to
    /// go from here.
    func registerHome(on group: RouterGroup<AppRequestContext>) {
        get("home", on: group) { console in
            let links = console.navigation.items(
                for: console.principal.role, policies: console.context.policies, current: ""
            ).filter {
                $0.href != "/console/home"
            }
            var data: [String: Any] = [
                "linksHTML": HTML(joining: links.map { "<li><a href=\"\($0.href)\">\($0.label)</a></li>" as HTML })
            ]
            let role = console.principal.knownRole
            let shop = role.map { !$0.isPlatform } ?? false
            let (now, today) = (console.now, UTCDay(console.now))
            if shop, console.may(DailySales.action) { try await console.addShopFigures(to: &data, today: today) }
            if role == .auditor { try await console.addAuditFigures(to: &data, now: now) }
            if role == .backendManager { try await console.addManagerFigures(to: &data, now: now) }
            if role == .platformAdmin { try await console.addPlatformFigures(to: &data, today: today) }
            if shop, console.may(OrderCountsByStatus.action) {
                let counts = try await console.read(OrderCountsByStatus())
                data["orderStates"] = OrderBoard.tabs.prefix(4).map { status in
                    [
                        "label": OrderBoard.label(status), "count": Figures.grouped(counts[status] ?? 0),
                        "href": "/console/orders?status=\(status.rawValue)",
                    ]
                        as [String: Any]
                }
                data["toHandle"] = Figures.grouped((counts[.paid] ?? 0) + (counts[.accepted] ?? 0))
                data["showsOrders"] = true
            }
            if shop, console.may(LowStockGoods.action) {
                let low = try await console.read(LowStockGoods())
                data["lowStockRowsHTML"] = HTML(
                    joining: low.map(GoodView.init).map {
                        """
                        <tr><td><code>\($0.sku)</code></td><td><a href="/console/goods/\($0.id)">\($0.name)</a></td>\
                        <td class="num">\(Int($0.stock))</td></tr>
                        """
                    })
                data["hasLowStock"] = !low.isEmpty
                data["showsStock"] = true
            }
            return console.page("home", title: "Home", data)
        }
    }
}

extension ConsoleRequest {
    /// The period the picker chose, and the picker's links.
    fileprivate func period(today: UTCDay, into data: inout [String: Any]) throws -> HomePeriod {
        let period = try HomePeriod(period: form.text("period"), month: form.text("month"), today: today)
        data["periodLabel"] = period.label
        data["periodHTML"] = ConsoleNavigation.links(period.choices(path: "/console/home", today: today))
        return period
    }

    /// An auditor's figures: events by day and family, the last verification, the newest checkpoint.
    fileprivate func addAuditFigures(to data: inout [String: Any], now: Date) async throws {
        let period = try period(today: UTCDay(now), into: &data)
        let (latest, checkpoint) = try await read(LatestAuditVerification())
        let home = AuditorHome(
            period: period, actions: try await read(DailyAuditActions(range: period.range)), latest: latest,
            checkpointTakenAt: checkpoint)
        data["showsAudit"] = true
        data["auditChartHTML"] = home.chart.html
        data["auditTotal"] = Figures.grouped(home.total)
        data["verification"] = home.verification(now: now)
    }

    /// A backend manager's figures: customers by status, locks and appeals, FitPoints, challenges, applications.
    fileprivate func addManagerFigures(to data: inout [String: Any], now: Date) async throws {
        let period = try period(today: UTCDay(now), into: &data)
        let home = ManagerHome(
            period: period, customers: try await read(CustomersOverTime(range: period.range)),
            locks: try await read(LocksAndAppeals(range: period.range)),
            flows: try await read(FitPointsFlows(range: period.range)), challenges: try await read(RunningChallenges()),
            applications: try await read(WaitingShopApplications()))
        data["showsManager"] = true
        data["managerCards"] = home.cards(now: now)
        data["customersChartHTML"] = home.customersChart.html
        data["locksChartHTML"] = home.locksChart.html
        data["flowsChartHTML"] = home.flowsChart.html
        data["balanceChartHTML"] = home.balanceChart.html
        data["challenges"] = home.challengeRows(now: now)
        data["hasChallenges"] = !home.challenges.isEmpty
        guard may(SubscriptionFiguresOverTime.action) else { return }
        let business = SubscriptionHome(
            period: period, days: try await read(SubscriptionFiguresOverTime(range: period.range)))
        data["showsSubscriptions"] = true
        data["subscriptionCards"] = business.cards
        data["mrrChartHTML"] = business.revenueChart.html
        data["subscribersChartHTML"] = business.subscribersChart.html
        data["renewalsChartHTML"] = business.renewalsChart.html
    }

    /// A platform admin's figures: the shops side by side, operators and tokens by role.
    fileprivate func addPlatformFigures(to data: inout [String: Any], today: UTCDay) async throws {
        let period = try period(today: today, into: &data)
        let home = PlatformAdminHome(
            period: period, shops: try await read(SalesByShop(range: period.range)),
            roles: try await read(OperatorsByRole()))
        data["showsPlatform"] = true
        data["shopsSalesHTML"] = home.salesChart.html
        data["shopsOrdersHTML"] = home.ordersChart.html
        data["shopRowsHTML"] = home.shopRowsHTML
        data["roleRowsHTML"] = home.roleRowsHTML
    }

    /// A shop's figures for the period the picker chose (`period` or `month`): totals, charts and
    /// best sellers, each from its one statement.
    fileprivate func addShopFigures(to data: inout [String: Any], today: UTCDay) async throws {
        let period = try period(today: today, into: &data)
        let both = try ReportRange(from: period.compared.from, through: period.range.through)
        let daily = try await read(DailySales(range: both))
        let home = ShopHome(
            period: period, current: daily.filter { $0.start >= period.range.from },
            previous: daily.filter { $0.start <= period.compared.through },
            states: try await read(DailyOrderStates(range: period.range)),
            bestSellers: try await read(BestSellers(range: period.range)))
        data["showsSales"] = true
        data["totals"] = home.totals
        data["netChartHTML"] = home.netChart.html
        data["grossChartHTML"] = home.grossChart.html
        data["statesChartHTML"] = home.statesChart.html
        data["bestSellerRowsHTML"] = home.bestSellerRowsHTML
        data["hasBestSellers"] = !home.bestSellers.isEmpty
    }
}
