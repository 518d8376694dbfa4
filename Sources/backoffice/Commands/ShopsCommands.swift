import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Shops {
    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Apply for a shop from a YAML or JSON file (no token needed); prints the application, its \
                eligibility checks and the claim code (shown once: keep it).
                """,
            discussion: """
                Example: backoffice shops apply examples/shop-application.yaml

                The file:
                  legal_name: Northwind Sports LLC
                  contact_email: owner@northwind.example     # the first partner admin once approved
                  tax_id: 12-3456789                         # the EIN
                  address: { line1: 1 Harbor Way, city: Portland, region: OR, postal_code: "97201", country: US }
                  payout_bank_account: { holder_name: Northwind Sports LLC, routing_number: "110000000", \
                account_number: "000123456789" }
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "The application, YAML or JSON.") var file: String

        func run() async throws {
            try await global.show(.single(CLIColumns.shopApplication + ["checks", "claim_code"])) { client in
                let form = try readStructuredFile(Components.Schemas.ShopApplicationForm.self, at: file)
                return try await client.applyForShop(body: .json(form))
            }
        }
    }
}
