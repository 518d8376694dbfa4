import ArgumentParser
import Backoffice
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administration done directly in the database.",
        discussion: BootstrapCommand.example, subcommands: [BootstrapCommand.self])

    struct BootstrapCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bootstrap",
            abstract: "Create the first platform admin and print its token once.",
            discussion: example)
        static let example = """
            Example: BACKOFFICE_DATABASE_URL=postgres://backoffice_app@localhost/backoffice backoffice admin \
            bootstrap --email ops@healthtrack.example
            """
        @Option(help: "The admin's email.") var email: String
        @Option(help: "Database URL (env BACKOFFICE_DATABASE_URL).") var databaseURL: String?
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await runServerCommand {
                let logger = makeLogger()
                let policies = try project.loadPolicies()
                let url = try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_DATABASE_URL"])
                let (admin, secret) = try await Database.with(url: url, logger: logger) { database in
                    try await Bootstrap.platformAdmin(email: email, database: database, policies: policies)
                }
                print("platform admin \(admin.email) (\(admin.id.uuidString.lowercased()))")
                print("token: \(secret.value)")
                print("(shown once: store it now)")
            }
        }
    }
}

struct Policies: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Policy files (local; no service needed).",
        discussion: "Example: backoffice policies check policies/",
        subcommands: [Check.self, Show.self, Scopes.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Validate every policy file (the platform's access, security and retention, and the domains' own: \
                messages, privacy, moderation/); exit 6 naming the file and entry at fault.
                """,
            discussion: "Example: backoffice policies check policies/")
        @Argument(help: "Policies folder.") var directory = "policies"

        func run() async throws {
            try await runCommand {
                do {
                    let set = try PolicySet.load(from: URL(fileURLWithPath: directory))
                    print("ok: \(set.access.grants.count) roles, digest \(set.digest)")
                } catch let error as PolicyError {
                    throw CLIFailure(message: "error: \(error)", exitCode: 6)
                }
            }
        }
    }

    struct Scopes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each scope with its actions, or the scopes a role's tokens may hold.",
            discussion: "Example: backoffice policies scopes --role partner_staff")
        @Argument(help: "Policies folder.") var directory = "policies"
        @Option(help: "Only the scopes of this role.") var role: String?

        func run() async throws {
            try await runCommand {
                let set: PolicySet
                do { set = try PolicySet.load(from: URL(fileURLWithPath: directory)) } catch let error as PolicyError {
                    throw CLIFailure(message: "error: \(error)", exitCode: 6)
                }
                var scopes = set.access.scopes
                if let role {
                    guard let known = Role(rawValue: role) else {
                        throw CLIFailure(message: "error: '\(role)' is not a role", exitCode: 2)
                    }
                    scopes = set.access.scopes(of: known)
                }
                for scope in scopes {
                    let actions = Action.allCases.filter { set.access.scope(of: $0) == scope }.map(\.rawValue)
                    print("\(scope)  \(actions.joined(separator: " "))")
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the role × action matrix the policies grant.",
            discussion: "Example: backoffice policies show")
        @Argument(help: "Policies folder.") var directory = "policies"

        func run() async throws {
            try await runCommand {
                let set: PolicySet
                do { set = try PolicySet.load(from: URL(fileURLWithPath: directory)) } catch let error as PolicyError {
                    throw CLIFailure(message: "error: \(error)", exitCode: 6)
                }
                for role in Role.allCases {
                    let actions = Action.allCases.filter { set.access.allows(role.rawValue, $0) }.map(\.rawValue)
                    print("\(role.rawValue):\n  " + (actions.isEmpty ? "(nothing)" : actions.joined(separator: "\n  ")))
                }
                print(
                    """
                    lockout after \(set.security.consecutiveFailedLogins) failed logins; deleted accounts purged \
                    after \(set.retention.deletedAccountsPurgeAfterDays) days
                    """
                )
                print("digest \(set.digest)")
            }
        }
    }
}
