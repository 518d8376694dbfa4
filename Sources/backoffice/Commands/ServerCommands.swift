import ArgumentParser
import Backoffice
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
        URL(fileURLWithPath: migrations ?? ProcessInfo.processInfo.environment["BACKOFFICE_MIGRATIONS"] ?? "sql/migrations")
    }

    /// The policies, validated; a bad file stops the command with exit code 6 naming the entry.
    func loadPolicies() throws -> PolicySet {
        do { return try PolicySet.load(from: policiesDirectory) } catch let error as PolicyError {
            throw CLIFailure(message: "error: invalid policy: \(error)", exitCode: 6)
        }
    }

    func loadMigrations() throws -> Migrator {
        do { return try Migrator(directory: migrationsDirectory) } catch {
            throw CLIFailure(message: "error: cannot read migrations in \(migrationsDirectory.path): \(error)", exitCode: 6)
        }
    }
}

/// Prints a line at once (stdout may be a file or pipe: no buffering surprises).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func makeLogger(_ label: String = "backoffice") -> Logger {
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
    do { return try DatabaseURL(text) } catch { throw CLIFailure.usage("not a postgres:// URL: \(DatabaseURL.redact(text))") }
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
        } catch let error as DomainError {
            let problem = Problem(error)
            throw CLIFailure(
                message: "error: \(problem.title): \(problem.detail ?? problem.code)", exitCode: CLIFailure.exitCode(forStatus: problem.status))
        }
    }
}

struct Dev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the back office locally: private PostgreSQL, migrations, demo data, server on 127.0.0.1.",
        discussion: """
            Data lives in .backoffice/ (mode 0700, ignored by git; as root the cluster's own files live in
            the postgres user's home, keyed by this folder) and is reused on the next run; Ctrl-C stops
            the server and the cluster. PostgreSQL asks for passwords (scram-sha-256); they and the
            tokens are written to .backoffice/credentials.json (mode 0600).
            Example: swift run backoffice dev --port 8080
            """)
    @Option(help: "Port to serve on.") var port = 8080
    @Option(help: "Folder for the cluster and credentials.") var data = ".backoffice"
    @OptionGroup var project: ProjectOptions

    func run() async throws {
        try await runServerCommand {
            let logger = makeLogger()
            let policies = try project.loadPolicies()
            let migrator = try project.loadMigrations()
            let home = URL(fileURLWithPath: data, isDirectory: true).standardizedFileURL
            try PrivateFile.directory(home.path)
            // As root the cluster runs as `postgres`, which may not traverse this folder (a clone in
            // root's own home): its data then lives in postgres's home, keyed by this folder.
            let clusterData = EmbeddedPostgres.rootSafeDirectory(key: home.path) ?? home.appendingPathComponent("postgres")
            say("starting PostgreSQL (data in \(clusterData.path)) …")
            let cluster = try EmbeddedPostgres.start(
                dataDirectory: clusterData, passwordFile: home.appendingPathComponent("postgres.password")
            ) { say($0) }
            defer {
                cluster.stop()
                say("PostgreSQL stopped; data kept in \(clusterData.path)")
            }
            let serviceURL = "http://127.0.0.1:\(port)"
            let credentialsFile = home.appendingPathComponent("credentials.json")
            let setup = try await DemoEnvironment.prepare(
                cluster: cluster, serviceURL: serviceURL, migrations: migrator, policies: policies, credentialsFile: credentialsFile, logger: logger)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PrivateFile.replace(credentialsFile.path, contents: try encoder.encode(setup.credentials))
            var settings = ServerSettings(
                host: "127.0.0.1", port: port, databaseURL: try DatabaseURL(setup.credentials.databaseURL),
                policiesDirectory: project.policiesDirectory)
            settings.lockExpiryInterval = .seconds(2)
            let banner = Banner(setup: setup, credentialsFile: credentialsFile.path, clusterData: clusterData.path)
            try await BackofficeServer.run(settings: settings, logger: logger) { _ in banner.print() }
        }
    }
}

/// What `dev` prints once the server listens: tokens and commands that work as they are.
struct Banner: Sendable {
    let setup: DemoEnvironment.Setup
    let credentialsFile: String
    let clusterData: String

    func print() {
        let c = setup.credentials
        let me = Self.executable
        let active = setup.activeCustomer?.uuidString.lowercased() ?? "CUSTOMER_ID"
        let locked = setup.lockedCustomer?.uuidString.lowercased() ?? "CUSTOMER_ID"
        var lines = [
            "",
            "HealthTrack back office is running at \(c.url)  (Ctrl-C stops it and PostgreSQL)",
            "PostgreSQL data: \(clusterData)",
            "",
            "Tokens (also in \(credentialsFile)):",
            "  platform_admin   \(c.tokens.platformAdmin)",
            "  backend_manager  \(c.tokens.backendManager)",
            "  auditor          \(c.tokens.auditor)",
            "  app_service      \(c.tokens.appService)",
        ]
        for partner in c.partners {
            lines.append("  \(partner.slug) partner_admin  \(partner.partnerAdmin)")
            lines.append("  \(partner.slug) partner_staff  \(partner.partnerStaff)")
        }
        lines += [
            "",
            "Try, in another terminal in this folder:",
            "  export BACKOFFICE_URL=\(c.url)",
            "  export BACKOFFICE_TOKEN=\(c.tokens.backendManager)",
            "  \(me) accounts list --limit 5",
            "  \(me) accounts lock \(active) --reason \"Suspected account takeover\"",
            "  \(me) accounts history \(active)",
            "  \(me) accounts unlock \(active) --reason \"Identity confirmed by phone\"",
            "  \(me) accounts show \(locked)",
            "  \(me) accounts list --status locked",
            "  \(me) audit verify --token \(c.tokens.auditor)",
            "  \(me) accounts lock \(active) --reason \"x\" --token \(c.partners.first?.partnerAdmin ?? "")   # 403, exit 4",
            "",
        ]
        say(lines.joined(separator: "\n"))
    }

