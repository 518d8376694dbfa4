import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=…` URL.
package struct DatabaseURL: Sendable, CustomStringConvertible {
    package let host: String
    package let port: Int
    package let user: String
    package let password: String?
    package let database: String
    package let sslMode: String

    package init(_ text: String) throws {
        guard let components = URLComponents(string: text),
            ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, !host.isEmpty
        else {
            throw Problem.malformed("not a postgres:// URL: \(DatabaseURL.redact(text))")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.user = components.user?.removingPercentEncoding ?? "postgres"
        self.password = components.password?.removingPercentEncoding
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? self.user : path
        self.sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
    }

    /// The URL with its password: to hand to a child process or a file that is private anyway;
    /// never for printing or logging (use `description`).
    package var connectionString: String {
        let secret =
            password.map { ":" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        let userText = user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user
        return "postgres://\(userText)\(secret)@\(host):\(port)/\(database)?sslmode=\(sslMode)"
    }

    /// The URL without its password.
    package var description: String { "postgres://\(user)@\(host):\(port)/\(database)?sslmode=\(sslMode)" }

    /// `text` with the password of its authority (`scheme://user:PASSWORD@host…`) replaced by
    /// `***`; safe to print whatever the password holds (`:`, `/`, `?`, `@` …): everything from
    /// the user's `:` to the last `@` goes.
    package static func redact(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text.contains("@") ? "***" : text }
        let rest = text[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }

    package var tls: PostgresClient.Configuration.TLS {
        switch sslMode {
        case "disable": .disable
        case "require", "verify-ca", "verify-full": .require(.makeClientConfiguration())
        default: .prefer(.makeClientConfiguration())
        }
    }

    /// A pool configuration for this URL within `limits` (connections, connect timeout, and the
    /// statement timeout every session starts with).
    package func clientConfiguration(_ limits: PoolLimits = PoolLimits()) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = limits.maximumConnections
        configuration.options.connectTimeout = limits.connectTimeout
        configuration.options.additionalStartupParameters = [
            ("application_name", "backoffice"),
            ("statement_timeout", String(PoolLimits.milliseconds(limits.statementTimeout))),
        ]
        return configuration
    }

    /// Runs `body` on one connection (for migrations and other one-off administration), then closes it.
    package func withConnection<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T)
        async throws -> T
    {
        let connectionTLS: PostgresConnection.Configuration.TLS =
            switch sslMode {
            case "disable": .disable
            case "require", "verify-ca", "verify-full":
                .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            default: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: connectionTLS)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw DatabaseUnavailable(url: description, underlying: String(reflecting: error))
        }
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// The database could not be reached.
package struct DatabaseUnavailable: Error, CustomStringConvertible {
    package let url: String
    package let underlying: String
    package var description: String { "cannot connect to \(url): \(underlying)" }
}
