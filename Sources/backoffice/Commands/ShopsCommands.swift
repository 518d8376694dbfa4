import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

let shopApplicationColumns = [
    "id", "status", "eligible", "legal_name", "tax_id", "contact_email", "submitted_at", "tenant_id",
]

struct Shops: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shops",
        abstract:
            """
            Shop applications: apply (no token), backend managers list, show, approve or reject, the applicant \
            claims its shop.
            """,
        discussion: "Example: backoffice shops list --status pending && backoffice shops approve 4f0e…",
        subcommands: [Apply.self, List.self, Show.self, Approve.self, Reject.self, Claim.self])

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apply",
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
            try await global.show(.single(shopApplicationColumns + ["checks", "claim_code"])) { client in
                let form = try readStructuredFile(Components.Schemas.ShopApplicationForm.self, at: file)
                return try await client.applyForShop(body: .json(form))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List applications in the order they arrived (the waiting list: --status pending).",
            discussion: "Example: backoffice shops list --status pending")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions
        @Option(help: "pending, approved or rejected.") var status: Components.Schemas.ShopApplicationStatus?

        func run() async throws {
            try await global.show(.page(shopApplicationColumns)) { client in
                try await client.listShopApplications(
                    query: .init(status: status, limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one application with its check results.", discussion: "Example: backoffice shops show 4f0e…"
        )
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Application id.") var id: String

        func run() async throws {
            try await global.show(
                .single(shopApplicationColumns + ["address", "payout_account", "checks", "decision_reason", "version"])
            ) {
                try await $0.getShopApplication(path: .init(applicationId: id))
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract:
                "Approve an eligible application: creates the tenant and its first partner admin (no credential).",
            discussion: """
                The applicant then claims the admin's token with its claim code (`backoffice shops claim`).
                Example: backoffice shops approve 4f0e… --slug northwind --reason "checks passed"
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Application id.") var id: String
        @Option(help: "The tenant's slug (default: from the legal name).") var slug: String?
        @Option(help: "A note for the audit log.") var reason: String?

        func run() async throws {
            try await global.show(
                .single(["application.id", "tenant.id", "tenant.slug", "admin.id", "admin.email"])
            ) {
                client in
                try await client.approveShopApplication(
                    path: .init(applicationId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(slug: slug, reason: reason))
                )
            }
        }
    }

    struct Reject: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reject",
            abstract: "Reject a waiting application (reason required).",
            discussion: "Example: backoffice shops reject 4f0e… --reason \"bank account closed\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Application id.") var id: String
        @Option(help: "Why (recorded in the audit log).") var reason: String

        func run() async throws {
            try await global.show(.single(shopApplicationColumns + ["decision_reason"])) { client in
                try await client.rejectShopApplication(
                    path: .init(applicationId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(reason: reason)))
            }
        }
    }
}

extension Shops {
    struct Claim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "claim",
            abstract:
                """
                Claim an approved shop with the claim code its application was answered with (no token): its \
                first admin's token, shown once.
                """,
            discussion: "Example: backoffice shops claim 4f0e… --code sc_…   (once, within 14 days of applying)")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Application id.") var id: String
        @Option(help: "The claim code.") var code: String

        func run() async throws {
            try await global.show(.single(["token.id", "token.operator_id", "token.tenant_id", "secret"])) { client in
                try await client.claimShop(path: .init(applicationId: id), body: .json(.init(claimCode: code)))
            }
        }
    }
}
