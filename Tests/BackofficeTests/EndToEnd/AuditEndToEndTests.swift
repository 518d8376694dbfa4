import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

extension SecurityEndToEndTests {
    @Test(
        """
        audit verify --offline recomputes every hash from an export; an edited line is named (exit 8); a forged \
        checkpoint is refused
        """
    )
    func offlineVerification() async throws {
        try await withAuditScene { scene in
            let (customer, manager, auditor) = (scene.customer, scene.manager, scene.auditor)
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let id = customer.id.uuidString.lowercased()
                #expect(
                    try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0
                )

                #expect(
                    try cli(["audit", "keygen", "--private-key", path("audit.key"), "--public-key", path("audit.pub")])
                        .status == 0)
                let mode =
                    try FileManager.default.attributesOfItem(atPath: path("audit.key"))[.posixPermissions] as? Int
                #expect(mode == 0o600)
                #expect(
                    try cli(
                        ["audit", "checkpoint", "--file", path("heads.json"), "--signing-key", path("audit.key")],
                        auditor
                    ).status == 0)
                #expect(try cli(["audit", "export", "--file", path("audit.jsonl")], auditor).status == 0)

                let verify = [
                    "audit", "verify", "--offline", path("audit.jsonl"), "--checkpoint", path("heads.json"),
                    "--public-key", path("audit.pub"),
                ]
                let clean = try cli(verify)
                #expect(clean.status == 0, "\(clean.output)")
                #expect(clean.output.contains("intact (verified offline)"))

                // The lock event's line, edited the way a compromised server (or anyone) would.
                let lines = try String(contentsOfFile: path("audit.jsonl"), encoding: .utf8).split(separator: "\n").map(
                    String.init)
                let index = try #require(lines.firstIndex { $0.contains("\"accounts.lock\"") && $0.contains(id) })
                let victim = try #require(
                    (try JSONSerialization.jsonObject(with: Data(lines[index].utf8)) as? [String: Any])?["id"] as? Int)
                var edited = lines
                edited[index] = lines[index].replacingOccurrences(
                    of: "\"reason\": \"Chargeback under investigation\"", with: "\"reason\": \"Routine check\"")
                #expect(edited[index] != lines[index])
                try (edited.joined(separator: "\n") + "\n").write(
                    toFile: path("audit.jsonl"), atomically: true, encoding: .utf8)
                let tampered = try cli(verify)
                #expect(tampered.status == 8, "\(tampered.output)")
                #expect(tampered.output.contains("first bad event: \(victim)"))

                // A checkpoint whose heads were changed after signing, or checked with another key, is refused.
                try (lines.joined(separator: "\n") + "\n").write(
                    toFile: path("audit.jsonl"), atomically: true, encoding: .utf8)
                let signed = try String(contentsOfFile: path("heads.json"), encoding: .utf8)
                var forged = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(signed.utf8))
                #expect(forged.signature != nil)
                forged.heads[0] = ChainHead(
                    chain: forged.heads[0].chain, seq: forged.heads[0].seq - 1, hash: forged.heads[0].hash)
                try JSONEncoder().encode(forged).write(to: URL(fileURLWithPath: path("heads.json")))
                let refused = try cli(verify)
                #expect(refused.status == 8)
                #expect(refused.output.contains("REFUSED"))
                try signed.write(toFile: path("heads.json"), atomically: true, encoding: .utf8)
                #expect(
                    try cli(["audit", "keygen", "--private-key", path("other.key"), "--public-key", path("other.pub")])
                        .status == 0)
                let otherKey = try cli([
                    "audit", "verify", "--offline", path("audit.jsonl"), "--checkpoint", path("heads.json"),
                    "--public-key", path("other.pub"),
                ])
                #expect(otherKey.status == 8)
                #expect(otherKey.output.contains("REFUSED"))
            }
        }
    }

    @Test(
        """
        a period's export verifies from the previous period's sealed heads and is sealed for the next; a missing \
        event, an unsigned start or an overwritten seal is refused
        """
    )
    func sealedPeriods() async throws {
        try await withAuditScene { scene in
            let (customer, manager, auditor) = (scene.customer, scene.manager, scene.auditor)
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let id = customer.id.uuidString.lowercased()
                #expect(
                    try cli(["audit", "keygen", "--private-key", path("audit.key"), "--public-key", path("audit.pub")])
                        .status == 0)
                #expect(
                    try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0
                )
                // The cut is the millisecond after the lock's event (the CLI's times are in milliseconds), read
                // from the log itself (the database's clock stamps events): the unlock, a CLI run later, falls
                // after it without waiting on a clock.
                let cut = try #require(
                    try await scene.env.ownerScalar(
                        """
                        SELECT to_char((date_trunc('milliseconds', max(occurred_at)) + interval '1 millisecond') AT TIME
                            ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                        FROM audit_events WHERE action = 'accounts.lock'
                        """, as: String.self))
                #expect(try cli(["accounts", "unlock", id, "--reason", "Chargeback resolved"], manager).status == 0)
                #expect(try cli(["accounts", "lock", id, "--reason", "Second chargeback"], manager).status == 0)

                // The first period: everything before the cut, verified from genesis and sealed.
                #expect(try cli(["audit", "export", "--until", cut, "--file", path("p1.jsonl")], auditor).status == 0)
                let first = try cli([
                    "audit", "verify", "--offline", path("p1.jsonl"), "--seal", path("p1.heads.json"), "--signing-key",
                    path("audit.key"),
                ])
                #expect(first.status == 0, "\(first.output)")
                #expect(first.output.contains("sealed"))
                let sealed = try JSONDecoder().decode(
                    AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: path("p1.heads.json"))))
                #expect(
                    sealed.signatureProblem(publicKey: try AuditSigningKey.publicKey(file: path("audit.pub"))) == nil)

                // The second period continues the first's heads.
                #expect(try cli(["audit", "export", "--since", cut, "--file", path("p2.jsonl")], auditor).status == 0)
                let lines = try String(contentsOfFile: path("p2.jsonl"), encoding: .utf8).split(separator: "\n").map(
                    String.init)
                #expect(
                    lines.contains { $0.contains("accounts.unlock") }
                        && !lines.contains { $0.contains("Chargeback under investigation") })
                let second = [
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json"), "--public-key",
                    path("audit.pub"),
                    "--seal", path("p2.heads.json"), "--signing-key", path("audit.key"),
                ]
                let continued = try cli(second)
                #expect(continued.status == 0, "\(continued.output)")
                #expect(continued.output.contains("continuing the signed heads"))
                let next = try JSONDecoder().decode(
                    AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: path("p2.heads.json"))))
                #expect(
                    Set(next.heads.map(\.chain)).isSuperset(of: sealed.heads.map(\.chain)),
                    "chains without events carry over")
                let again = try cli(second)
                #expect(again.status != 0 && again.output.contains("never overwritten"), "\(again.output)")

                // Alone, the second period does not start at genesis; without its unlock event (the
                // second lock, on the same chain, follows it) it no longer continues the seal.
                #expect(try cli(["audit", "verify", "--offline", path("p2.jsonl")]).status == 8)
                let unlock = try #require(lines.firstIndex { $0.contains("accounts.unlock") })
                try (lines.enumerated().filter { $0.offset != unlock }.map(\.element).joined(separator: "\n") + "\n")
                    .write(toFile: path("p2.jsonl"), atomically: true, encoding: .utf8)
                let gap = try cli([
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json"), "--public-key",
                    path("audit.pub"),
                ])
                #expect(gap.status == 8 && gap.output.contains("deleted"), "\(gap.output)")

                // Unsigned or forged start heads prove nothing.
                let unsigned = try cli([
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json"),
                ])
                #expect(unsigned.status != 0 && unsigned.output.contains("--public-key"), "\(unsigned.output)")
                var forged = sealed
                forged.heads[0] = ChainHead(
                    chain: forged.heads[0].chain, seq: forged.heads[0].seq + 1, hash: forged.heads[0].hash)
                try forged.write(to: path("forged.json"))
                let refused = try cli([
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("forged.json"), "--public-key",
                    path("audit.pub"),
                ])
                #expect(refused.status == 8 && refused.output.contains("REFUSED"), "\(refused.output)")
            }
        }
    }

    @Test(
        """
        audit archive removes events up to a sealed day past retention; the chains verify across the cut online \
        and offline; a seal the database does not match removes nothing
        """
    )
    func archival() async throws {
        try await withAuditScene { scene in
            let (env, customer, folder, manager, auditor) = (
                scene.env, scene.customer, scene.folder, scene.manager, scene.auditor
            )
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let owner = ["BACKOFFICE_ADMIN_DATABASE_URL": env.owner.connectionString]
                let id = customer.id.uuidString.lowercased()
                let keys = ["--private-key", path("audit.key"), "--public-key", path("audit.pub")]
                #expect(try cli(["audit", "keygen"] + keys).status == 0)
                #expect(
                    try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0
                )

                // A day long past, archived and sealed as ops/audit-daily does.
                #expect(try cli(["audit", "export", "--file", path("audit-2000-01-01.jsonl")], auditor).status == 0)
                let sealing = try cli([
                    "audit", "verify", "--offline", path("audit-2000-01-01.jsonl"), "--seal",
                    path("audit-2000-01-01.heads.json"),
                    "--signing-key", path("audit.key"),
                ])
                #expect(sealing.status == 0, "\(sealing.output)")
                #expect(try cli(["accounts", "unlock", id, "--reason", "Chargeback resolved"], manager).status == 0)
                let stored = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let archived = try String(contentsOfFile: path("audit-2000-01-01.jsonl"), encoding: .utf8).split(
                    separator: "\n"
                ).count
                let archive = [
                    "audit", "archive", "--archive-dir", folder.path, "--public-key", path("audit.pub"), "--policies",
                    "\(projectRoot.path)/policies",
                ]

                let dry = try cli(archive + ["--dry-run"], owner)
                #expect(
                    dry.status == 0 && dry.output.contains("would archive through 2000-01-01: \(archived) events"),
                    "\(dry.output)")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == stored)

                let cut = try cli(archive, owner)
                #expect(
                    cut.status == 0 && cut.output.contains("archived through 2000-01-01: \(archived) events"),
                    "\(cut.output)")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                        == stored.map { $0 - archived + 1 },
                    "the archived events left; the archival itself is an event")
                #expect(
                    try await env.ownerScalar(
                        "SELECT count(*) FROM audit_events WHERE action = 'audit.archive'", as: Int.self) == 1)

                // Online, each chain continues from its cut.
                let online = try cli(["audit", "verify"], auditor)
                #expect(online.status == 0 && online.output.contains("intact"), "\(online.output)")
                // Offline, what remains continues the seal, and the archive followed by it is one whole log.
                #expect(try cli(["audit", "export", "--file", path("rest.jsonl")], auditor).status == 0)
                #expect(
                    try cli(["audit", "verify", "--offline", path("rest.jsonl")]).status == 8,
                    "it no longer starts at the genesis")
                let continued = try cli([
                    "audit", "verify", "--offline", path("rest.jsonl"), "--from", path("audit-2000-01-01.heads.json"),
                    "--public-key",
                    path("audit.pub"),
                ])
                #expect(continued.status == 0, "\(continued.output)")
                let whole =
                    try String(contentsOfFile: path("audit-2000-01-01.jsonl"), encoding: .utf8)
                    + String(contentsOfFile: path("rest.jsonl"), encoding: .utf8)
                try whole.write(toFile: path("whole.jsonl"), atomically: true, encoding: .utf8)
                let across = try cli(["audit", "verify", "--offline", path("whole.jsonl")])
                #expect(across.status == 0, "\(across.output)")

                // A later seal the database does not match (signed, but one head's hash differs) removes nothing.
                var forged = try JSONDecoder().decode(
                    AuditCheckpoint.self,
                    from: Data(contentsOf: URL(fileURLWithPath: path("audit-2000-01-01.heads.json"))))
                let lane = AuditChain.chain(tenantID: platformTenantID, targetID: id)
                let index = try #require(forged.heads.firstIndex { $0.chain == lane })
                forged.heads[index] = ChainHead(
                    chain: lane, seq: forged.heads[index].seq + 1, hash: String(repeating: "ab", count: 32))
                forged.signature = nil
                try forged.signed(with: try AuditSigningKey.privateKey(file: path("audit.key"))).write(
                    to: path("audit-2000-01-02.heads.json"))
                let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let refused = try cli(archive, owner)
                #expect(refused.status == 8 && refused.output.contains("REFUSED"), "\(refused.output)")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before)
            }
            // The service's role can neither archive nor write a cut.
            let principal = env.fixture.principals[.platformAdmin]!
            #expect(
                await env.asService(
                    principal, "SELECT * FROM audit_archive_through(current_date, '{}', '{}', '{}', 'x')")?.status
                    == 403)
            #expect(await env.asService(principal, "DELETE FROM audit_archive_cuts")?.status == 403)
            #expect(await env.asService(principal, "DELETE FROM audit_events")?.status == 403)
        }
    }

    /// What the audit tests share: a served environment with one customer, a scratch folder (removed
    /// afterwards) and the CLI environments of a backend manager and an auditor.
    struct AuditScene: Sendable {
        let env: TestEnvironment
        let customer: Customer
        let folder: URL
        let manager: [String: String]
        let auditor: [String: String]
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
    }

    func withAuditScene(_ body: @escaping @Sendable (AuditScene) async throws -> Void) async throws {
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await withServer(env) { base in
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("audit-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                try await body(
                    AuditScene(
                        env: env, customer: customer, folder: folder,
                        manager: ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.backendManager]!],
                        auditor: ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.auditor]!]))
            }
        }
    }
}
