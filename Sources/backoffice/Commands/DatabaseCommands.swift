import ArgumentParser
import Backoffice
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// Where `db migrate` and `db status` connect: the tables' owner, and the migrations folder.
struct MigrationOptions: ParsableArguments {
    @Option(help: "Owner's database URL (env BACKOFFICE_ADMIN_DATABASE_URL).") var databaseURL: String?
    @OptionGroup var project: ProjectOptions

    /// Runs `body` with the migrations and one owner's connection.
    func run<T: Sendable>(_ body: (Migrator, PostgresConnection, Logger) async throws -> T) async throws -> (
        Migrator, T
    ) {
        let logger = makeLogger()
        let migrator = try project.loadMigrations()
        let url = try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_ADMIN_DATABASE_URL"])
        return (migrator, try await url.withConnection(logger: logger) { try await body(migrator, $0, logger) })
    }
}

struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Schema migrations (run as the tables' owner).",
        discussion:
            "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db status",
        subcommands: [Migrate.self, Status.self])

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending migrations in order; refuses when an applied one was edited.",
            discussion:
                "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db migrate")
        @OptionGroup var options: MigrationOptions

        func run() async throws {
            try await runServerCommand {
                let (migrator, applied) = try await options.run { migrator, connection, logger in
                    try await migrator.migrate(on: connection, logger: logger)
                }
                print(
                    applied.isEmpty
                        ? "up to date (\(migrator.migrations.count) migrations)"
                        : "applied: \(applied.joined(separator: ", "))")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show each migration: applied (when), pending, or edited after it was applied.",
            discussion:
                "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db status")
        @OptionGroup var options: MigrationOptions

        func run() async throws {
            try await runServerCommand {
                let (_, states) = try await options.run { migrator, connection, logger in
                    try await migrator.status(on: connection, logger: logger)
                }
                for state in states {
                    let status =
                        state.isEdited
                        ? "EDITED since applied"
                        : state.appliedAt.map { "applied \($0.formatted(.iso8601))" } ?? "pending"
                    print("\(state.migration.name)  \(status)")
                }
                if states.contains(where: \.isEdited) { throw ExitCode(5) }
            }
        }
    }
}
