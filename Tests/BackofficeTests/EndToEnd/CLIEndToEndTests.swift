import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

#if canImport(Glibc)
    import Glibc
#endif

/// The built `backoffice` executable, beside this test bundle.
var backofficeExecutable: String {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "backoffice"
    ).path
    if FileManager.default.isExecutableFile(atPath: beside) { return beside }
    return projectRoot.appendingPathComponent(".build/debug/backoffice").path
}

/// A finished command: exit code and combined output.
struct Finished {
    let status: Int32
    let output: String
}

/// The environment for a CLI run: this process's, without ambient BACKOFFICE_URL/TOKEN, plus `extra`.
func environment(_ extra: [String: String]) -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "BACKOFFICE_TOKEN")
    env.removeValue(forKey: "BACKOFFICE_URL")
    env.removeValue(forKey: "BACKOFFICE_PAYMENTS")
    for mail in ["BACKOFFICE_MAIL", "BACKOFFICE_SMTP_URL", "BACKOFFICE_PUBLIC_URL"] { env.removeValue(forKey: mail) }
    return env.merging(extra) { _, new in new }
}

/// Runs `backoffice serve` against the environment's database (as the service role) on a free
/// port for the duration of `body`, which gets the server's base URL; `arguments` and `extra`
/// add to its command line and environment. `stopped` gets everything the server wrote (standard
/// output and error), once it has stopped.
func withServer(
    _ env: TestEnvironment, arguments: [String] = [], environment extra: [String: String] = [:],
    _ body: (String) async throws -> Void,
    stopped: (String) throws -> Void = { _ in }
) async throws {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).log").path
    let server = try ChildProcess.spawn(
        [
            backofficeExecutable, "serve", "--port", "0", "--policies",
            projectRoot.appendingPathComponent("policies").path,
        ] + arguments,
        environment: environment(
            [
                "BACKOFFICE_DATABASE_URL": env.appURL.connectionString, "BACKOFFICE_PAYMENTS": "simulated",
                "BACKOFFICE_SECOND_FACTOR_KEY": SecondFactorKey.generate().text, "BACKOFFICE_MAIL": "log",
            ].merging(extra) { _, new in new }),
        outputPath: log)
    var running = true
    func stop() -> String {
        if running {
            kill(server, SIGTERM)
            _ = ChildProcess.wait(server)
            running = false
        }
        return (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    }
    defer {
        _ = stop()
        try? FileManager.default.removeItem(atPath: log)
    }
    var url: String?
    for _ in 0..<200 where url == nil {
        try await Task.sleep(for: .milliseconds(50))
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
            url = String(line.dropFirst(13))
        }
    }
    let base = try #require(
        url, "the server did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    try await body(base)
    try stopped(stop())
}

/// Runs the CLI to completion.
func cli(_ arguments: [String], _ extra: [String: String] = [:]) throws -> Finished {
    let (status, output) = try ChildProcess.run([backofficeExecutable] + arguments, environment: environment(extra))
    return Finished(status: status, output: output)
}

