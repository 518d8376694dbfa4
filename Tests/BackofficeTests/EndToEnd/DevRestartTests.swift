import BackofficeDemo
import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// `backoffice dev` on its own cluster, started again after what its own API can do to the demo.
@Suite("The embedded default survives its own use")
struct DevRestartTests {
    @Test(
        """
        dev comes back up after demo operators are disabled, a demo token revoked and a demo customer locked: the \
        rest kept, the revoked one issued anew, the disabled ones named
        """
    )
    func restartAfterChanges() async throws {
        let folder = URL(
            fileURLWithPath: "\(TestCluster.scratchRoot)/backoffice-dev-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: folder) }
        let cluster = try EmbeddedPostgres.start(
            dataDirectory: folder.appendingPathComponent("data"),
            passwordFile: folder.appendingPathComponent("postgres.password"))
        defer { cluster.stop() }
        let policies = try TestEnvironment.loadPolicies()
        let migrator = try Migrator(directory: projectRoot.appendingPathComponent("sql/migrations"))
        let credentialsFile = folder.appendingPathComponent("credentials.json")
        let secondFactorKey = SecondFactorKey.generate().key
        func prepare() async throws -> DemoEnvironment.Setup {
            let setup = try await DemoEnvironment.prepare(
                cluster: cluster, serviceURL: "http://127.0.0.1:1", migrations: migrator, policies: policies,
                credentialsFile: credentialsFile,
                // bcrypt's least: the demo's passwords are not under test
                secondFactorKey: secondFactorKey, passwordCost: 4, logger: testLogger)
            try PrivateFile.replace(credentialsFile.path, contents: try JSONEncoder().encode(setup.credentials))
            return setup
        }
        let first = try await prepare()
        #expect(first.skipped.isEmpty)
        #expect(
            first.credentials.secondFactors?.keys.sorted() == [
                "admin@healthtrack.example", "auditor@healthtrack.example", "deputy@healthtrack.example",
                "manager@healthtrack.example",
            ],
            "the roles the policy makes sign in with a second factor get a TOTP secret")
        let tokens = first.credentials.tokens
        let greenGrocer = try #require(first.credentials.partners.first { $0.slug == "green-grocer" })
        let owner = try DatabaseURL(cluster.url(database: "backoffice", user: "postgres"))
        try await owner.withConnection(logger: testLogger) { connection in
            for statement in [
                """
                UPDATE operators SET status = 'disabled', disabled_at = now() WHERE email IN \
                ('staff@green-grocer.example', 'manager@healthtrack.example')
                """,
                """
                UPDATE tokens SET revoked_at = now() WHERE secret_hash = \
                sha256('\(try #require(tokens.auditor))'::bytea)
                """,
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: testLogger)
            }
        }
        try await Database.with(url: try DatabaseURL(first.credentials.databaseURL), logger: testLogger) { database in
            let customer = try #require(first.activeCustomer)
            _ = try await database.runAsSystem(
                TransitionAccount(customerID: customer, move: .lock, reason: "Locked before a restart"),
                context: OperationContext.system("test", policies: policies))
        }

        let second = try await prepare()
        #expect(
            second.skipped.sorted() == [
                "manager@healthtrack.example: the operator is disabled",
                "staff@green-grocer.example: the operator is disabled",
            ])
        let again = second.credentials.tokens
        #expect(again.backendManager == nil)
        #expect(
            again.platformAdmin == tokens.platformAdmin && again.appService == tokens.appService,
            "working tokens are kept")
        #expect(again.auditor != nil && again.auditor != tokens.auditor, "the revoked token is issued anew")
        let partner = try #require(second.credentials.partners.first { $0.slug == "green-grocer" })
        #expect(partner.partnerAdmin == greenGrocer.partnerAdmin && partner.partnerStaff == nil)
        #expect(second.activeCustomer != nil && second.activeCustomer != first.activeCustomer)
        #expect(
            second.credentials.secondFactors?["auditor@healthtrack.example"]
                == first.credentials.secondFactors?["auditor@healthtrack.example"])
        #expect(
            second.credentials.secondFactors?["manager@healthtrack.example"] == nil,
            "a disabled operator gets no sign-in")
        try await Database.with(url: try DatabaseURL(second.credentials.databaseURL), logger: testLogger) { database in
            let auditor = try #require(again.auditor)
            let principal = try await Authenticator(database: database).principal(for: auditor)
            #expect(principal?.role == "auditor")
        }
    }

    @Test(
        """
        dev --reset's removal: a running cluster is stopped and its data removed, so the next start initialises a \
        new one
        """
    )
    func resetRemovesTheCluster() throws {
        let folder = URL(fileURLWithPath: "/tmp/backoffice-dev-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: folder) }
        let (data, password) = (
            folder.appendingPathComponent("data"), folder.appendingPathComponent("postgres.password")
        )
        let cluster = try EmbeddedPostgres.start(dataDirectory: data, passwordFile: password)
        try EmbeddedPostgres.remove(dataDirectory: data)
        #expect(!FileManager.default.fileExists(atPath: data.path))
        let fresh = try EmbeddedPostgres.start(dataDirectory: data, passwordFile: password)
        defer { fresh.stop() }
        #expect(fresh.superuserPassword != cluster.superuserPassword, "a new cluster, with a new password")
        // nothing to remove is fine
        try EmbeddedPostgres.remove(dataDirectory: folder.appendingPathComponent("never-made"))
        let notACluster = folder.appendingPathComponent("notes")
        try FileManager.default.createDirectory(at: notACluster, withIntermediateDirectories: true)
        #expect(throws: EmbeddedPostgresError.self, "a folder that is not a cluster is left alone") {
            try EmbeddedPostgres.remove(dataDirectory: notACluster)
        }
        #expect(FileManager.default.fileExists(atPath: notACluster.path))
    }
}
