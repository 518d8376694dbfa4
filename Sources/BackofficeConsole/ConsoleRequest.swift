import BackofficePlatform
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A signed-in console request: what a page handler gets. It reads and changes only through the
/// runners (`read`, `run`), in the request's session or transaction, as the session's operator.
package struct ConsoleRequest: Sendable {
    package let request: Request
    package let form: ConsoleForm
    /// The request's scope, acting for the session's operator.
    package let scope: RequestScope
    package let context: OperationContext
    package let secret: SessionSecret
    /// The message the previous action left for this page (POST-redirect-GET).
    package let flash: String?
    package let database: Database
    package let pages: ConsolePages
    package let navigation: ConsoleNavigation
    /// The time the page shows states at: the request's one reading of the clock.
    package var now: Date { scope.now }
    /// Whether the console is served over TLS (a trusted proxy says so).
    package var secure: Bool { scope.secure }
    /// The session's stage: signed in, or a step of sign-in (whose pages show no navigation).
    package var stage: ConsoleStage = .signedIn
    /// The path's parameters (`{id}`, `{slug}`).
    package var parameters = Parameters()

    /// The path's `{id}`; anything but a UUID is a page that does not exist.
    package func routeID() throws -> UUID { try Console.id(parameters) }

    package var principal: Principal { context.principal }

    /// `body`'s answer for this request, run as the request its scope describes (acting for the
    /// operator): times are shown and read in the operator's own zone (`ConsoleTime.zone`).
    package func serving<T>(_ body: (ConsoleRequest) async throws -> T) async throws -> T {
        try await scope.serving { try await body(self) }
    }

    /// Runs `query` as the operator (the policy checked by the runner, as for the API).
    package func read<Q: Query>(_ query: Q) async throws -> Q.Output {
        try await database.read(query, context: context)
    }

    /// Runs `operation` as the operator in this request's transaction, with its audit event
    /// (which records the session: `via: console`). A refusal undoes only the operation's own
    /// work (a savepoint), so the handler can still read to show the form again.
    package func run<Operation: AuditedChange>(_ operation: Operation) async throws -> Operation.Output {
        try await database.savepoint(context) { try await database.run(operation, context: context) }
    }

    /// Runs a change that calls another system (the payment provider) as the operator: its steps
    /// each in a transaction of their own, none held while the other system answers. Only in a
    /// request that holds no transaction (`Console.signedIn(…, holdsTransaction: false)`).
    package func runStaged<Operation: StagedOperation>(_ operation: Operation) async throws -> Operation.Output {
        guard context.transaction == nil else {
            throw DomainError.inconsistent("a staged operation runs in a console request that holds no transaction")
        }
        return try await database.runStaged(operation, context: context)
    }

    /// Reads the operator's own sign-in state (its second factor): every operator may, so no role
    /// is granted it.
    package func readOwn<Q: Query>(_ query: Q) async throws -> Q.Output {
        try await database.readAsSystem(query, context: context)
    }

    /// Runs one of the operator's own session operations (signing out, passing or setting up a
    /// second factor): every operator may, so no role is granted them; audited as the operator,
    /// with the session.
    package func runOnOwnSession<Operation: AuditedOperation>(_ operation: Operation) async throws -> Operation.Output {
        try await database.runAsSystem(operation, context: context)
    }

    /// The page `template` in the console's layout, with the navigation for the operator's role.
    package func page(_ template: String, title: String, status: HTTPResponse.Status = .ok, _ data: [String: Any] = [:])
        -> ConsoleAnswer
    {
        var values = data
        values["title"] = title
        values["csrf"] = secret.csrfToken
        if stage == .signedIn {
            values["signedIn"] = true
            values["zone"] = OperatorTimeZone.name(of: principal.timeZone)
            values["who"] = principal.role.replacingOccurrences(of: "_", with: " ")
            values["navHTML"] = ConsoleNavigation.links(
                navigation.items(for: principal.role, policies: context.policies, current: request.uri.path))
        }
        if let flash { values["flash"] = flash }
        return .page(pages.render(template, values, status: status, clearsFlash: flash != nil))
    }

    /// The error page for what a handler threw, in the layout with the operator's navigation.
    package func failure(_ error: any Error, logger: Logger) -> ConsoleAnswer {
        let (status, title, detail, requestID) = ConsolePages.describe(
            error, requestID: context.requestID, logger: logger)
        return page(
            "error", title: title, status: status,
            ConsolePages.errorValues(title: title, detail: detail, requestID: requestID))
    }

    /// To `path`, with a message for the page there.
    package func redirect(_ path: String, flash: String? = nil) -> ConsoleAnswer { .redirect(to: path, flash: flash) }

    /// A form's submission: `action`'s answer; or, when the change is refused (a `DomainError`
    /// that `reading` turns into issues by field: `FormRefusal.issues` unless the form says more),
    /// `refused`'s answer with those issues: the form again, the operator's values kept. Not found,
    /// not allowed and server errors are rethrown by the reading, for their error page.
    package func submit(
        reading issues: (DomainError) throws -> [FieldIssue] = { try FormRefusal.issues($0) },
        _ action: () async throws -> ConsoleAnswer, refused: ([FieldIssue]) async throws -> ConsoleAnswer
    ) async throws -> ConsoleAnswer {
        do {
            return try await action()
        } catch let refusal as DomainError {
            return try await refused(try issues(refusal))
        }
    }
}

