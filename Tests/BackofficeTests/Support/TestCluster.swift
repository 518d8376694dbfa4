import Foundation
import Logging
import PostgresNIO

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

#if canImport(Glibc)
    import Glibc
#endif

/// The project's root folder (policies, migrations, the built executable).
let projectRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()

var testLogger: Logger {
    var logger = Logger(label: "backoffice-tests")
    logger.logLevel = .critical
    return logger
}

/// The throwaway PostgreSQL cluster of this test run: started once, from the system's binaries,
/// in a temporary folder; a watchdog stops it and removes the folder when the test process ends
/// (even if it crashes). Each test gets its own database, copied from a migrated template.
actor TestCluster {
    static let shared = TestCluster()

    private var cluster: EmbeddedPostgres?
    private var counter = 0
    /// The service role's password in this run's cluster (set once, with the template).
    let appPassword = EmbeddedPostgres.generatePassword()
    /// The migrated template, seeded once with the fixture every test starts from.
    private var template: Task<TestEnvironment.Fixture, any Error>?

    func start() throws -> EmbeddedPostgres {
        if let cluster { return cluster }
        let folder = URL(
            fileURLWithPath: "\(Self.scratchRoot)/backoffice-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let started = try EmbeddedPostgres.start(
            dataDirectory: folder.appendingPathComponent("data"),
            passwordFile: folder.appendingPathComponent("superuser.password"))
        Self.watch(stop: started.stopCommand, remove: folder.path)
        cluster = started
        return started
    }

    /// A new database with every migration applied and the fixture seeded (tenants, operators and
    /// their tokens), URLs for its owner and the service role, and the fixture.
    func freshDatabase() async throws -> (
        owner: DatabaseURL, app: DatabaseURL, cluster: EmbeddedPostgres, fixture: TestEnvironment.Fixture
    ) {
        let cluster = try start()
        let superuser = try DatabaseURL(cluster.superuserURL)
        if template == nil {
            // Once per run; the actor is reentrant across awaits, so later callers wait on this task.
            template = Task {
                try await superuser.withConnection(logger: testLogger) {
                    try await $0.query("CREATE DATABASE bo_template", logger: testLogger)
                }
                let migrator = try Migrator(directory: projectRoot.appendingPathComponent("sql/migrations"))
                let password = appPassword
                _ = try await DatabaseURL(cluster.url(database: "bo_template", user: "postgres")).withConnection(
                    logger: testLogger
                ) {
                    _ = try await migrator.migrate(on: $0, logger: testLogger)
                    try await $0.query(
                        PostgresQuery(unsafeSQL: "ALTER ROLE backoffice_app PASSWORD '\(password)'"), logger: testLogger
                    )
                }
                // Seeded once, through the real operations: every copy starts with the same principals.
                let app = try DatabaseURL(
                    cluster.url(database: "bo_template", user: "backoffice_app", password: password))
                return try await Database.with(url: app, logger: testLogger, limits: .forTests) { database in
                    try await TestEnvironment.seed(database: database, policies: try TestEnvironment.loadPolicies())
                }
            }
        }
        let fixture = try await template!.value
        counter += 1
        let name = "t\(counter)"
        // A file copy, not PostgreSQL 15's default WAL_LOG strategy: that one reads and logs the
        // template block by block, and was 8 % of a run's CPU (the checkpoints a file copy costs
        // are cheap with fsync off). The template's last session may still be closing: retry
        // briefly ("being accessed by other users").
        var attempt = 0
        while true {
            do {
                try await superuser.withConnection(logger: testLogger) {
                    try await $0.query(
                        PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE bo_template STRATEGY FILE_COPY"),
                        logger: testLogger)
                }
                break
            } catch {
                attempt += 1
                if attempt > 50 { throw TestSetupError(description: String(reflecting: error)) }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        return (
            try DatabaseURL(cluster.url(database: name, user: "postgres")),
            try DatabaseURL(cluster.url(database: name, user: "backoffice_app", password: appPassword)),
            cluster, fixture
        )
    }

    /// Where the cluster lives: in memory (`/dev/shm`) when it has room for a run's databases,
    /// else `/tmp`. Each test's database is a copy of the template, and on a disk the file system's
    /// work of creating its ~500 files made a copy take 0.5 s against 0.1 s in memory, most of a
    /// run's time. The cluster runs with `fsync=off` and is thrown away after the run either way.
    static var scratchRoot: String {
        var stats = statvfs()
        guard statvfs("/dev/shm", &stats) == 0, access("/dev/shm", W_OK) == 0 else { return "/tmp" }
        let free = UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
        return free >= 8 << 30 ? "/dev/shm" : "/tmp"
    }

    /// Starts a detached shell that waits for this process to end, then stops the cluster and removes its folder.
    private static func watch(stop: [String], remove folder: String) {
        let quoted = stop.map { "'\($0)'" }.joined(separator: " ")
        let script =
            "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(quoted) >/dev/null 2>&1; rm -rf '\(folder)'"
        let argv = ["/bin/sh", "-c", script]
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID: outlive the test process group
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        for fd in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var pid: pid_t = 0
        posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, environ)
        cArguments.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
}
