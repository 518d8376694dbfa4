import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

extension SalesFigures {
    var api: Components.Schemas.SalesFigures {
        .init(
            start: start.description, end: end.description, orders: orders, grossCents: grossCents, refunds: refunds,
            refundedCents: refundedCents, netCents: netCents, grossFitpoints: grossFitPoints,
            refundedFitpoints: refundedFitPoints, netFitpoints: netFitPoints)
    }

    /// The CSV header and rows of `SalesFigures` (the JSON's keys, in its order).
    static let csvHeader =
        "start,end,orders,gross_cents,refunds,refunded_cents,net_cents,gross_fitpoints,refunded_fitpoints,net_fitpoints"

    var csvRow: String {
        [
            start.description, end.description, String(orders), String(grossCents), String(refunds),
            String(refundedCents), String(netCents), String(grossFitPoints), String(refundedFitPoints),
            String(netFitPoints),
        ].joined(separator: ",")
    }
}

extension APIHandler {
    /// Today's UTC day by the database's clock.
    var today: UTCDay { UTCDay(now) }

    func getSalesReport(_ input: Operations.GetSalesReport.Input) async throws -> Operations.GetSalesReport.Output {
        let query = input.query
        let range = try ReportRange(from: query.from, to: query.to, today: today)
        let granularity = ReportGranularity(rawValue: query.granularity?.rawValue ?? "day") ?? .day
        let daily = try await read(DailySales(range: range))
        let rows = daily.grouped(by: granularity)
        let total = daily.total ?? SalesFigures(start: range.from, end: range.through)
        if query.format == .csv {
            let text = ([SalesFigures.csvHeader] + rows.map(\.csvRow)).joined(separator: "\r\n") + "\r\n"
            return .ok(.init(body: .csv(HTTPBody(text))))
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: range.from.description, to: range.through.description,
                        granularity: try .init(known: granularity.rawValue), days: .utc, rows: rows.map(\.api),
                        total: total.api))))
    }

    func getShopsReport(_ input: Operations.GetShopsReport.Input) async throws -> Operations.GetShopsReport.Output {
        let range = try ReportRange(from: input.query.from, to: input.query.to, today: today)
        let shops = try await read(SalesByShop(range: range))
        return .ok(
            .init(
                body: .json(
                    .init(
                        from: range.from.description, to: range.through.description,
                        shops: shops.map { .init(tenantId: $0.tenantID.text, name: $0.name, figures: $0.figures.api) }
                    ))))
    }

    func rebuildShopRollups(_ input: Operations.RebuildShopRollups.Input) async throws
        -> Operations.RebuildShopRollups.Output
    {
        let body: Components.Schemas.RollupRebuildRequest = try json(input.body)
        let tenant = try body.tenantId.map { try parseID($0, "tenant_id") }
        let outcome = try await change(RebuildShopRollups(tenantID: tenant), body: body) { outcome in
            Components.Schemas.RollupRebuild(differed: .init(additionalProperties: outcome.differed))
        }
        return .ok(.init(body: .json(outcome)))
    }
}
