import BackofficePlatform
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Where and how the service sends mail over SMTP, from `BACKOFFICE_SMTP_URL`:
/// `smtp://USER:PASSWORD@HOST:PORT` (STARTTLS required before AUTH; port 587 by default) or
/// `smtps://…` (TLS from the first byte; port 465), with `?from=ADDRESS` (the sender, by default
/// `backoffice@HOST`) and `?ca=PATH` (a PEM file of the certificate authorities to trust instead
/// of the system's, for a private relay). A password is never sent over plain text: there is no
/// plain mode.
package struct SMTPSettings: Sendable, Equatable {
    package enum Security: Sendable, Equatable { case startTLS, implicitTLS }
    package var host: String
    package var port: Int
    package var security: Security
    package var username: String?
    package var password: String?
    package var from: String
    package var trustedCAFile: String?

    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses the URL; the error names what is wrong, never the password.
    package init(url text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host,
            !host.isEmpty
        else { throw Invalid(description: "BACKOFFICE_SMTP_URL must be smtp://USER:PASSWORD@HOST:PORT or smtps://…") }
        switch scheme {
        case "smtp": (security, port) = (.startTLS, components.port ?? 587)
        case "smtps": (security, port) = (.implicitTLS, components.port ?? 465)
        default:
            throw Invalid(
                description: "BACKOFFICE_SMTP_URL's scheme must be smtp (STARTTLS) or smtps (TLS), not \(scheme)")
        }
        self.host = host
        username = components.user?.removingPercentEncoding
        password = components.password?.removingPercentEncoding
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        from = query["from"] ?? "backoffice@\(host)"
        trustedCAFile = query["ca"]
        guard from.contains("@") else {
            throw Invalid(description: "BACKOFFICE_SMTP_URL's from= must be an email address")
        }
    }
}

/// A small SMTP client on SwiftNIO and NIOSSL (RFC 5321 with STARTTLS, RFC 3207, and AUTH
/// PLAIN, RFC 4954): one connection per message, TLS before any credential or message, every
/// reply checked. Errors say which step the server refused and its reply, never a credential.
package struct SMTPClient: Sendable {
    let settings: SMTPSettings
    /// How long one message may take, connection to QUIT.
    var timeout: Duration = .seconds(30)
    /// What the timeout runs on.
    let timers: any Timers

    package init(settings: SMTPSettings, timeout: Duration = .seconds(30), timers: any Timers = EventLoopTimers()) {
        self.settings = settings
        self.timeout = timeout
        self.timers = timers
    }

    /// A refusal or failure while sending: the step and what the server said (or the error).
    package struct Failure: Error, CustomStringConvertible {
        package let step: String
        package let reply: String
        /// A 5xx reply: the server refuses this message for good (retrying will not help).
        package let permanent: Bool
        package var description: String { "SMTP \(step): \(reply)" }
    }

    /// Sends `message` to its recipient; returns once the server has accepted it (250 after DATA).
    package func send(_ message: MailMessage) async throws {
        let data = try message.rendered()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.converse(message: message, data: data) }
            group.addTask {
                try await timers.sleep(for: timeout)
                throw Failure(step: "timeout", reply: "no answer within \(timeout)", permanent: false)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func tlsHandler() throws -> NIOSSLClientHandler {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let file = settings.trustedCAFile { configuration.trustRoots = .file(file) }
        let context = try NIOSSLContext(configuration: configuration)
        let name = CIDR.bytes(of: settings.host) == nil ? settings.host : nil
        return try NIOSSLClientHandler(context: context, serverHostname: name)
    }

    private func converse(message: MailMessage, data: String) async throws {
        let implicit = settings.security == .implicitTLS
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: settings.host, port: settings.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicit { try channel.pipeline.syncOperations.addHandler(try self.tlsHandler()) }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var replies = SMTPReplies(inbound.makeAsyncIterator())
            func command(_ line: String, _ step: String, expect codes: Set<Int>, shown: String? = nil) async throws
                -> SMTPReplies.Reply
            {
                try await outbound.write(ByteBuffer(string: line + "\r\n"))
                return try await replies.expect(codes, step: shown ?? step)
            }
            _ = try await replies.expect([220], step: "greeting")
            var hello = try await command("EHLO backoffice.local", "EHLO", expect: [250])
            if !implicit {
                guard hello.lines.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                    throw Failure(
                        step: "STARTTLS", reply: "the server does not offer STARTTLS; mail is never sent in plain text",
                        permanent: true)
                }
                _ = try await command("STARTTLS", "STARTTLS", expect: [220])
                let connection = channel.channel
                try await connection.eventLoop.submit {
                    try connection.pipeline.syncOperations.addHandler(try self.tlsHandler(), position: .first)
                }.get()
                hello = try await command("EHLO backoffice.local", "EHLO after STARTTLS", expect: [250])
            }
            if let username = settings.username {
                let token = Data("\0\(username)\0\(settings.password ?? "")".utf8).base64EncodedString()
                _ = try await command("AUTH PLAIN \(token)", "AUTH", expect: [235], shown: "AUTH PLAIN")
            }
            _ = try await command("MAIL FROM:<\(message.from)>", "MAIL FROM", expect: [250])
            _ = try await command("RCPT TO:<\(message.to)>", "RCPT TO", expect: [250, 251])
            _ = try await command("DATA", "DATA", expect: [354])
            // Dot-stuffing (RFC 5321 §4.5.2): a line that starts with "." gets another.
            let stuffed = data.components(separatedBy: "\r\n").map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(
                separator: "\r\n")
            try await outbound.write(ByteBuffer(string: stuffed + (stuffed.hasSuffix("\r\n") ? "" : "\r\n") + ".\r\n"))
            _ = try await replies.expect([250], step: "end of DATA")
            try? await outbound.write(ByteBuffer(string: "QUIT\r\n"))
        }
    }
}

/// The server's replies, read line by line from the connection: a reply is one or more lines
/// `CODE-text` ending with `CODE text`.
struct SMTPReplies {
    struct Reply { let code: Int, lines: [String] }
    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private var buffer: [UInt8] = []

    init(_ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) { self.iterator = iterator }

    /// The next reply; throws `SMTPClient.Failure` naming `step` when its code is not in `codes`.
    mutating func expect(_ codes: Set<Int>, step: String) async throws -> Reply {
        var lines: [String] = []
        while true {
            let line = try await nextLine(step: step)
            guard line.count >= 3, let code = Int(line.prefix(3)) else {
                throw SMTPClient.Failure(step: step, reply: "not an SMTP reply: \(line.prefix(200))", permanent: false)
            }
            lines.append(String(line.dropFirst(4)))
            if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " {
                guard codes.contains(code) else {
                    throw SMTPClient.Failure(
                        step: step, reply: "\(code) \(lines.joined(separator: " / "))",
                        permanent: (500..<600).contains(code))
                }
                return Reply(code: code, lines: lines)
            }
        }
    }

    private mutating func nextLine(step: String) async throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(
                    in: CharacterSet(charactersIn: "\r"))
                buffer.removeSubrange(...end)
                return line
            }
            guard let chunk = try await iterator.next() else {
                throw SMTPClient.Failure(step: step, reply: "the server closed the connection", permanent: false)
            }
            buffer.append(contentsOf: chunk.readableBytesView)
            guard buffer.count < 64 << 10 else {
                throw SMTPClient.Failure(step: step, reply: "a reply line too long", permanent: false)
            }
        }
    }
}
