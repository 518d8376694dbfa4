import ArgumentParser
import BackofficeAPI
import BackofficePlatform
import Foundation

let customerColumns = [
    "id", "email", "display_name", "status", "subscription", "failed_logins", "lock", "version", "updated_at",
]
let appealColumns = [
    "id", "customer_id", "lock_id", "case_id", "status", "message", "created_at", "resolved_by", "resolution_reason",
]
let auditColumns = ["id", "occurred_at", "actor_role", "action", "target_type", "target_id", "reason", "request_id"]

struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "Customer account operations: list, inspect, lock, unlock, delete, restore, appeals.",
        discussion: "Example: backoffice accounts lock 5f0c… --reason \"Suspected account takeover\"",
        subcommands: [
            List.self, Show.self, Lock.self, Unlock.self, Delete.self, Restore.self, History.self, Appeals.self,
            Sync.self, LoginAttempt.self, PasswordReset.self,
        ])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List accounts ordered by email (deleted ones only with --status deleted or --include-deleted).",
            discussion: "Example: backoffice accounts list --status locked --email-prefix ada --limit 20")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Option(help: "active, locked or deleted.") var status: Components.Schemas.AccountStatus?
        @Option(help: "Only emails starting with this.") var emailPrefix: String?
        @Flag(help: "Include deleted accounts.") var includeDeleted = false
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await global.show(.page(customerColumns)) { client in
                try await client.listCustomers(
                    query: .init(
                        limit: page.limit, cursor: page.cursor, status: status, emailPrefix: emailPrefix,
                        includeDeleted: includeDeleted ? true : nil)
                )
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one account with its current lock.", discussion: "Example: backoffice accounts show 5f0c…-…"
        )
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String

        func run() async throws {
            try await global.show(.single(customerColumns + ["created_at", "deleted_at"])) { client in
                try await client.getCustomer(path: .init(customerId: id))
            }
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lock",
            abstract: "Lock an account (reason required; --until makes it lift itself).",
            discussion:
                """
                Example: backoffice accounts lock 5f0c… --reason \"Chargeback under investigation\" --until \
                2026-12-01T00:00:00Z
                """
        )
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var account: AccountChangeOptions
        @Option(help: "RFC 3339 time when the lock lifts itself.") var until: String?

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.lockCustomer(
                    path: .init(customerId: account.id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: account.ifMatch),
                    body: .json(.init(reason: account.reason, until: try parseTime(until, "--until"))))
            }
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock",
            abstract: "Unlock a locked account (reason required).",
            discussion: "Example: backoffice accounts unlock 5f0c… --reason \"Identity confirmed by phone\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var account: AccountChangeOptions

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.unlockCustomer(
                    path: .init(customerId: account.id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: account.ifMatch),
                    body: .json(.init(reason: account.reason)))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Soft-delete an account (restorable until purged after the retention period).",
            discussion: "Example: backoffice accounts delete 5f0c… --reason \"Customer asked to close the account\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var account: AccountChangeOptions

        func run() async throws {
            try await global.show(.single(customerColumns + ["deleted_at"])) { client in
                try await client.deleteCustomer(
                    path: .init(customerId: account.id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: account.ifMatch),
                    body: .json(.init(reason: account.reason)))
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Restore a soft-deleted account.",
            discussion: "Example: backoffice accounts restore 5f0c… --reason \"Deleted by mistake\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @OptionGroup var account: AccountChangeOptions

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.restoreCustomer(
                    path: .init(customerId: account.id),
                    headers: .init(idempotencyKey: global.changeKey(), ifMatch: account.ifMatch),
                    body: .json(.init(reason: account.reason)))
            }
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "The account's audit events, oldest first.",
            discussion: "Example: backoffice accounts history 5f0c… --output json")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String
        @OptionGroup(title: "Paging") var page: PageOptions

        func run() async throws {
            try await runCommand {
                let output = try await global.client().customerHistory(
                    path: .init(customerId: id), query: .init(limit: page.limit, cursor: page.cursor))
                switch output {
                case .ok(let ok):
                    try Printer(format: global.format).page(
                        ok.body.json,
                        columns: ["id", "occurred_at", "actor_role", "actor_id", "action", "reason", "request_id"])
                case .default(let status, let problem): throw CLIFailure.from(status, problem)
                }
            }
        }
    }

    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Create or update a customer as the app does (app_service token).",
            discussion: "Example: backoffice accounts sync 5f0c… --email ada@example.com --display-name \"Ada L.\"")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id (the app's).") var id: String
        @Option var email: String
        @Option var displayName: String
        @Option(help: "none, active or lapsed (absent: unchanged).") var subscription:
            Components.Schemas.SubscriptionState?
        @Option(help: "RFC 3339 time an active subscription renews.") var renewsAt: String?

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.syncCustomer(
                    headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(
                        .init(
                            id: id, email: email, displayName: displayName, subscription: subscription,
                            renewsAt: try parseTime(renewsAt, "--renews-at"))))
            }
        }
    }

    struct LoginAttempt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login-attempt",
            abstract:
                "Report a login attempt as the app does (app_service token); failures lock at the policy's threshold.",
            discussion: "Example: backoffice accounts login-attempt 5f0c… --failed")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String
        @Flag(help: "The attempt failed.") var failed = false
        @Flag(help: "The attempt succeeded.") var succeeded = false

        func validate() throws {
            guard failed != succeeded else { throw ValidationError("Give exactly one of --failed or --succeeded.") }
        }

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.reportLoginAttempt(
                    path: .init(customerId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init(succeeded: succeeded)))
            }
        }
    }

    struct PasswordReset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "password-reset",
            abstract: "Report a completed password reset (app_service token): lifts a failed-logins lock.",
            discussion: "Example: backoffice accounts password-reset 5f0c…")
        @OptionGroup(title: "Global Options") var global: GlobalOptions
        @Argument(help: "Customer id.") var id: String

        func run() async throws {
            try await global.show(.single(customerColumns)) { client in
                try await client.reportPasswordReset(
                    path: .init(customerId: id), headers: .init(idempotencyKey: global.changeKey()),
                    body: .json(.init()))
            }
        }
    }
}

extension Components.Schemas.AccountStatus: ExpressibleByArgument {}
extension Components.Schemas.AppealStatus: ExpressibleByArgument {}
extension Components.Schemas.Role: ExpressibleByArgument {}

extension Components.Schemas.SubscriptionState: ExpressibleByArgument {}

/// What every change of an account's state takes: the account, why, and optionally the version it
/// must still be at.
struct AccountChangeOptions: ParsableArguments {
    @Argument(help: "Customer id.") var id: String
    @Option(help: "Why (recorded in the audit log).") var reason: String
    @Option(help: "Only if the account is still at this ETag/version.") var ifMatch: String?
}
