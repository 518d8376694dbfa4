import Backoffice
import Foundation
import Testing

/// A PostgreSQL client tool (`pg_dump`) of the installed server version.
func postgresTool(_ name: String) -> String {
    let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted(by: >)
    let dirs =
        versions.map { "/usr/lib/postgresql/\($0)/bin" } + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    return dirs.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? name
}

@Suite("End to end: security promises of the built executable")
struct SecurityEndToEndTests {
    @Test("a token secret exists only in the response that delivers it: not in a replay, not in a pg_dump")
    func tokenSecretsAreNotKept() async throws {
        try await TestEnvironment.with { env in
            try await withServer(env) { base in
                let admin = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.platformAdmin]!]
                let operatorID = try #require(env.fixture.principals[.backendManager]?.operatorID).uuidString.lowercased()
                let key = "mint-\(UUID().uuidString)"
                let first = try cli(
                    ["tokens", "create", "--operator", operatorID, "--name", "laptop", "--idempotency-key", key, "--output", "json"], admin)
                #expect(first.status == 0, "\(first.output)")
                let created = try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [String: Any]
                let secret = try #require(created?["secret"] as? String)
                #expect(secret.hasPrefix("bo_"))
                let second = try cli(["tokens", "create", "--operator", operatorID, "--name", "phone", "--output", "json"], admin)
                let otherSecret = try #require(
                    (try JSONSerialization.jsonObject(with: Data(second.output.utf8)) as? [String: Any])?["secret"] as? String)

                let replay = try cli(
                    ["tokens", "create", "--operator", operatorID, "--name", "laptop", "--idempotency-key", key, "--output", "json"], admin)
                #expect(replay.status == 0)
                let replayed = try JSONSerialization.jsonObject(with: Data(replay.output.utf8)) as? [String: Any]
                #expect(replayed?["secret"] == nil, "a replay does not carry the secret")
                #expect(replayed?["secret_already_delivered"] as? Bool == true)
                #expect((replayed?["token"] as? [String: Any])?["id"] as? String == (created?["token"] as? [String: Any])?["id"] as? String)

