import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

let tenantColumns = ["id", "slug", "name", "created_at", "version"]
let operatorColumns = ["id", "tenant_id", "email", "role", "kind", "status", "created_at"]
let tokenColumns = ["id", "operator_id", "tenant_id", "role", "name", "expires_at", "last_used_at", "revoked_at"]

struct Tenants: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenants",
        abstract: "Partner tenants (platform admins).", discussion: "Example: backoffice tenants list",
        subcommands: [Create.self, List.self, Show.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a partner tenant.",
            discussion: "Example: backoffice tenants create --slug green-grocer --name \"Green Grocer Ltd\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Unique short name (lower-case letters, digits, dashes).") var slug: String
        @Option(help: "Display name.") var name: String

        func run() async throws {
            try await global.show(.single(tenantColumns)) { client in
                try await client.createTenant(
                    headers: .init(idempotencyKey: global.changeKey()), body: .json(.init(slug: slug, name: name)))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List tenants by slug.", discussion: "Example: backoffice tenants list")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(tenantColumns)) { client in
                try await client.listTenants(query: .init(limit: page.limit, cursor: page.cursor))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a tenant.", discussion: "Example: backoffice tenants show 3c9d…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Tenant id.") var id: String

        func run() async throws {
            try await global.show(.single(tenantColumns)) { client in
                try await client.getTenant(path: .init(tenantId: id))
            }
        }
    }
}

struct Operators: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Operators (people) and service principals.",
        discussion:
            "Example: backoffice operators create --email sam@green-grocer.example --role partner_staff --tenant 3c9d…",
        subcommands: [Create.self, List.self, Disable.self, Invite.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create an operator (partner roles need --tenant, implied for partner admins).",
            discussion:
                """
                Example: backoffice operators create --email sam@green-grocer.example --role partner_staff \
                --tenant 3c9d…
                """
        )
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option var email: String
        @Option(help: "platform_admin, backend_manager, auditor, partner_admin, partner_staff or app_service.")
        var role: Components.Schemas.Role
        @Option(help: "Tenant id (partner roles).") var tenant: String?

        func run() async throws {
            try await global.show(.single(operatorColumns)) { client in
                try await client.createOperator(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(email: email, role: role, tenantId: tenant)))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List operators you can see.", discussion: "Example: backoffice operators list --tenant 3c9d…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Only this tenant's.") var tenant: String?
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(operatorColumns)) { client in
                try await client.listOperators(query: .init(limit: page.limit, cursor: page.cursor, tenantId: tenant))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable",
            abstract: "Disable an operator; its tokens are refused at once.",
            discussion: "Example: backoffice operators disable 7b2f… --reason \"Left the company\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Operator id.") var id: String
        @Option(help: "Why (recorded in the audit log).") var reason: String

        func run() async throws {
            try await global.show(.single(operatorColumns + ["disabled_at"])) { client in
                try await client.disableOperator(
                    path: .init(operatorId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(reason: reason)))
            }
        }
    }
}

extension Operators {
    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invite",
            abstract:
                """
                Invite a person operator to the web console: a one-time link (24 h), emailed to it, where it sets \
                its password.
                """,
            discussion: """
                The link goes to the operator's email address and nowhere else: this prints where it was sent. A \
                platform admin may ask for the link to be printed instead (--show-link, for a person without \
                working email; audited as shown): it is printed once and stored nowhere. A new invitation makes \
                the operator's earlier unused links invalid.
                Example: backoffice operators invite 7b2f…
                """)
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Operator id.") var id: String
        @Flag(help: "Print the link instead of emailing it (platform admins only).") var showLink = false

        func run() async throws {
            try await runCommand {
                let output = try await global.client().inviteOperator(
                    path: .init(operatorId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: showLink ? .json(.init(showLink: true)) : nil)
                switch output {
                case .created(let created):
                    let body = try created.body.json
                    if global.format == .table {
                        print("email       \(body.email)\nexpires_at  \(body.expiresAt.formatted(.iso8601))")
                        if let path = body.linkPath {
                            print("link        \(global.serviceURL)\(path)\n(shown once: send it to the person now)")
                        } else if body.linkAlreadyDelivered == true {
                            print(
                                """
                                link        (already delivered by the first response to this Idempotency-Key; it \
                                is kept nowhere)
                                """
                            )
                        } else {
                            print("sent_to     \(body.sentTo ?? body.email)  (the link is in that mailbox only)")
                        }
                    } else {
                        try Printer(format: global.format).single(
                            body, columns: ["email", "expires_at", "sent_to", "link_path"])
                    }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }
}

struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "API tokens: shown once, stored as SHA-256.",
        discussion: "Example: backoffice tokens create --operator 7b2f… --name laptop",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Issue a token for an operator; the secret is printed once.",
            discussion: "Example: backoffice tokens create --operator 7b2f… --name laptop --expires-in-hours 720")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Operator id.") var `operator`: String
        @Option(help: "A label for the token.") var name: String?
        @Option(help: "Lifetime (default and maximum in policies/security.yaml).") var expiresInHours: Int?

        func run() async throws {
            try await runCommand {
                let output = try await global.client().createToken(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(operatorId: `operator`, name: name, expiresInHours: expiresInHours)))
                switch output {
                case .created(let created):
                    let body = try created.body.json
                    if global.format == .table {
                        try Printer(format: .table).single(body.token, columns: tokenColumns)
                        if let secret = body.secret {
                            print("secret      \(secret)\n(shown once: store it now)")
                        } else {
                            print(
                                """
                                secret      (already delivered by the first response to this Idempotency-Key; it \
                                is kept nowhere)
                                """
                            )
                        }
                    } else {
                        try Printer(format: global.format).single(body, columns: ["secret"])
                    }
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List tokens (never their secrets).",
            discussion: "Example: backoffice tokens list --operator 7b2f…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Only this operator's.") var `operator`: String?
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(tokenColumns)) { client in
                try await client.listTokens(
                    query: .init(limit: page.limit, cursor: page.cursor, operatorId: `operator`))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke a token; refused from the next request on.",
            discussion: "Example: backoffice tokens revoke 1d4e…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Token id.") var id: String

        func run() async throws {
            try await global.show(.single(tokenColumns)) { client in
                try await client.revokeToken(
                    path: .init(tokenId: id), headers: .init(idempotencyKey: global.changeKey()))
            }
        }
    }
}
