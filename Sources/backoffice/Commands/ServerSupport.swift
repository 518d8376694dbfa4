import ArgumentParser
import Backoffice
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// Where the project's files are: policies and migrations (relative to the working directory by default).
struct ProjectOptions: ParsableArguments {
    @Option(help: "Policies folder (env BACKOFFICE_POLICIES; default ./policies).")
    var policies: String?

    @Option(help: "Migrations folder (env BACKOFFICE_MIGRATIONS; default ./sql/migrations).")
    var migrations: String?

    var policiesDirectory: URL {
        URL(fileURLWithPath: policies ?? ProcessInfo.processInfo.environment["BACKOFFICE_POLICIES"] ?? "policies")
    }

    var migrationsDirectory: URL {
        URL(
            fileURLWithPath: migrations ?? ProcessInfo.processInfo.environment["BACKOFFICE_MIGRATIONS"]
                ?? "sql/migrations")
    }

    /// The policies, validated; a bad file stops the command with exit code 6 naming the entry.
    func loadPolicies() throws -> PolicySet {
        do { return try PolicySet.load(from: policiesDirectory) } catch let error as PolicyError {
            throw CLIFailure(message: "error: invalid policy: \(error)", exitCode: 6)
        }
    }

    func loadMigrations() throws -> Migrator {
        do { return try Migrator(directory: migrationsDirectory) } catch {
            throw CLIFailure(
                message: "error: cannot read migrations in \(migrationsDirectory.path): \(error)", exitCode: 6)
        }
    }
}

/// Prints a line at once (stdout may be a file or pipe: no buffering surprises).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Log lines as `LOG_FORMAT` says, chosen once per process before any logger exists: `json`
/// (one JSON object per line, `JSONLogHandler`) or `text` (swift-log's text lines, `TextLogHandler`;
/// the default).
private let logFormat: Void = {
    let format = ProcessInfo.processInfo.environment["LOG_FORMAT"] ?? "text"
    if format == "json" {
        LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        return
    }
    LoggingSystem.bootstrap { label in TextLogHandler(label: label) }
    if format != "text" {
        FileHandle.standardError.write(
            Data("warning: LOG_FORMAT=\(format) is neither json nor text; writing text\n".utf8))
    }
}()

func makeLogger(_ label: String = "backoffice") -> Logger {
    _ = logFormat
    var logger = Logger(label: label)
    logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
    return logger
}

/// Reads a database URL from an option or the environment.
func resolveDatabaseURL(_ option: String?, env names: [String]) throws -> DatabaseURL {
    let environment = ProcessInfo.processInfo.environment
    guard let text = option ?? names.lazy.compactMap({ environment[$0] }).first else {
        throw CLIFailure.usage("set \(names.joined(separator: " or ")) (or --database-url) to a postgres:// URL")
    }
    do { return try DatabaseURL(text) } catch {
        throw CLIFailure.usage("not a postgres:// URL: \(DatabaseURL.redact(text))")
    }
}

/// Maps errors of server-side commands to exit codes.
func runServerCommand(_ body: () async throws -> Void) async throws {
    try await runCommand {
        do {
            try await body()
        } catch let error as DatabaseUnavailable {
            throw CLIFailure(message: "error: \(error)", exitCode: 7)
        } catch let error as UnsafeServiceRole {
            throw CLIFailure(message: "error: \(error)", exitCode: 7)
        } catch let error as MigrationError {
            throw CLIFailure(message: "error: \(error)", exitCode: 5)
        } catch let error as Bootstrap.Refused {
            throw CLIFailure(message: "error: \(error)", exitCode: 5)
        } catch let error as EmbeddedPostgresError {
            throw CLIFailure(message: "error: \(error)", exitCode: 7)
        } catch {
            // A domain's refusal (a `DomainError` or a `DomainRefusal`), by its problem's status.
            guard let problem = Problem.describing(error) else { throw error }
            throw CLIFailure(
                message: "error: \(problem.title): \(problem.detail ?? problem.code)",
                exitCode: CLIFailure.exitCode(forStatus: problem.status))
        }
    }
}
