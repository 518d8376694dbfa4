import ArgumentParser
import BackofficeAPI
import Foundation

extension Orders {
    /// The orders export, streamed to a file or stdout with the list's filters.
    struct Export: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "csv (default) or jsonl.") var format: GoodsFormat = .csv
        @Option(help: "Only orders in this state.") var status: Components.Schemas.OrderStatus?
        @Option(help: "Placed at or after this RFC 3339 time.") var placedFrom: String?
        @Option(help: "Placed before this RFC 3339 time.") var placedTo: String?
        @Option(help: "A good's SKU on one of the lines.") var sku: String?
        @Option(help: "A customer's id (platform roles only).") var customerID: String?
        @Option(help: "Totals of at least these cents.") var totalMinCents: Int64?
        @Option(help: "Totals of at most these cents.") var totalMaxCents: Int64?
        @Option(help: "Write to this file instead of stdout.") var file: String?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().exportOrders(
                    query: .init(
                        format: format == .jsonl ? .jsonl : .csv, status: status,
                        placedFrom: try parseTime(placedFrom, "--placed-from"),
                        placedTo: try parseTime(placedTo, "--placed-to"), sku: sku, customerId: customerID,
                        totalMinCents: totalMinCents, totalMaxCents: totalMaxCents))
                switch try answered(output).ok.body {
                case .csv(let body):
                    try await Transfer.download(body, to: file, counting: "orders", skippingHeaderLine: true)
                case .applicationXNdjson(let body): try await Transfer.download(body, to: file, counting: "orders")
                }
            }
        }
    }
}