                let dump = try ChildProcess.run(
                    [postgresTool("pg_dump"), "--data-only", "--dbname", env.owner.connectionString], environment: environment([:]))
                #expect(dump.0 == 0, "\(dump.1)")
                #expect(dump.1.contains("idempotency_keys"), "the dump holds the idempotency records")
                #expect(!dump.1.contains(secret), "the first token's secret is nowhere in the database")
                #expect(!dump.1.contains(otherSecret), "nor the second's")
            }
        }
    }

    @Test("login keeps a URL and token per profile in a private file; a refused token is not saved")
    func loginProfiles() async throws {
        try await TestEnvironment.with { env in
            try await withServer(env) { base in
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: folder) }
                let config = ["BACKOFFICE_CONFIG": folder.appendingPathComponent("backoffice/config.json").path]
                let refused = try cli(["login", "--url", base, "--token", "bo_" + String(repeating: "x", count: 43), "--profile", "ops"], config)
                #expect(refused.status == 4, "\(refused.output)")
                #expect(!FileManager.default.fileExists(atPath: config["BACKOFFICE_CONFIG"]!), "a refused token is not saved")
                let manager = env.fixture.tokens[.backendManager]!
                let login = try cli(["login", "--url", base, "--token", manager, "--profile", "ops"], config)
                #expect(login.status == 0, "\(login.output)")
                #expect(login.output.contains("backend_manager"))
                let mode = try FileManager.default.attributesOfItem(atPath: config["BACKOFFICE_CONFIG"]!)[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let folderMode =
                    try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("backoffice").path)[.posixPermissions] as? Int
                #expect(folderMode == 0o700)
                let list = try cli(["accounts", "list", "--limit", "1", "--output", "json"], config)
                #expect(list.status == 0, "no exported URL or token needed: \(list.output)")
                let whoami = try cli(["whoami", "--output", "json"], config)
                #expect(whoami.output.contains("\"role\" : \"backend_manager\""))
                let overridden = try cli(["whoami", "--output", "json", "--token", env.fixture.tokens[.auditor]!], config)
                #expect(overridden.output.contains("\"role\" : \"auditor\""), "a flag wins over the profile")
                #expect(try cli(["logout", "--profile", "ops"], config).status == 0)
                #expect(try cli(["accounts", "list", "--url", base], config).status == 4, "after logout there is no token")
            }
        }
    }

    /// Runs `serve` with `extra` in its environment until it exits (it is expected to refuse to
    /// start): its exit status and everything it wrote.
    func refusedServe(_ extra: [String: String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = try ChildProcess.spawn(
            [backofficeExecutable, "serve", "--port", "0", "--policies", projectRoot.appendingPathComponent("policies").path],
            environment: environment(extra), outputPath: log)
        let status = ChildProcess.wait(server)
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test("serve refuses a superuser database role (exit 7) before serving anything")
    func serveRefusesSuperuser() async throws {
        try await TestEnvironment.with { env in
            let (status, output) = try refusedServe(["BACKOFFICE_DATABASE_URL": env.owner.connectionString, "BACKOFFICE_PAYMENTS": "simulated"])
            #expect(status == 7, "\(output)")
            #expect(output.contains("is a superuser"))
            #expect(!output.contains("listening on"))
            #expect(!output.contains(env.owner.password ?? "no password"), "the password is not printed")
        }
    }

    @Test("serve without BACKOFFICE_PAYMENTS refuses to start (usage, exit 64) and names the setting: it never falls back to the simulated provider")
    func serveNeedsPayments() async throws {
        try await TestEnvironment.with { env in
            let (status, output) = try refusedServe(["BACKOFFICE_DATABASE_URL": env.appURL.connectionString])
            #expect(status == 64, "\(output)")
            #expect(output.contains("BACKOFFICE_PAYMENTS"))
            #expect(!output.contains("listening on"))
        }
    }

    @Test("audit verify --offline recomputes every hash from an export; an edited line is named (exit 8); a forged checkpoint is refused")
    func offlineVerification() async throws {
        try await withAuditScene { scene in
            let (customer, manager, auditor) = (scene.customer, scene.manager, scene.auditor)
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let id = customer.id.uuidString.lowercased()
                #expect(try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0)

                #expect(try cli(["audit", "keygen", "--private-key", path("audit.key"), "--public-key", path("audit.pub")]).status == 0)
                let mode = try FileManager.default.attributesOfItem(atPath: path("audit.key"))[.posixPermissions] as? Int
                #expect(mode == 0o600)
                #expect(try cli(["audit", "checkpoint", "--file", path("heads.json"), "--signing-key", path("audit.key")], auditor).status == 0)
                #expect(try cli(["audit", "export", "--file", path("audit.jsonl")], auditor).status == 0)

                let verify = [
                    "audit", "verify", "--offline", path("audit.jsonl"), "--checkpoint", path("heads.json"), "--public-key", path("audit.pub"),
                ]
                let clean = try cli(verify)
                #expect(clean.status == 0, "\(clean.output)")
                #expect(clean.output.contains("intact (verified offline)"))

                // The lock event's line, edited the way a compromised server (or anyone) would.
                let lines = try String(contentsOfFile: path("audit.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
                let index = try #require(lines.firstIndex { $0.contains("\"accounts.lock\"") && $0.contains(id) })
                let victim = try #require((try JSONSerialization.jsonObject(with: Data(lines[index].utf8)) as? [String: Any])?["id"] as? Int)
                var edited = lines
                edited[index] = lines[index].replacingOccurrences(
                    of: "\"reason\": \"Chargeback under investigation\"", with: "\"reason\": \"Routine check\"")
                #expect(edited[index] != lines[index])
                try (edited.joined(separator: "\n") + "\n").write(toFile: path("audit.jsonl"), atomically: true, encoding: .utf8)
                let tampered = try cli(verify)
                #expect(tampered.status == 8, "\(tampered.output)")
                #expect(tampered.output.contains("first bad event: \(victim)"))

                // A checkpoint whose heads were changed after signing, or checked with another key, is refused.
                try (lines.joined(separator: "\n") + "\n").write(toFile: path("audit.jsonl"), atomically: true, encoding: .utf8)
                let signed = try String(contentsOfFile: path("heads.json"), encoding: .utf8)
                var forged = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(signed.utf8))
                #expect(forged.signature != nil)
                forged.heads[0] = ChainHead(chain: forged.heads[0].chain, seq: forged.heads[0].seq - 1, hash: forged.heads[0].hash)
                try JSONEncoder().encode(forged).write(to: URL(fileURLWithPath: path("heads.json")))
                let refused = try cli(verify)
                #expect(refused.status == 8)
                #expect(refused.output.contains("REFUSED"))
                try signed.write(toFile: path("heads.json"), atomically: true, encoding: .utf8)
                #expect(try cli(["audit", "keygen", "--private-key", path("other.key"), "--public-key", path("other.pub")]).status == 0)
                let otherKey = try cli([
                    "audit", "verify", "--offline", path("audit.jsonl"), "--checkpoint", path("heads.json"), "--public-key", path("other.pub"),
                ])
                #expect(otherKey.status == 8)
                #expect(otherKey.output.contains("REFUSED"))
            }
        }
    }

    @Test(
        "a period's export verifies from the previous period's sealed heads and is sealed for the next; a missing event, an unsigned start or an overwritten seal is refused"
    )
    func sealedPeriods() async throws {
        try await withAuditScene { scene in
            let (customer, manager, auditor) = (scene.customer, scene.manager, scene.auditor)
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let id = customer.id.uuidString.lowercased()
                #expect(try cli(["audit", "keygen", "--private-key", path("audit.key"), "--public-key", path("audit.pub")]).status == 0)
                #expect(try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0)
                try await Task.sleep(for: .milliseconds(20))
                let format = ISO8601DateFormatter()
                format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let cut = format.string(from: Date())
                try await Task.sleep(for: .milliseconds(20))
                #expect(try cli(["accounts", "unlock", id, "--reason", "Chargeback resolved"], manager).status == 0)
                #expect(try cli(["accounts", "lock", id, "--reason", "Second chargeback"], manager).status == 0)

                // The first period: everything before the cut, verified from genesis and sealed.
                #expect(try cli(["audit", "export", "--until", cut, "--file", path("p1.jsonl")], auditor).status == 0)
                let first = try cli([
                    "audit", "verify", "--offline", path("p1.jsonl"), "--seal", path("p1.heads.json"), "--signing-key", path("audit.key"),
                ])
                #expect(first.status == 0, "\(first.output)")
                #expect(first.output.contains("sealed"))
                let sealed = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: path("p1.heads.json"))))
                #expect(sealed.signatureProblem(publicKey: try AuditSigningKey.publicKey(file: path("audit.pub"))) == nil)

                // The second period continues the first's heads.
                #expect(try cli(["audit", "export", "--since", cut, "--file", path("p2.jsonl")], auditor).status == 0)
                let lines = try String(contentsOfFile: path("p2.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
                #expect(lines.contains { $0.contains("accounts.unlock") } && !lines.contains { $0.contains("Chargeback under investigation") })
                let second = [
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json"), "--public-key", path("audit.pub"),
                    "--seal", path("p2.heads.json"), "--signing-key", path("audit.key"),
                ]
                let continued = try cli(second)
                #expect(continued.status == 0, "\(continued.output)")
                #expect(continued.output.contains("continuing the signed heads"))
                let next = try JSONDecoder().decode(AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: path("p2.heads.json"))))
                #expect(Set(next.heads.map(\.chain)).isSuperset(of: sealed.heads.map(\.chain)), "chains without events carry over")
                let again = try cli(second)
                #expect(again.status != 0 && again.output.contains("never overwritten"), "\(again.output)")

                // Alone, the second period does not start at genesis; without its unlock event (the
                // second lock, on the same chain, follows it) it no longer continues the seal.
                #expect(try cli(["audit", "verify", "--offline", path("p2.jsonl")]).status == 8)
                let unlock = try #require(lines.firstIndex { $0.contains("accounts.unlock") })
                try (lines.enumerated().filter { $0.offset != unlock }.map(\.element).joined(separator: "\n") + "\n")
                    .write(toFile: path("p2.jsonl"), atomically: true, encoding: .utf8)
                let gap = try cli([
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json"), "--public-key", path("audit.pub"),
                ])
                #expect(gap.status == 8 && gap.output.contains("deleted"), "\(gap.output)")

                // Unsigned or forged start heads prove nothing.
                let unsigned = try cli(["audit", "verify", "--offline", path("p2.jsonl"), "--from", path("p1.heads.json")])
                #expect(unsigned.status != 0 && unsigned.output.contains("--public-key"), "\(unsigned.output)")
                var forged = sealed
                forged.heads[0] = ChainHead(chain: forged.heads[0].chain, seq: forged.heads[0].seq + 1, hash: forged.heads[0].hash)
                try forged.write(to: path("forged.json"))
                let refused = try cli([
                    "audit", "verify", "--offline", path("p2.jsonl"), "--from", path("forged.json"), "--public-key", path("audit.pub"),
                ])
                #expect(refused.status == 8 && refused.output.contains("REFUSED"), "\(refused.output)")
            }
        }
    }

    @Test(
        "audit archive removes events up to a sealed day past retention; the chains verify across the cut online and offline; a seal the database does not match removes nothing"
    )
    func archival() async throws {
        try await withAuditScene { scene in
            let (env, customer, folder, manager, auditor) = (scene.env, scene.customer, scene.folder, scene.manager, scene.auditor)
            func path(_ name: String) -> String { scene.path(name) }
            do {
                let owner = ["BACKOFFICE_ADMIN_DATABASE_URL": env.owner.connectionString]
                let id = customer.id.uuidString.lowercased()
                let keys = ["--private-key", path("audit.key"), "--public-key", path("audit.pub")]
                #expect(try cli(["audit", "keygen"] + keys).status == 0)
                #expect(try cli(["accounts", "lock", id, "--reason", "Chargeback under investigation"], manager).status == 0)

                // A day long past, archived and sealed as ops/audit-daily does.
                #expect(try cli(["audit", "export", "--file", path("audit-2000-01-01.jsonl")], auditor).status == 0)
                let sealing = try cli([
                    "audit", "verify", "--offline", path("audit-2000-01-01.jsonl"), "--seal", path("audit-2000-01-01.heads.json"),
                    "--signing-key", path("audit.key"),
                ])
                #expect(sealing.status == 0, "\(sealing.output)")
                #expect(try cli(["accounts", "unlock", id, "--reason", "Chargeback resolved"], manager).status == 0)
                let stored = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let archived = try String(contentsOfFile: path("audit-2000-01-01.jsonl"), encoding: .utf8).split(separator: "\n").count
                let archive = [
                    "audit", "archive", "--archive-dir", folder.path, "--public-key", path("audit.pub"), "--policies", "\(projectRoot.path)/policies",
                ]

                let dry = try cli(archive + ["--dry-run"], owner)
                #expect(dry.status == 0 && dry.output.contains("would archive through 2000-01-01: \(archived) events"), "\(dry.output)")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == stored)

                let cut = try cli(archive, owner)
                #expect(cut.status == 0 && cut.output.contains("archived through 2000-01-01: \(archived) events"), "\(cut.output)")
                #expect(
                    try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == stored.map { $0 - archived + 1 },
                    "the archived events left; the archival itself is an event")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events WHERE action = 'audit.archive'", as: Int.self) == 1)

                // Online, each chain continues from its cut.
                let online = try cli(["audit", "verify"], auditor)
                #expect(online.status == 0 && online.output.contains("intact"), "\(online.output)")
                // Offline, what remains continues the seal, and the archive followed by it is one whole log.
                #expect(try cli(["audit", "export", "--file", path("rest.jsonl")], auditor).status == 0)
                #expect(try cli(["audit", "verify", "--offline", path("rest.jsonl")]).status == 8, "it no longer starts at the genesis")
                let continued = try cli([
                    "audit", "verify", "--offline", path("rest.jsonl"), "--from", path("audit-2000-01-01.heads.json"), "--public-key",
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
                    AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: path("audit-2000-01-01.heads.json"))))
                let lane = AuditChain.chain(tenantID: platformTenantID, targetID: id)
                let index = try #require(forged.heads.firstIndex { $0.chain == lane })
                forged.heads[index] = ChainHead(chain: lane, seq: forged.heads[index].seq + 1, hash: String(repeating: "ab", count: 32))
                forged.signature = nil
                try forged.signed(with: try AuditSigningKey.privateKey(file: path("audit.key"))).write(to: path("audit-2000-01-02.heads.json"))
                let before = try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self)
                let refused = try cli(archive, owner)
                #expect(refused.status == 8 && refused.output.contains("REFUSED"), "\(refused.output)")
                #expect(try await env.ownerScalar("SELECT count(*) FROM audit_events", as: Int.self) == before)
            }
            // The service's role can neither archive nor write a cut.
            let principal = env.fixture.principals[.platformAdmin]!
            #expect(await env.asService(principal, "SELECT * FROM audit_archive_through(current_date, '{}', '{}', '{}', 'x')")?.status == 403)
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