/// What a console handler answers.
package enum ConsoleAnswer: Sendable {
    case page(RenderedPage)
    /// POST-redirect-GET: to a console path, with a flash message for the page there.
    case redirect(to: String, flash: String?)
    /// The session is gone: to sign-in, and back after it.
    case signIn
    /// A new session (sign-in, or a sign-in step passed): its cookie, and to a console path.
    case startSession(SessionSecret, to: String)
    /// A file to save (an export), sent as it is read.
    case download(name: String, contentType: String, body: ResponseBody)

    /// A file to save made of `pages` (an export's `ExportPages`), each sent as it is read.
    package static func download<Pages: AsyncSequence & Sendable>(name: String, contentType: String, pages: Pages)
        -> ConsoleAnswer
    where Pages.Element == ArraySlice<UInt8> {
        .download(
            name: name, contentType: contentType,
            body: ResponseBody { writer in
                for try await page in pages { try await writer.write(ByteBuffer(bytes: page)) }
                try await writer.finish(nil)
            })
    }

    package func response(secure: Bool) -> Response {
        var response: Response
        switch self {
        case .page(let page):
            response = Response(
                status: page.status, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: page.html)))
            if page.clearsFlash {
                response.setCookie(
                    Cookie(
                        name: ConsoleCookies.flash, value: "", maxAge: 0, path: "/console", secure: secure,
                        sameSite: .strict))
            }
            for cookie in page.cookies { response.setCookie(cookie) }
        case .redirect(let path, let flash):
            response = Response.redirect(to: path.hasPrefix("/console/") ? path : "/console/home", type: .found)
            response.status = .seeOther
            if let flash { response.setCookie(ConsoleCookies.flash(flash, secure: secure)) }
        case .signIn:
            response = Response.redirect(to: "/console/sign-in", type: .normal)
        case .download(let name, let contentType, let body):
            response = Response(
                status: .ok,
                headers: [.contentType: contentType, .contentDisposition: "attachment; filename=\"\(name)\""],
                body: body)
        case .startSession(let secret, let path):
            response = Response.redirect(to: path.hasPrefix("/console/") ? path : "/console/home", type: .found)
            response.status = .seeOther
            response.setCookie(ConsoleCookies.session(secret, secure: secure))
        }
        ConsoleHeaders.apply(to: &response)
        return response
    }
}

/// A page's HTML, its status, and the cookies it sets.
package struct RenderedPage: Sendable {
    package var status: HTTPResponse.Status
    package var html: String
    package var clearsFlash = false
    package var cookies: [Cookie] = []
}

/// The fields of a form post (`application/x-www-form-urlencoded`, or `multipart/form-data` with
/// files) or of a page's query string; a field sent twice keeps its last value.
package struct ConsoleForm: Sendable {
    private var fields: [String: String] = [:]
    /// The files of a multipart post, by field name.
    package private(set) var files: [String: ConsoleUpload] = [:]

    /// The longest form body read (bigger is 413 at the edge already; this bounds a form).
    package static let limit = 256 * 1024
    /// The longest multipart body read (the edge's bulk limit applies first, to live sessions only).
    package static let uploadLimit = 32 << 20

    package init(query: String?) { fields = Self.parse(query ?? "") }

    package init(_ request: Request) async throws {
        let type = request.headers[.contentType] ?? ""
        if let boundary = ConsoleUpload.boundary(contentType: type) {
            let body = try await request.body.collect(upTo: Self.uploadLimit)
            for part in try ConsoleUpload.parts(body, boundary: boundary) {
                guard let name = part.name else { continue }
                if let fileName = part.fileName {
                    files[name] = ConsoleUpload(fileName: fileName, bytes: part.bytes)
                } else {
                    fields[name] = String(decoding: part.bytes, as: UTF8.self)
                }
            }
            return
        }
        let body = try await request.body.collect(upTo: Self.limit)
        fields = Self.parse(String(buffer: body))
    }

    package subscript(_ name: String) -> String? { fields[name] }

    /// The field's value trimmed, nil when absent or blank.
    package func text(_ name: String) -> String? {
        guard let value = fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
            return nil
        }
        return value
    }

    /// Refuses (422, `confirm_<move>` next to its checkbox) a destructive move whose form was sent
    /// without its confirmation ticked (`confirm=yes`, or `confirm_<move>=yes` on a page with more
    /// than one such form, whose boxes need names of their own).
    package func confirm(_ move: String) throws {
        guard fields["confirm"] == "yes" || fields["confirm_\(move)"] == "yes" else {
            throw DomainError.invalid([
                FieldIssue(field: "confirm_\(move)", code: "unconfirmed", message: "tick the box to confirm")
            ])
        }
    }

    /// The sent values, to fill a form again after a refusal.
    package var values: [String: String] { fields.filter { $0.key != "_csrf" } }

    private static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // A browser sends a textarea's line ends as CRLF; the service keeps text with LF.
            func decode(_ part: Substring) -> String? {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding?
                    .replacingOccurrences(of: "\r\n", with: "\n")
            }
            guard let name = decode(parts[0]) else { continue }
            fields[name] = parts.count > 1 ? decode(parts[1]) ?? "" : ""
        }
        return fields
    }
}
