import Backoffice
import Foundation
import PostgresNIO
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test("applied in order once, with checksums; an edited applied migration stops the migrator")
    func checksums() async throws {
        let (_, _, cluster) = try await TestCluster.shared.freshDatabase()
        let name = "mig_\(UUID().uuidString.prefix(8).lowercased())"
        try await DatabaseURL(cluster.superuserURL).withConnection(logger: testLogger) {
            try await $0.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: testLogger)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = projectRoot.appendingPathComponent("sql/migrations")
        for file in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: folder.appendingPathComponent(file))
        }
        let url = try DatabaseURL(cluster.url(database: name, user: "postgres"))
        let migrator = try Migrator(directory: folder)
        let first = try await url.withConnection(logger: testLogger) { try await migrator.migrate(on: $0, logger: testLogger) }
        #expect(first == migrator.migrations.map(\.name))
        #expect(first == first.sorted())
        let second = try await url.withConnection(logger: testLogger) { try await migrator.migrate(on: $0, logger: testLogger) }
        #expect(second.isEmpty)

        let edited = folder.appendingPathComponent("0002_audit.sql")
        try (try String(contentsOf: edited, encoding: .utf8) + "\n-- sneaky edit\n").write(to: edited, atomically: true, encoding: .utf8)
        try "CREATE TABLE later (id int);".write(to: folder.appendingPathComponent("0099_later.sql"), atomically: true, encoding: .utf8)
        let changed = try Migrator(directory: folder)
        await #expect(throws: MigrationError.self) {
            _ = try await url.withConnection(logger: testLogger) { try await changed.migrate(on: $0, logger: testLogger) }
        }
        let status = try await url.withConnection(logger: testLogger) { try await changed.status(on: $0, logger: testLogger) }
        #expect(status.first { $0.migration.name == "0002_audit" }?.isEdited == true)
        #expect(status.first { $0.migration.name == "0099_later" }?.appliedAt == nil, "nothing runs when an applied migration was edited")
    }
}