@Suite("End to end: the built executable against a live server")
struct CLIEndToEndTests {
    @Test("serve, then drive it with the CLI: exit codes, audit verify, tampering detected with exit 8")
    func endToEnd() async throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: backofficeExecutable),
            "build the package first: \(backofficeExecutable)")
        try await TestEnvironment.with { env in
            let customer = try await env.customer()
            try await withServer(env) { base in
                try await drive(env, base: base, customer: customer)
            }
        }
    }

    private func drive(_ env: TestEnvironment, base: String, customer: Customer) async throws {
        let manager = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.backendManager]!]
        let id = customer.id.uuidString.lowercased()

        let lock = try cli(
            ["accounts", "lock", id, "--reason", "Chargeback under investigation", "--output", "json"], manager)
        #expect(lock.status == 0, "\(lock.output)")
        #expect(lock.output.contains("\"status\" : \"locked\""))
        let again = try cli(["accounts", "lock", id, "--reason", "again"], manager)
        #expect(again.status == 5)
        #expect(again.output.contains("invalid_transition"))
        let partner = try cli(
            ["accounts", "lock", id, "--reason", "x"],
            ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.partners[0].adminToken])
        #expect(partner.status == 4)
        #expect(partner.output.contains("forbidden"))
        let anonymous = try cli(["accounts", "unlock", id, "--reason", "x", "--url", base])
        #expect(anonymous.status == 4)
        let missing = try cli(["accounts", "show", UUID().uuidString], manager)
        #expect(missing.status == 3)
        let usage = try cli(["accounts", "lock", id], manager)
        #expect(usage.status == 64)
        let unlock = try cli(
            ["accounts", "unlock", id, "--reason", "Identity confirmed", "--output", "table"], manager)
        #expect(unlock.status == 0)
        let history = try cli(["accounts", "history", id, "--output", "jsonl"], manager)
        #expect(history.output.split(separator: "\n").count == 3)  // sync, lock, unlock
        let down = try cli(["accounts", "list", "--url", "http://127.0.0.1:1"], manager)
        #expect(down.status == 7)

        let auditor = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.auditor]!]
        let checkpointFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "heads-\(UUID().uuidString).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: checkpointFile) }
        #expect(try cli(["audit", "checkpoint", "--file", checkpointFile], auditor).status == 0)
        let clean = try cli(["audit", "verify", "--checkpoint", checkpointFile, "--output", "table"], auditor)
        #expect(clean.status == 0, "\(clean.output)")
        #expect(clean.output.contains("intact"))

        let victim = try #require(
            try await env.ownerScalar(
                "SELECT id FROM audit_events WHERE action = 'accounts.lock' AND target_id = '\(id)'", as: Int64.self))
        try await env.owner.withConnection(logger: testLogger) { connection in
            try await connection.query("SET session_replication_role = replica", logger: testLogger)
            try await connection.query(
                "UPDATE audit_events SET reason = 'routine check' WHERE id = \(victim)", logger: testLogger)
        }
        let tampered = try cli(["audit", "verify", "--output", "table"], auditor)
        #expect(tampered.status == 8)
        #expect(tampered.output.contains("first bad event: \(victim)"))

        let export = try cli(["audit", "export", "--target", id], auditor)
        #expect(export.status == 0)
        #expect(export.output.split(separator: "\n").count == 3)
    }

    @Test("policies check names the file and entry of a bad policy (exit 6)")
    func policiesCheck() throws {
        let good = try cli(["policies", "check", projectRoot.appendingPathComponent("policies").path])
        #expect(good.status == 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in try PolicySet.texts(in: projectRoot.appendingPathComponent("policies")) {
            let file = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        let access = folder.appendingPathComponent("access.yaml")
        try (try String(contentsOf: access, encoding: .utf8)).replacingOccurrences(
            of: "- audit.export", with: "- audit.exports"
        )
        .write(to: access, atomically: true, encoding: .utf8)
        let bad = try cli(["policies", "check", folder.path])
        #expect(bad.status == 6)
        #expect(bad.output.contains("access.yaml"))
        #expect(bad.output.contains("roles.auditor.allow[1]"))
        #expect(bad.output.contains("audit.exports"))
    }

    @Test("every x-cli group is reachable from the root, and every generated command's help passes its checks")
    func everyGroupReachable() throws {
        let contract = try String(
            contentsOf: projectRoot.appendingPathComponent("Sources/BackofficeAPI/openapi.yaml"), encoding: .utf8)
        let lines = contract.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "x-cli-groups:") else {
            Issue.record("openapi.yaml declares no x-cli-groups")
            return
        }
        // The top-level groups: `  Accounts:` then `    name: accounts` (a nested group's key has a dot).
        var names: [String] = []
        var key = ""
        for line in lines[(start + 1)...].prefix(while: { $0.hasPrefix(" ") }) {
            if !line.hasPrefix("   "), line.hasSuffix(":") { key = line.trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("    name: "), !key.contains(".") {
                names.append(String(line.dropFirst("    name: ".count)))
            }
        }
        #expect(names.contains("subscriptions") && names.contains("billing"), "\(names)")
        for name in names {
            let help = try cli(["help", name])
            #expect(help.status == 0 && help.output.contains("USAGE: backoffice \(name)"), "\(name): \(help.output)")
        }
        // Every operation's command (`command: Group.Name`) is among its group's subcommands.
        var subcommands: [String: [String]] = [:]
        key = ""
        for line in lines[(start + 1)...].prefix(while: { $0.hasPrefix(" ") }) {
            if !line.hasPrefix("   "), line.hasSuffix(":") {
                key = String(line.trimmingCharacters(in: .whitespaces).dropLast())
            }
            if line.hasPrefix("    subcommands: [") {
                subcommands[key] = line.dropFirst("    subcommands: [".count).dropLast().split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            }
        }
        let commands = lines.filter { $0.hasPrefix("        command: ") }.map {
            $0.dropFirst("        command: ".count)
        }
        #expect(commands.count > 80, "\(commands.count) operations with a command")
        for command in commands {
            let parts = command.split(separator: ".")
            let group = parts.dropLast().joined(separator: "."), name = String(parts.last ?? "")
            #expect(subcommands[group]?.contains(name) == true, "\(command) is not among \(group)'s subcommands")
        }
        // Every generated command's help: its options pass ArgumentParser's checks (a body field
        // named like a global option, `--url`, fails here rather than in a user's hands).
        for command in Set(commands.map(String.init)) {
            let parts = command.split(separator: ".").map(String.init)
            guard parts.count == 2, let index = lines.firstIndex(of: "  \(parts[0]):"),
                let name = lines[index + 1].split(separator: "name: ").last.map(String.init)
            else { continue }
            let help = try cli(["help", name, Self.kebab(parts[1])])
            #expect(help.status == 0 && help.output.contains("USAGE: backoffice \(name)"), "\(command): \(help.output)")
        }
    }

    /// `RollSecret` → `roll-secret`, as ArgumentParser names a command.
    static func kebab(_ name: String) -> String {
        name.enumerated().map { index, character in
            character.isUppercase && index > 0 ? "-" + character.lowercased() : character.lowercased()
        }.joined()
    }
}
