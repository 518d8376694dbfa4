import ArgumentParser
import Backoffice
import BackofficeConsole
import BackofficeDemo
import BackofficePlatform
import Foundation
import Logging
import PostgresNIO
import Synchronization

struct Dev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the back office locally: private PostgreSQL, migrations, demo data, server on 127.0.0.1.",
        discussion: """
            Data lives in .backoffice/ (mode 0700, ignored by git; as root the cluster's own files live in \
            the postgres user's home, keyed by this folder) and is reused on the next run; Ctrl-C stops \
            the server and the cluster. PostgreSQL asks for passwords (scram-sha-256); they and the \
            tokens are written to .backoffice/credentials.json (mode 0600). A demo credential that no \
            longer works is issued again, unless its operator was disabled (the banner says which). \
            --reset removes the cluster and the credentials, wherever they live, and starts from fresh demo data. \
            The web console is served at /console/ on the same port; each demo person operator gets a console \
            password, printed in the banner and kept in credentials.json (console_sign_ins); those whose role \
            signs in with a second factor also get a TOTP secret (console_second_factors; `backoffice totp SECRET` \
            prints its current code), sealed under .backoffice/second-factor.key.
            Example: swift run backoffice dev --port 8080
            """)
    @Option(help: "Port to serve on.") var port = 8080
    @Option(help: "Folder for the cluster and credentials.") var data = ".backoffice"
    @Flag(help: "Remove the cluster and credentials first: start from fresh demo data.") var reset = false
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
            let clusterData =
                EmbeddedPostgres.rootSafeDirectory(key: home.path) ?? home.appendingPathComponent("postgres")
            if reset {
                say("removing the demo cluster (\(clusterData.path)) and credentials …")
                try EmbeddedPostgres.remove(dataDirectory: clusterData)
                for file in ["credentials.json", "postgres.password", "second-factor.key"] {
                    try? FileManager.default.removeItem(at: home.appendingPathComponent(file))
                }
            }
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
            let secondFactorKey = try Self.secondFactorKey(in: home)
            let setup = try await DemoEnvironment.prepare(
                cluster: cluster, serviceURL: serviceURL, migrations: migrator, policies: policies,
                contentPolicies: project.policiesDirectory.appendingPathComponent("content"),
                earningRules: project.policiesDirectory.appendingPathComponent("fitpoints/earning-rules.yaml"),
                credentialsFile: credentialsFile,
                secondFactorKey: secondFactorKey, logger: logger)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PrivateFile.replace(credentialsFile.path, contents: try encoder.encode(setup.credentials))
            var settings = ServerSettings(
                host: "127.0.0.1", port: port, databaseURL: try DatabaseURL(setup.credentials.databaseURL),
                policiesDirectory: project.policiesDirectory)
            settings.lockExpiryInterval = .seconds(2)
            settings.webhookSecrets = (setup.credentials.webhookSecrets ?? [:]).mapValues { [$0] }
            settings.secondFactorKey = secondFactorKey
            settings.outbound.rules = .dev
            settings.webhooks = WebhookSettings()
            settings.mail = try Self.mail(home: home, serviceURL: serviceURL, logger: logger)
            let banner = Banner(
                setup: setup, credentialsFile: credentialsFile.path, clusterData: clusterData.path,
                mail: settings.mail.transport is FileMailTransport
                    ? home.appendingPathComponent("mail").path : "the SMTP server of BACKOFFICE_SMTP_URL")
            try await BackofficeServer.run(settings: settings, logger: logger) { _ in banner.print() }
        }
    }

    /// Where `dev`'s mail goes: each message an `.eml` file in `.backoffice/mail/` (its path
    /// printed), or, with BACKOFFICE_SMTP_URL set, that SMTP server; links start with the dev
    /// server's own address.
    static func mail(home: URL, serviceURL: String, logger: Logger) throws -> MailSettings {
        var mail = MailSettings()
        mail.publicURL = serviceURL
        if let url = ProcessInfo.processInfo.environment["BACKOFFICE_SMTP_URL"], !url.isEmpty {
            let smtp: SMTPSettings
            do { smtp = try SMTPSettings(url: url) } catch { throw CLIFailure.usage("\(error)") }
            mail.transport = SMTPMailTransport(smtp)
            mail.from = smtp.from
        } else {
            let announcer = MailAnnouncer()
            mail.transport = FileMailTransport(folder: home.appendingPathComponent("mail")) { path in
                announcer.written(path)
            }
        }
        return mail
    }

    /// The key sealing the demo's TOTP secrets: `second-factor.key` in the data folder (mode
    /// 0600), made on first use.
    static func secondFactorKey(in home: URL) throws -> SecondFactorKey {
        let file = home.appendingPathComponent("second-factor.key")
        if let text = FileManager.default.contents(atPath: file.path).map({ String(decoding: $0, as: UTF8.self) }) {
            return try SecondFactorKey(base64: text)
        }
        let (key, text) = SecondFactorKey.generate()
        try PrivateFile.create(file.path, contents: Data(text.utf8))
        return key
    }
}

