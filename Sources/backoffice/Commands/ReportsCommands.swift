import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

/// `backoffice reports`: the sales figures behind the shops' homes, for spreadsheets.
extension Reports {
    static let columns = [
        "start", "end", "orders", "gross_cents", "refunds", "refunded_cents", "net_cents", "gross_fitpoints",
        "refunded_fitpoints", "net_fitpoints",
    ]

    struct Sales: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String?
        @Option(help: "Last day, YYYY-MM-DD (UTC), included.") var to: String?
        @Option(help: "day, week or month (default day).")
        var granularity: Operations.GetSalesReport.Input.Query.GranularityPayload?

        func run() async throws {
            try await global.show(.rows(key: "rows", Reports.columns)) {
                try await $0.getSalesReport(query: .init(from: from, to: to, granularity: granularity))
            }
        }
    }

    struct Shops: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "First day, YYYY-MM-DD (UTC).") var from: String?
        @Option(help: "Last day, YYYY-MM-DD (UTC), included.") var to: String?

        func run() async throws {
            try await global.show(.rows(key: "shops", ["tenant_id", "name", "figures"])) {
                try await $0.getShopsReport(query: .init(from: from, to: to))
            }
        }
    }

    struct Rebuild: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "One shop's tenant id; without it, every shop.") var tenant: String?

        func run() async throws {
            try await global.show(.single(["differed"])) {
                try await $0.rebuildShopRollups(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(.init(tenantId: tenant)))
            }
        }
    }
}

extension Operations.GetSalesReport.Input.Query.GranularityPayload: ExpressibleByArgument {}
