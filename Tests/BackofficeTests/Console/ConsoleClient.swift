import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A browser's part in console tests: form posts, and the session cookie it keeps.
struct ConsoleClient: Sendable {
    let client: any TestClientProtocol
    var cookie: String?

    init(_ client: any TestClientProtocol, cookie: String? = nil) {
        self.client = client
        self.cookie = cookie
    }

    func get(_ path: String) async throws -> Reply { try await send(.get, path, body: nil) }

    /// Posts `fields` as a form; `csrf` nil sends none (the forgery the console refuses).
    func post(_ path: String, _ fields: [String: String], csrf: String?, headers: [String: String] = [:]) async throws
        -> Reply
    {
        var fields = fields
        if let csrf { fields["_csrf"] = csrf }
        return try await send(.post, path, body: Self.encode(fields), headers: headers)
    }

    /// Posts `fields` and one file as `multipart/form-data`, as a browser sends a form with a file input.
    func post(
        _ path: String, _ fields: [String: String], file: (field: String, name: String, bytes: String), csrf: String?
    ) async throws -> Reply {
        let boundary = "----console-test-\(UUID().uuidString)"
        var body = ""
        var all = fields
        if let csrf { all["_csrf"] = csrf }
        for (name, value) in all.sorted(by: { $0.key < $1.key }) {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.field)\"; filename=\"\(file.name)\"\r\n"
        body += "Content-Type: application/octet-stream\r\n\r\n\(file.bytes)\r\n--\(boundary)--\r\n"
        return try await send(
            .post, path, body: body, headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"])
    }

    func send(_ method: HTTPRequest.Method, _ path: String, body: String? = nil, headers extra: [String: String] = [:])
        async throws -> Reply
    {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        if body != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        return try await client.execute(
            uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            Reply(status: Int(response.status.code), headers: response.headers, text: String(buffer: response.body))
        }
    }

    /// Signs in with the form; the client keeps the session cookie the answer sets.
    mutating func signIn(_ email: String, _ password: String, next: String = "/console/home") async throws -> Reply {
        let reply = try await post("/console/sign-in", ["email": email, "password": password, "next": next], csrf: nil)
        keepSession(reply)
        return reply
    }

    static func encode(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }.map { key, value in
            """
            \(key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\
            \(value.addingPercentEncoding(withAllowedCharacters: allowed)!)
            """
        }.joined(separator: "&")
    }
}

extension Reply {
    /// Every `Set-Cookie` of the answer.
    var setCookies: [String] { headers[values: .setCookie] }

    /// The page's CSRF token (its first form's hidden `_csrf`).
    var csrf: String? {
        guard let range = text.range(of: "name=\"_csrf\" value=\"") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }

    var location: String? { headers[.location] }
}

extension String {
    /// The text after the last `marker`; nil when the text does not hold it (so a `#require` of
    /// a page's section fails when the section is missing).
    func after(last marker: String) -> String? {
        range(of: marker, options: .backwards).map { String(self[$0.upperBound...]) }
    }
}

extension TestEnvironment {
    /// Gives the operator a console password (bcrypt at the lowest cost, to keep tests quick)
    /// through the real operation; its email and the password.
    func consolePassword(for operatorID: UUID, password: String = "correct horse battery staple") async throws -> (
        email: String, password: String
    ) {
        let hash = try await PasswordRules.hash(password, cost: 4)
        _ = try await database.runAsSystem(
            SetOperatorPassword(operatorID: operatorID, passwordHash: hash),
            context: OperationContext.system("test", policies: policies))
        let email = try await ownerScalar("SELECT email FROM operators WHERE id = '\(operatorID)'", as: String.self)
        return (try #require(email), password)
    }

    /// The number of audit events with `action`.
    func auditCount(_ action: String) async throws -> Int64 {
        try await ownerScalar("SELECT count(*) FROM audit_events WHERE action = '\(action)'", as: Int64.self) ?? 0
    }
}

extension ConsoleClient {
    /// A client signed in as the operator, given a console password first (and, when its role
    /// signs in with a second factor, a second factor whose code it then types).
    static func signedIn(_ env: TestEnvironment, _ client: any TestClientProtocol, as operatorID: UUID?) async throws
        -> ConsoleClient
    {
        let operatorID = try #require(operatorID)
        let (email, password) = try await env.consolePassword(for: operatorID)
        let role = try #require(
            try await env.ownerScalar("SELECT role FROM operators WHERE id = '\(operatorID)'", as: String.self))
        let secret =
            env.policies.console.secondFactorRequired.contains(role)
            ? try await env.secondFactor(for: operatorID) : nil
        var browser = ConsoleClient(client)
        let reply = try await browser.signIn(email, password)
        #expect(reply.status == 303, "signed in as \(email)")
        if let secret {
            #expect(reply.location?.hasPrefix("/console/sign-in/code") == true, "a code is due")
            let passed = try await browser.passSecondFactor(secret.code(at: env.clock.now()))
            #expect(passed.status == 303, "the code passed")
        }
        return browser
    }

    /// Types `code` in the sign-in's code step; the client keeps the signed-in session's cookie.
    mutating func passSecondFactor(_ code: String, next: String = "/console/home") async throws -> Reply {
        let page = try await get("/console/sign-in/code")
        let reply = try await post("/console/sign-in/code", ["code": code, "next": next], csrf: page.csrf)
        keepSession(reply)
        return reply
    }

    /// Keeps the session cookie an answer sets.
    mutating func keepSession(_ reply: Reply) {
        if let session = reply.setCookies.first(where: { $0.hasPrefix("console_session=") }) {
            cookie = String(session.prefix { $0 != ";" })
        }
    }
}

extension TestEnvironment {
    /// Gives the operator a new second factor through the real operation (replacing any), sealed
    /// under the test service's key; its secret.
    func secondFactor(for operatorID: UUID) async throws -> TOTPSecret {
        let secret = TOTPSecret.generate()
        _ = try await database.runAsSystem(
            EnrolSecondFactor(
                operatorID: operatorID, sealedSecret: try Self.secondFactorKey.seal(secret, for: operatorID),
                confirmedStep: 0,
                recoveryCodeHashes: [], replacing: true),
            context: OperationContext.system("test", policies: policies))
        return secret
    }
}
