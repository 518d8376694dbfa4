import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

/// `backoffice reports`: the sales figures behind the shops' homes, for spreadsheets.
struct Reports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sales by day, week or month; every shop side by side; rebuilding the daily figures.",
        discussion: """
            Days are UTC. Gross: orders placed and paid (refunded later or not); refunds count on the day they \
            were made; net = gross − refunds. Money in cents.

            Example: backoffice reports sales --from 2026-11-01 --to 2026-11-30 --output csv > november.csv
            """,
        subcommands: [Sales.self, Shops.self, Rebuild.self])

    static let columns = [
        "start", "end", "orders", "gross_cents", "refunds", "refunded_cents", "net_cents", "gross_fitpoints",
        "refunded_fitpoints", "net_fitpoints",
    ]

    struct Sales: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Your shop's sales (every shop's for a platform role), a row per day, week or month.",
            discussion: """
                Without --from and --to: the 30 days up to today (UTC). Weeks run Monday to Sunday; the first and \
                last row are cut to the range.

                Example: backoffice reports sales --from 2026-10-01 --to 2026-12-31 --granularity month
                """)
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
        static let configuration = CommandConfiguration(
            abstract: "Every shop's orders and sales side by side (platform roles).",
            discussion: "Example: backoffice reports shops --from 2026-11-01 --to 2026-11-30")
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
        static let configuration = CommandConfiguration(
            abstract: "Recompute the shops' daily figures from their orders; prints the rows that differed (audited).",
            discussion: "Example: backoffice reports rebuild --tenant 3f1c…   (without --tenant: every shop)")
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