/// What `dev` prints once the server listens: tokens and commands that work as they are.
struct Banner: Sendable {
    let setup: DemoEnvironment.Setup
    let credentialsFile: String
    let clusterData: String
    /// Where mail goes.
    let mail: String

    func print() {
        let c = setup.credentials
        let me = Self.executable
        let active = setup.activeCustomer?.uuidString.lowercased() ?? "CUSTOMER_ID"
        let locked = setup.lockedCustomer?.uuidString.lowercased() ?? "CUSTOMER_ID"
        func shown(_ token: String?) -> String { token ?? "(none: see below)" }
        var lines = [
            "",
            "HealthTrack back office is running at \(c.url)  (Ctrl-C stops it and PostgreSQL)",
            "PostgreSQL data: \(clusterData)",
            "Mail (invitations, lockout notices, shop decisions, notifications): \(mail)",
            "",
            "Tokens (also in \(credentialsFile)):",
            "  platform_admin   \(shown(c.tokens.platformAdmin))",
            "  backend_manager  \(shown(c.tokens.backendManager))",
            "  auditor          \(shown(c.tokens.auditor))",
            "  app_service      \(shown(c.tokens.appService))",
            "  expert           \(shown(c.tokens.expert))",
            "  moderator        \(shown(c.tokens.moderator))",
        ]
        for partner in c.partners {
            lines.append("  \(partner.slug) partner_admin  \(shown(partner.partnerAdmin))")
            lines.append("  \(partner.slug) partner_staff  \(shown(partner.partnerStaff))")
        }
        lines += appClientLines(c.appClient)
        lines += ["", "Console: \(c.url)/console/  sign in as (passwords also in \(credentialsFile)):"]
        for (email, password) in (c.signIns ?? [:]).sorted(by: { $0.key < $1.key }) {
            let code = c.secondFactors?[email].map { "  code: \(me) totp \($0)" } ?? ""
            lines.append("  \(email.padding(toLength: 30, withPad: " ", startingAt: 0)) \(password)\(code)")
        }
        if !setup.skipped.isEmpty {
            lines +=
                ["", "Not issued (backoffice dev --reset starts from fresh demo data):"]
                + setup.skipped.map { "  \($0)" }
        }
        let manager = c.tokens.backendManager ?? "TOKEN"
        lines += [
            "",
            "Try, in another terminal in this folder:",
            "  export BACKOFFICE_URL=\(c.url)",
            "  export BACKOFFICE_TOKEN=\(manager)",
            "  \(me) accounts list --limit 5",
            "  \(me) accounts lock \(active) --reason \"Suspected account takeover\"",
            "  \(me) accounts history \(active)",
            "  \(me) accounts unlock \(active) --reason \"Identity confirmed by phone\"",
            "  \(me) accounts show \(locked)",
            "  \(me) accounts list --status locked",
            "  \(me) audit verify --token \(c.tokens.auditor ?? "TOKEN")",
            "  \(me) accounts lock \(active) --reason \"x\" --token \(c.partners.first?.partnerAdmin ?? "TOKEN")"
                + "   # 403, exit 4",
            "",
        ]
        say(lines.joined(separator: "\n"))
    }

    /// The app's backend's OAuth client and how it gets a token (none without one).
    private func appClientLines(_ app: DemoCredentials.Client?) -> [String] {
        guard let app else { return [] }
        return [
            "", "The app's backend, an OAuth client (client credentials; its tokens last 15 minutes):",
            "  client_id      \(app.clientID)", "  client_secret  \(app.clientSecret)",
            "  curl -s -u \(app.clientID):\(app.clientSecret) -d grant_type=client_credentials "
                + "\(setup.credentials.url)/oauth/token",
        ]
    }

    /// How to call this executable from the working directory.
    static var executable: String {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let cwd = FileManager.default.currentDirectoryPath
        if path.hasPrefix(cwd + "/") { return String(path.dropFirst(cwd.count + 1)) }
        return path
    }
}

/// Prints where `dev`'s mail was written, a line a message, at most 5 lines in 10 seconds: a burst
/// (the demo's orders each mail the shop a new order) is counted, and the next line says how many
/// more were written meanwhile.
final class MailAnnouncer: Sendable {
    private struct State {
        var shown: [ContinuousClock.Instant] = []
        var unshown = 0
    }
    private let state = Mutex(State())

    func written(_ path: String) {
        let now = ContinuousClock.now
        let line = state.withLock { state -> String? in
            state.shown.removeAll { now - $0 > .seconds(10) }
            guard state.shown.count < 5 else {
                state.unshown += 1
                return nil
            }
            state.shown.append(now)
            defer { state.unshown = 0 }
            return state.unshown == 0
                ? "mail written: \(path)" : "mail written: \(path) (and \(state.unshown) more in the same folder)"
        }
        if let line { say(line) }
    }
}
