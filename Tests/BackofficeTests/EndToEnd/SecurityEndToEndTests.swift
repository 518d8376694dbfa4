import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A PostgreSQL client tool (`pg_dump`) of the installed server version.
func postgresTool(_ name: String) -> String {
    let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted(by: >)
    let dirs =
        versions.map { "/usr/lib/postgresql/\($0)/bin" }
        + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    return dirs.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? name
}

@Suite("End to end: security promises of the built executable")
struct SecurityEndToEndTests {
    @Test("a token secret exists only in the response that delivers it: not in a replay, not in a pg_dump")
    func tokenSecretsAreNotKept() async throws {
        try await TestEnvironment.with { env in
            try await withServer(env) { base in
                let admin = ["BACKOFFICE_URL": base, "BACKOFFICE_TOKEN": env.fixture.tokens[.platformAdmin]!]
                let operatorID = try #require(env.fixture.principals[.backendManager]?.operatorID).uuidString
                    .lowercased()
                let key = "mint-\(UUID().uuidString)"
                let first = try cli(
                    [
                        "tokens", "create", "--operator", operatorID, "--name", "laptop", "--idempotency-key", key,
                        "--output", "json",
                    ], admin)
                #expect(first.status == 0, "\(first.output)")
                let created = try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [String: Any]
                let secret = try #require(created?["secret"] as? String)
                #expect(secret.hasPrefix("bo_"))
                let second = try cli(
                    ["tokens", "create", "--operator", operatorID, "--name", "phone", "--output", "json"], admin)
                let otherSecret = try #require(
                    (try JSONSerialization.jsonObject(with: Data(second.output.utf8)) as? [String: Any])?["secret"]
                        as? String)

                let replay = try cli(
                    [
                        "tokens", "create", "--operator", operatorID, "--name", "laptop", "--idempotency-key", key,
                        "--output", "json",
                    ], admin)
                #expect(replay.status == 0)
                let replayed = try JSONSerialization.jsonObject(with: Data(replay.output.utf8)) as? [String: Any]
                #expect(replayed?["secret"] == nil, "a replay does not carry the secret")
                #expect(replayed?["secret_already_delivered"] as? Bool == true)
                #expect(
                    (replayed?["token"] as? [String: Any])?["id"] as? String == (created?["token"] as? [String: Any])?[
                        "id"] as? String)

                let dump = try ChildProcess.run(
                    [postgresTool("pg_dump"), "--data-only", "--dbname", env.owner.connectionString],
                    environment: environment([:]))
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
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "config-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: folder) }
                let config = ["BACKOFFICE_CONFIG": folder.appendingPathComponent("backoffice/config.json").path]
                let refused = try cli(
                    ["login", "--url", base, "--token", "bo_" + String(repeating: "x", count: 43), "--profile", "ops"],
                    config)
                #expect(refused.status == 4, "\(refused.output)")
                #expect(
                    !FileManager.default.fileExists(atPath: config["BACKOFFICE_CONFIG"]!),
                    "a refused token is not saved")
                let manager = env.fixture.tokens[.backendManager]!
                let login = try cli(["login", "--url", base, "--token", manager, "--profile", "ops"], config)
                #expect(login.status == 0, "\(login.output)")
                #expect(login.output.contains("backend_manager"))
                let mode =
                    try FileManager.default.attributesOfItem(atPath: config["BACKOFFICE_CONFIG"]!)[.posixPermissions]
                    as? Int
                #expect(mode == 0o600)
                let folderMode =
                    try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("backoffice").path)[
                        .posixPermissions] as? Int
                #expect(folderMode == 0o700)
                let list = try cli(["accounts", "list", "--limit", "1", "--output", "json"], config)
                #expect(list.status == 0, "no exported URL or token needed: \(list.output)")
                let whoami = try cli(["whoami", "--output", "json"], config)
                #expect(whoami.output.contains("\"role\" : \"backend_manager\""))
                let overridden = try cli(
                    ["whoami", "--output", "json", "--token", env.fixture.tokens[.auditor]!], config)
                #expect(overridden.output.contains("\"role\" : \"auditor\""), "a flag wins over the profile")
                #expect(try cli(["logout", "--profile", "ops"], config).status == 0)
                #expect(
                    try cli(["accounts", "list", "--url", base], config).status == 4, "after logout there is no token")
            }
        }
    }

    /// Runs `serve` with `extra` in its environment until it exits (it is expected to refuse to
    /// start): its exit status and everything it wrote.
    func refusedServe(_ extra: [String: String], arguments: [String] = []) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = try ChildProcess.spawn(
            [
                backofficeExecutable, "serve", "--port", "0", "--policies",
                projectRoot.appendingPathComponent("policies").path,
            ] + arguments,
            environment: environment(extra), outputPath: log)
        let status = ChildProcess.wait(server)
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test("serve refuses a superuser database role (exit 7) before serving anything")
    func serveRefusesSuperuser() async throws {
        try await TestEnvironment.with { env in
            let (status, output) = try refusedServe([
                "BACKOFFICE_DATABASE_URL": env.owner.connectionString, "BACKOFFICE_PAYMENTS": "simulated",
                "BACKOFFICE_SECOND_FACTOR_KEY": SecondFactorKey.generate().text, "BACKOFFICE_MAIL": "log",
            ])
            #expect(status == 7, "\(output)")
            #expect(output.contains("is a superuser"))
            #expect(!output.contains("listening on"))
            #expect(!output.contains(env.owner.password ?? "no password"), "the password is not printed")
        }
    }

    @Test(
        """
        serve without BACKOFFICE_PAYMENTS refuses to start (usage, exit 64) and names the setting: it never falls \
        back to the simulated provider
        """
    )
    func serveNeedsPayments() async throws {
        try await TestEnvironment.with { env in
            let (status, output) = try refusedServe(["BACKOFFICE_DATABASE_URL": env.appURL.connectionString])
            #expect(status == 64, "\(output)")
            #expect(output.contains("BACKOFFICE_PAYMENTS"))
            #expect(!output.contains("listening on"))
        }
    }

    @Test(
        """
        serve without mail (BACKOFFICE_SMTP_URL, or BACKOFFICE_MAIL=log on purpose) refuses to start (usage, exit \
        64) and names the settings; an SMTP URL needs the public URL
        """
    )
    func serveNeedsMail() async throws {
        try await TestEnvironment.with { env in
            let base = [
                "BACKOFFICE_DATABASE_URL": env.appURL.connectionString, "BACKOFFICE_PAYMENTS": "simulated",
                "BACKOFFICE_SECOND_FACTOR_KEY": SecondFactorKey.generate().text,
            ]
            for (extra, named) in [
                ([:], "BACKOFFICE_SMTP_URL"), (["BACKOFFICE_MAIL": "yes"], "BACKOFFICE_MAIL=log"),
                (["BACKOFFICE_SMTP_URL": "smtp://u:p@mail.example:587"], "BACKOFFICE_PUBLIC_URL"),
                (
                    ["BACKOFFICE_SMTP_URL": "ftp://mail.example", "BACKOFFICE_PUBLIC_URL": "https://bo.example"],
                    "smtp (STARTTLS) or smtps"
                ),
            ] {
                let (status, output) = try refusedServe(base.merging(extra) { _, new in new })
                #expect(status == 64, "\(output)")
                #expect(output.contains(named), "names \(named): \(output)")
                #expect(!output.contains("listening on"))
            }
        }
    }

    @Test(
        """
        serve on an address other than loopback without a public URL refuses to start (usage, exit 64), naming \
        --public-url: its tokens' issuer would be http://0.0.0.0:PORT
        """
    )
    func serveOffLoopbackNeedsPublicURL() async throws {
        try await TestEnvironment.with { env in
            let settings = [
                "BACKOFFICE_DATABASE_URL": env.appURL.connectionString, "BACKOFFICE_PAYMENTS": "simulated",
                "BACKOFFICE_SECOND_FACTOR_KEY": SecondFactorKey.generate().text, "BACKOFFICE_MAIL": "log",
            ]
            let (status, output) = try refusedServe(settings, arguments: ["--host", "0.0.0.0"])
            #expect(status == 64, "\(output)")
            #expect(output.contains("--public-url") && output.contains("0.0.0.0"))
            #expect(!output.contains("listening on"))
        }
    }

    @Test("serve without a valid BACKOFFICE_SECOND_FACTOR_KEY refuses to start (usage, exit 64) and names the setting")
    func serveNeedsSecondFactorKey() async throws {
        try await TestEnvironment.with { env in
            for key in [nil, "too-short"] {
                var settings = [
                    "BACKOFFICE_DATABASE_URL": env.appURL.connectionString, "BACKOFFICE_PAYMENTS": "simulated",
                ]
                settings["BACKOFFICE_SECOND_FACTOR_KEY"] = key
                let (status, output) = try refusedServe(settings)
                #expect(status == 64, "\(output)")
                #expect(output.contains("BACKOFFICE_SECOND_FACTOR_KEY"))
                #expect(!output.contains("listening on"))
            }
        }
    }
}
