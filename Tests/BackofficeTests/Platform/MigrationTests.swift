import Foundation
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Migrations")
struct MigrationTests {
    /// A temporary folder named `name` holding a copy of the project's migrations whose file names
    /// `keep` accepts (all by default).
    static func migrationsFolder(_ name: String, keeping keep: (String) -> Bool = { _ in true }) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = projectRoot.appendingPathComponent("sql/migrations")
        for file in try FileManager.default.contentsOfDirectory(atPath: source.path) where keep(file) {
            try FileManager.default.copyItem(
                at: source.appendingPathComponent(file), to: folder.appendingPathComponent(file))
        }
        return folder
    }

    @Test("applied in order once, with checksums; an edited applied migration stops the migrator")
    func checksums() async throws {
        let (_, _, cluster, _) = try await TestCluster.shared.freshDatabase()
        let name = "mig_\(UUID().uuidString.prefix(8).lowercased())"
        try await DatabaseURL(cluster.superuserURL).withConnection(logger: testLogger) {
            try await $0.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: testLogger)
        }
        let folder = try Self.migrationsFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try DatabaseURL(cluster.url(database: name, user: "postgres"))
        let migrator = try Migrator(directory: folder)
        let first = try await url.withConnection(logger: testLogger) {
            try await migrator.migrate(on: $0, logger: testLogger)
        }
        #expect(first == migrator.migrations.map(\.name))
        #expect(first == first.sorted())
        let second = try await url.withConnection(logger: testLogger) {
            try await migrator.migrate(on: $0, logger: testLogger)
        }
        #expect(second.isEmpty)

        let edited = folder.appendingPathComponent("0002_audit.sql")
        try (try String(contentsOf: edited, encoding: .utf8) + "\n-- sneaky edit\n").write(
            to: edited, atomically: true, encoding: .utf8)
        try "CREATE TABLE later (id int);".write(
            to: folder.appendingPathComponent("0099_later.sql"), atomically: true, encoding: .utf8)
        let changed = try Migrator(directory: folder)
        await #expect(throws: MigrationError.self) {
            _ = try await url.withConnection(logger: testLogger) {
                try await changed.migrate(on: $0, logger: testLogger)
            }
        }
        let status = try await url.withConnection(logger: testLogger) {
            try await changed.status(on: $0, logger: testLogger)
        }
        #expect(status.first { $0.migration.name == "0002_audit" }?.isEdited == true)
        #expect(
            status.first { $0.migration.name == "0099_later" }?.appliedAt == nil,
            "nothing runs when an applied migration was edited")
    }

    @Test(
        """
        0021 on a database that has orders, applied by an owner that is not a superuser (row-level security is \
        forced on it): every order gets its lines' count
        """
    )
    func lineCountBackfill() async throws {
        let (_, _, cluster, _) = try await TestCluster.shared.freshDatabase()
        let name = "mig_\(UUID().uuidString.prefix(8).lowercased())"
        let superuser = try DatabaseURL(cluster.superuserURL)
        try await superuser.withConnection(logger: testLogger) { connection in
            for sql in [
                "CREATE ROLE \(name) LOGIN CREATEROLE PASSWORD '\(name)'", "CREATE DATABASE \(name) OWNER \(name)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
            }
        }
        let folder = try Self.migrationsFolder(name) { $0 < "0021" }
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = projectRoot.appendingPathComponent("sql/migrations")
        let owner = try DatabaseURL(cluster.url(database: name, user: name, password: name))
        _ = try await owner.withConnection(logger: testLogger) {
            try await Migrator(directory: folder).migrate(on: $0, logger: testLogger)
        }
        let tenant = UUID().uuidString.lowercased()
        try await owner.withConnection(logger: testLogger) { connection in
            for sql in [
                "BEGIN",
                "SELECT set_config('app.tenant_id', '00000000-0000-0000-0000-000000000000', true)",
                "INSERT INTO tenants (id, slug, name) VALUES ('\(tenant)', 'shop-\(name.suffix(8))', 'Shop')",
                """
                INSERT INTO goods (tenant_id, id, sku, name, category, price_cents, stock, created_at, updated_at)
                SELECT '\(tenant)', md5('good' || g)::uuid, 'SKU-' || g, 'Good', 'gear', 100, 10, now(), now() FROM
                    generate_series(1, 3) g
                """,
                """
                INSERT INTO orders (tenant_id, id, customer_id, status, total_cents, total_fitpoints, shipping_name,
                    shipping_address, created_at,
                    updated_at)
                SELECT '\(tenant)', md5('order' || n)::uuid, gen_random_uuid(), 'paid', 100, 0, 'B', '{}', now(),
                    now() FROM generate_series(1, 3) n
                """,
                """
                INSERT INTO order_lines (tenant_id, order_id, line, good_id, sku, name, quantity, paid_in, unit_price)
                SELECT '\(tenant)', md5('order' || n)::uuid, l, md5('good' || l)::uuid, 'SKU-' || l, 'Good', 1, 'usd',
                    100
                FROM generate_series(1, 3) n, generate_series(1, n) l
                """,
                "COMMIT",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
            }
        }
        try FileManager.default.copyItem(
            at: source.appendingPathComponent("0021_order_line_count.sql"),
            to: folder.appendingPathComponent("0021_order_line_count.sql"))
        let applied = try await owner.withConnection(logger: testLogger) {
            try await Migrator(directory: folder).migrate(on: $0, logger: testLogger)
        }
        #expect(applied == ["0021_order_line_count"])
        // Read as the superuser, past row-level security.
        let counts = try await DatabaseURL(cluster.url(database: name, user: "postgres")).withConnection(
            logger: testLogger
        ) { connection in
            var counts: [Int32] = []
            let rows = try await connection.query(
                "SELECT line_count FROM orders ORDER BY line_count", logger: testLogger)
            for try await count in rows.decode(Int32.self) { counts.append(count) }
            return counts
        }
        #expect(counts == [1, 2, 3])
    }

    @Test(
        """
        0049 on customers the app marked active, lapsed or none: a record each for the first two (active to its \
        renewal date, lapsed ended), none for the third; afterwards the records drive the state
        """
    )
    func subscriptionFlagsBecomeRecords() async throws {
        let (_, _, cluster, _) = try await TestCluster.shared.freshDatabase()
        let name = "mig_\(UUID().uuidString.prefix(8).lowercased())"
        let superuser = try DatabaseURL(cluster.superuserURL)
        try await superuser.withConnection(logger: testLogger) { connection in
            for sql in [
                "CREATE ROLE \(name) LOGIN CREATEROLE PASSWORD '\(name)'", "CREATE DATABASE \(name) OWNER \(name)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
            }
        }
        let folder = try Self.migrationsFolder(name) { $0 < "0049" }
        defer { try? FileManager.default.removeItem(at: folder) }
        let owner = try DatabaseURL(cluster.url(database: name, user: name, password: name))
        _ = try await owner.withConnection(logger: testLogger) {
            try await Migrator(directory: folder).migrate(on: $0, logger: testLogger)
        }
        let run = { (sql: [String]) in
            try await owner.withConnection(logger: testLogger) { connection in
                for statement in ["BEGIN", "SELECT set_config('app.tenant_id', '\(platformTenantID.text)', true)"]
                    + sql + ["COMMIT"]
                {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: testLogger)
                }
            }
        }
        try await run([
            """
            INSERT INTO customers (id, email, display_name, subscription, renews_at, created_at, updated_at) VALUES
                ('00000000-0000-0000-0000-0000000000a1', 'a@example.com', 'A', 'active', '2027-01-15T10:00:00Z',
                    now(), now()),
                ('00000000-0000-0000-0000-0000000000a2', 'b@example.com', 'B', 'lapsed', NULL, now(), now()),
                ('00000000-0000-0000-0000-0000000000a3', 'c@example.com', 'C', 'none', NULL, now(), now())
            """
        ])
        try FileManager.default.copyItem(
            at: projectRoot.appendingPathComponent("sql/migrations/0049_subscription_state_derived.sql"),
            to: folder.appendingPathComponent("0049_subscription_state_derived.sql"))
        let applied = try await owner.withConnection(logger: testLogger) {
            try await Migrator(directory: folder).migrate(on: $0, logger: testLogger)
        }
        #expect(applied == ["0049_subscription_state_derived"])
        let read = { (sql: String) in
            try await DatabaseURL(cluster.url(database: name, user: "postgres")).withConnection(logger: testLogger) {
                connection in
                var texts: [String] = []
                for try await text in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: testLogger)
                    .decode(String.self)
                {
                    texts.append(text)
                }
                return texts
            }
        }
        let records = try await read(
            """
            SELECT right(customer_id::text, 2) || ' ' || status || ' ' || (payment_method IS NULL)
                || ' ' || to_char(current_period_end AT TIME ZONE 'UTC', 'YYYY-MM-DD')
            FROM subscriptions WHERE status = 'active' OR ended_at IS NOT NULL ORDER BY customer_id
            """)
        #expect(records.count == 2 && records[0] == "a1 active true 2027-01-15", "\(records)")
        #expect(records.last?.hasPrefix("a2 lapsed true") == true, "\(records)")
        try await run([
            "UPDATE subscriptions SET status = 'past_due', grace_ends_at = now() + interval '7 days'"
                + " WHERE status = 'active'"
        ])
        let states = try await read(
            "SELECT subscription || ' ' || coalesce(renews_at::text, '-') FROM customers ORDER BY id")
        #expect(states == ["active -", "lapsed -", "none -"], "past due: still active, no renewal date")
    }
}
