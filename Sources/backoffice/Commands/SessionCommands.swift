import ArgumentParser
import Backoffice
import BackofficeAPI
import BackofficeConsole
import BackofficePlatform
import Foundation

let sessionColumns = ["email", "role", "tenant_id", "operator_id", "token_id", "token_name", "expires_at"]

/// `backoffice login`: checks a token against the service and saves it with the URL as a profile.
struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Save a service URL and token as a profile (private file), so commands need no exported token.",
        discussion: """
            The token is read from standard input (so it stays out of the shell history) unless --token \
            is given; it is checked with the service before it is saved. The profile becomes the current \
            one; choose another per command with --profile or BACKOFFICE_PROFILE.
            Example: backoffice login --url https://backoffice.example --profile prod < token.txt
            """)
    @OptionGroup(title: "Global Options") var global: GlobalOptions

    func run() async throws {
        try await runCommand {
            var options = global
            let token: String
            if let given = global.token {
                token = given
            } else {
                if isatty(STDIN_FILENO) == 1 { FileHandle.standardError.write(Data("token: ".utf8)) }
                guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty
                else {
                    throw CLIFailure.usage("no token on standard input (or pass --token)")
                }
                token = line
            }
            options.token = token
            let session = try await WhoAmI.fetch(options)
            var profiles = Profiles.load()
            let name = global.profile ?? ProcessInfo.processInfo.environment["BACKOFFICE_PROFILE"] ?? "default"
            profiles.profiles[name] = .init(url: options.serviceURL, token: token)
            profiles.current = name
            try profiles.save()
            print(
                """
                logged in to \(options.serviceURL) as \(session.email) (\(session.role.rawValue)); profile \
                '\(name)' saved in \(Profiles.file.path)
                """
            )
        }
    }
}

/// `backoffice logout`: forgets a saved profile (the token itself stays valid: revoke it with `tokens revoke`).
struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forget a saved profile (the token stays valid until revoked).",
        discussion: "Example: backoffice logout --profile prod")
    @Option(help: "The profile to forget (default: the current one).") var profile: String?

    func run() async throws {
        try await runCommand {
            var profiles = Profiles.load()
            guard let name = profile ?? profiles.current, profiles.profiles.removeValue(forKey: name) != nil else {
                throw CLIFailure(message: "error: no such profile", exitCode: 3)
            }
            if profiles.current == name { profiles.current = profiles.profiles.keys.sorted().first }
            try profiles.save()
            print("forgot profile '\(name)'")
        }
    }
}

/// `backoffice whoami`: who the token in use authenticates as.
struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami", abstract: "Show who the token in use authenticates as, and until when.",
        discussion: "Example: backoffice whoami")
    @OptionGroup(title: "Global Options") var global: GlobalOptions

    func run() async throws {
        try await runCommand {
            try Printer(format: global.format).single(try await Self.fetch(global), columns: sessionColumns)
        }
    }

    static func fetch(_ options: GlobalOptions) async throws -> Components.Schemas.Session {
        return try answered(try await options.client().whoAmI()).ok.body.json
    }
}

/// `backoffice totp SECRET`: the current code of a TOTP secret, as an authenticator app shows it.
struct TOTPCode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "Print the current six-digit code of a TOTP secret (the console's second factor).",
        discussion: """
            SECRET is base32, as the console's enrolment page and `backoffice dev`'s banner show it (spaces \
            and case ignored). Prints the code and how many seconds it stays valid (on standard error). \
            Exit 64 (usage) when SECRET is not base32.
            Example: backoffice totp JBSW Y3DP EHPK 3PXP
            """)
    @Argument(help: "The TOTP secret, base32.") var secret: [String]

    func run() throws {
        guard let totp = TOTPSecret(base32: secret.joined()) else {
            throw ValidationError("'\(secret.joined(separator: " "))' is not a base32 TOTP secret")
        }
        let now = Date()
        print(totp.code(at: now))
        let left = 30 - Int(now.timeIntervalSince1970) % 30
        FileHandle.standardError.write(Data("valid for \(left) more seconds\n".utf8))
    }
}
