import Crypto
import Foundation
import Logging
import PostgresNIO

/// Applies `sql/migrations/NNNN_name.sql` in order, each in its own transaction, recording a
/// checksum per migration. Refuses to run when an applied migration's file was edited since.
package struct Migrator: Sendable {
    package struct Migration: Sendable {
        package let version: Int
        package let name: String
        package let sql: String
        package var checksum: String { hex(Array(SHA256.hash(data: Data(sql.utf8)))) }
    }

    package struct Status: Sendable {
        package let migration: Migration
        package let appliedAt: Date?
        package let appliedChecksum: String?
        package var isEdited: Bool { appliedChecksum.map { $0 != migration.checksum } ?? false }
    }

    package let migrations: [Migration]

    /// Reads the migrations folder. File names must be `NNNN_name.sql` with unique numbers.
    package init(directory: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
            .sorted()
        var seen = Set<Int>()
        migrations = try files.map { file in
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]),
                seen.insert(version).inserted
            else {
                throw MigrationError("\(directory.path)/\(file): name must be NNNN_name.sql with a unique number")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            return Migration(version: version, name: String(stem), sql: sql)
        }
    }

    private static let lockKey = 7_261_002  // advisory lock: one migrator at a time

    /// The state of every migration in the folder against the database.
    package func status(on connection: PostgresConnection, logger: Logger) async throws -> [Status] {
        try await ensureTable(connection, logger: logger)
        var applied: [Int: (String, Date)] = [:]
        for try await (version, checksum, at) in try await connection.query(
            "SELECT version, checksum, applied_at FROM schema_migrations", logger: logger
        ).decode((Int, String, Date).self) {
            applied[version] = (checksum, at)
        }
        return migrations.map {
            Status(migration: $0, appliedAt: applied[$0.version]?.1, appliedChecksum: applied[$0.version]?.0)
        }
    }

    /// Applies every pending migration; returns the names applied.
    /// - Throws: `MigrationError` when an applied migration was edited; nothing is applied then.
    package func migrate(on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await ensureTable(connection, logger: logger)
        try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
        let states = try await status(on: connection, logger: logger)
        if let edited = states.first(where: \.isEdited) {
            throw MigrationError(
                "migration \(edited.migration.name).sql was edited after it was applied "
                    + "(applied checksum \(edited.appliedChecksum ?? ""), file checksum \(edited.migration.checksum)); "
                    + "add a new migration instead"
            )
        }
        var applied: [String] = []
        for state in states where state.appliedAt == nil {
            let migration = state.migration
            try await connection.query("BEGIN", logger: logger)
            do {
                // A migration file holds many statements: run it through PL/pgSQL's EXECUTE, which
                // accepts a multi-statement string bound as one parameter (no splitting, no quoting).
                try await connection.query(
                    """
                    CREATE OR REPLACE FUNCTION pg_temp.backoffice_migrate(sql text) RETURNS void LANGUAGE plpgsql \
                    AS $$ BEGIN EXECUTE sql; END $$
                    """,
                    logger: logger)
                try await connection.query("SELECT pg_temp.backoffice_migrate(\(migration.sql))", logger: logger)
                try await connection.query(
                    """
                    INSERT INTO schema_migrations (version, name, checksum) VALUES (\(migration.version), \
                    \(migration.name), \(migration.checksum))
                    """,
                    logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw MigrationError("migration \(migration.name).sql failed: \(String(reflecting: error))")
            }
            applied.append(migration.name)
        }
        try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
        return applied
    }

    private func ensureTable(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
    }
}

package struct MigrationError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
