import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

extension Operators {
    struct Invite: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Operator id.") var id: String
        @Flag(help: "Print the link instead of emailing it (platform admins only).") var showLink = false

        func run() async throws {
            try await runCommand {
                let output = try await global.client().inviteOperator(
                    path: .init(operatorId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: showLink ? .json(.init(showLink: true)) : nil)
                let created = try answered(output).created
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
            }
        }
    }
}

extension Tokens {
    struct Create: AsyncParsableCommand {
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "Operator id.") var `operator`: String
        @Option(help: "A label for the token.") var name: String?
        @Option(help: "Lifetime (default and maximum in policies/security.yaml).") var expiresInHours: Int?
        @Option(
            name: .customLong("scope"),
            help: "Narrow the token to this scope of its role; repeat for more (default: every scope of the role).")
        var scopes: [String] = []
        @Option(
            name: .customLong("allow-from"),
            help: "Accept the token only from this address or CIDR network; repeat for more (default: anywhere).")
        var allowedAddresses: [String] = []

        func run() async throws {
            try await runCommand {
                let output = try await global.client().createToken(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            operatorId: `operator`, name: name, expiresInHours: expiresInHours,
                            scopes: scopes.isEmpty ? nil : scopes,
                            allowedAddresses: allowedAddresses.isEmpty ? nil : allowedAddresses)))
                let created = try answered(output).created
                let body = try created.body.json
                if global.format == .table {
                    try Printer(format: .table).single(body.token, columns: CLIColumns.token)
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
            }
        }
    }
}