    /// How to call this executable from the working directory.
    static var executable: String {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let cwd = FileManager.default.currentDirectoryPath
        if path.hasPrefix(cwd + "/") { return String(path.dropFirst(cwd.count + 1)) }
        return path
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service against BACKOFFICE_DATABASE_URL (production; no demo data).",
        discussion: """
            The URL's role must not own the tables (row-level security applies to it): use the
            backoffice_app role the migrations create. SIGTERM drains requests, then stops.
            Example: BACKOFFICE_DATABASE_URL=postgres://backoffice_app:secret@db:5432/backoffice backoffice serve --host 0.0.0.0 --port 8080
            """)
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port).") var port = 8080
    @Option(help: "Database URL (env BACKOFFICE_DATABASE_URL).") var databaseURL: String?
    @Option(help: "Seconds between checks for expired timed locks.") var lockExpirySeconds = 5
    @Option(
        help: ArgumentHelp(
            "A proxy (address or CIDR) whose X-Forwarded-For names the client; repeatable. Without it the peer address is recorded.",
            valueName: "cidr"))
    var trustedProxy: [String] = []
    @OptionGroup var project: ProjectOptions

    func run() async throws {
        try await runServerCommand {
            let logger = makeLogger()
            _ = try project.loadPolicies()
            var settings = ServerSettings(
                host: host, port: port, databaseURL: try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_DATABASE_URL"]),
                policiesDirectory: project.policiesDirectory)
            settings.lockExpiryInterval = .seconds(max(1, lockExpirySeconds))
            do { settings.trustedProxies = try trustedProxy.map(CIDR.init) } catch { throw CLIFailure.usage("--trusted-proxy: \(error)") }
            try await BackofficeServer.run(settings: settings, logger: logger) { port in
                say("listening on http://\(host):\(port)")
            }
        }
    }
}

/// Where `db migrate` and `db status` connect: the tables' owner, and the migrations folder.
struct MigrationOptions: ParsableArguments {
    @Option(help: "Owner's database URL (env BACKOFFICE_ADMIN_DATABASE_URL).") var databaseURL: String?
    @OptionGroup var project: ProjectOptions

    /// Runs `body` with the migrations and one owner's connection.
    func run<T: Sendable>(_ body: (Migrator, PostgresConnection, Logger) async throws -> T) async throws -> (Migrator, T) {
        let logger = makeLogger()
        let migrator = try project.loadMigrations()
        let url = try resolveDatabaseURL(databaseURL, env: ["BACKOFFICE_ADMIN_DATABASE_URL"])
        return (migrator, try await url.withConnection(logger: logger) { try await body(migrator, $0, logger) })
    }
}

struct DB: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Schema migrations (run as the tables' owner).",
        discussion: "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db status",
        subcommands: [Migrate.self, Status.self])

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending migrations in order; refuses when an applied one was edited.",
            discussion: "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db migrate")
        @OptionGroup var options: MigrationOptions

        func run() async throws {
            try await runServerCommand {
                let (migrator, applied) = try await options.run { migrator, connection, logger in
                    try await migrator.migrate(on: connection, logger: logger)
                }
                print(applied.isEmpty ? "up to date (\(migrator.migrations.count) migrations)" : "applied: \(applied.joined(separator: ", "))")
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show each migration: applied (when), pending, or edited after it was applied.",
            discussion: "Example: BACKOFFICE_ADMIN_DATABASE_URL=postgres://postgres@localhost/backoffice backoffice db status")
        @OptionGroup var options: MigrationOptions

        func run() async throws {
            try await runServerCommand {
                let (_, states) = try await options.run { migrator, connection, logger in
                    try await migrator.status(on: connection, logger: logger)
                }
                for state in states {
                    let status = state.isEdited ? "EDITED since applied" : state.appliedAt.map { "applied \($0.formatted(.iso8601))" } ?? "pending"
                    print("\(state.migration.name)  \(status)")
                }
                if states.contains(where: \.isEdited) { throw ExitCode(5) }
            }
        }
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administration done directly in the database.",
        discussion:
            "Example: BACKOFFICE_DATABASE_URL=postgres://backoffice_app@localhost/backoffice backoffice admin bootstrap --email ops@healthtrack.example",
        subcommands: [BootstrapCommand.self])

    struct BootstrapCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bootstrap",
            abstract: "Create the first platform admin and print its token once.",
            discussion:
                "Example: BACKOFFICE_DATABASE_URL=postgres://backoffice_app@localhost/backoffice backoffice admin bootstrap --email ops@healthtrack.example"
        )
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
        abstract: "Policy files (local; no service needed).", discussion: "Example: backoffice policies check policies/",
        subcommands: [Check.self, Show.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate access.yaml, security.yaml and retention.yaml; exit 6 naming the file and entry at fault.",
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

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the role × action matrix the policies grant.", discussion: "Example: backoffice policies show")
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
                    "lockout after \(set.security.consecutiveFailedLogins) failed logins; deleted accounts purged after \(set.retention.deletedAccountsPurgeAfterDays) days"
                )
                print("digest \(set.digest)")
            }
        }
    }
}
