import BackofficePlatform
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The web console under `/console/`: server-rendered pages on the same use cases, runners,
/// policies and audit log as the API. A page authenticates its session cookie in the statement
/// that makes its connection act for the operator (`Database.consoleRequest`); a change runs in
/// one transaction with the use case's audit event, which records the session (`via: console`).
///
/// Guarantees, for every console response: the security headers (`ConsoleHeaders`); for every
/// POST: the session's CSRF token and a same-origin `Origin` (when sent), else 403 and nothing
/// runs; a page that needs a session without one redirects to sign-in and back after it; an
/// error is a page in the console's layout (403, 404, 409, 5xx with the request id), never JSON.
package struct Console: Sendable {
    package let database: Database
    package let policies: PolicySet
    package let pages: ConsolePages
    /// Seals operators' TOTP secrets at rest (nil: no second factor can be set up or checked).
    package let secondFactorKey: SecondFactorKey?
    /// What sign-in passes before any password work (lockouts in memory, the checks' queue).
    package let signInGate: SignInGate
    /// The sections the pages register.
    package let navigation = ConsoleNavigation()
    /// The mail topics the Security page offers the operator (the composition root's, which knows
    /// the domains' mails): each topic, what it is, and whether the operator gets it.
    package var mailChoices: @Sendable (ConsoleRequest) async throws -> [MailChoice] = { _ in [] }

    /// A console whose templates are the shell's and those in `templates` (each domain's
    /// `Pages/` folders, flattened into its bundle).
    package init(
        database: Database, policies: PolicySet, templates: [Bundle], secondFactorKey: SecondFactorKey?,
        signInGate: SignInGate? = nil
    ) throws {
        self.database = database
        self.policies = policies
        self.pages = try ConsolePages.loaded(templates)
        self.secondFactorKey = secondFactorKey
        self.signInGate = signInGate ?? SignInGate(secondFactorKey: secondFactorKey)
    }

    /// Registers every console route on `router`: the shell's (assets, sign-in, the second factor,
    /// the time zone) and what `sections` registers on the console's group (the domains' pages,
    /// in the navigation's order; the composition root's list).
    package func register(
        on router: Router<AppRequestContext>, sections: (RouterGroup<AppRequestContext>) -> Void
    ) {
        let group = router.group("console")
        group.get("/") { _, _ in Response.redirect(to: "/console/home", type: .normal) }
        group.get("assets/{file}") { request, context in
            try pages.asset(context.parameters.get("file") ?? "", request: request)
        }
        registerSignIn(on: group)
        registerSecondFactor(on: group)
        sections(group)
        registerTimeZone(on: group)
    }

    /// A page or action that needs a signed-in operator. Reads run in a read session, POSTs in
    /// one transaction (committed when `body` answers without throwing); both act for the
    /// session's operator. With `holdsTransaction: false` (a change that calls another system)
    /// the session is authenticated and its connection returned before `body` runs, each of its
    /// steps then taking a transaction of its own. Without a live session a GET redirects to
    /// sign-in (and back after), a POST too (its form is lost: sessions end only after 30 idle
    /// minutes or on sign-out). `stage` is the session's stage the page needs: signed in for every
    /// page but the steps of sign-in itself.
    package func signedIn(
        _ request: Request, _ context: AppRequestContext, holdsTransaction: Bool = true,
        stage: ConsoleStage = .signedIn,
        _ body: @escaping @Sendable (ConsoleRequest) async throws -> ConsoleAnswer
    ) async throws -> Response {
        let requestID = context.scope.requestID
        let change = request.method == .post
        var answer: ConsoleAnswer
        do {
            guard let secret = sessionSecret(request, context) else { return signInFirst(request) }
            if change { try checkForgery(request) }
            let form = change ? try await ConsoleForm(request) : ConsoleForm(query: request.uri.query)
            if change, !secret.accepts(csrfToken: form["_csrf"] ?? "") { throw ConsoleRefusal.forgery }
            let flash = request.cookies[ConsoleCookies.flash]?.value.removingPercentEncoding
            func console(_ principal: Principal, _ transaction: RequestTransaction?) -> ConsoleRequest {
                page(
                    request, context, acting: principal, transaction: transaction, secret: secret, form: form,
                    flash: flash, stage: stage)
            }
            if holdsTransaction {
                answer = try await database.consoleRequest(
                    session: secret.hash, policy: policies.console, change: change, stage: stage
                ) {
                    principal, transaction in
                    guard let principal else { return (.signIn, commit: false) }
                    let page = console(principal, transaction)
                    do {
                        return (try await page.serving(body), commit: true)
                    } catch {
                        return (page.failure(error, logger: context.logger), commit: false)
                    }
                }
            } else if let principal = try await database.consoleRequest(
                session: secret.hash, policy: policies.console, change: false, stage: stage,
                { principal, _ in (principal, commit: false) })
            {
                let page = console(principal, nil)
                do { answer = try await page.serving(body) } catch {
                    answer = page.failure(error, logger: context.logger)
                }
            } else {
                answer = .signIn
            }
        } catch {
            answer = .page(pages.error(error, requestID: requestID, logger: context.logger))
        }
        if case .signIn = answer { return signInFirst(request, ended: true) }
        return answer.response(secure: context.scope.secure)
    }

    /// The page request of a signed-in session: the request's scope made to act for the session's
    /// operator (`principal`) in `transaction`, and its operation context from that scope. The one
    /// place a console request is made (pages, actions, live streams).
    package func page(
        _ request: Request, _ context: AppRequestContext, acting principal: Principal,
        transaction: RequestTransaction?, secret: SessionSecret, form: ConsoleForm, flash: String? = nil,
        stage: ConsoleStage = .signedIn
    ) -> ConsoleRequest {
        let scope = context.scope.acting(for: principal, transaction: transaction)
        return ConsoleRequest(
            request: request, form: form, scope: scope,
            context: OperationContext(scope, acting: principal, transaction: transaction, policies: policies),
            secret: secret, flash: flash, database: database, pages: pages, navigation: navigation, stage: stage,
            parameters: context.parameters)
    }

    /// The session's secret from its cookie, when well-formed: over TLS only the `__Host-` cookie
    /// (which only this host can have set, over TLS), so a plain `console_session` cookie planted
    /// by a sibling domain or over plain HTTP is never read; over plain HTTP the plain one.
    package func sessionSecret(_ request: Request, _ context: AppRequestContext) -> SessionSecret? {
        guard let value = request.cookies[ConsoleCookies.session(secure: context.scope.secure)]?.value else {
            return nil
        }
        let secret = SessionSecret(value: value)
        return secret.isWellFormed ? secret : nil
    }

    /// A console form posted before anyone is signed in (sign-in, an invitation's password): the
    /// Origin checked, the form read, `body`'s answer; a full sign-in queue is 503 with
    /// Retry-After, any other failure the error page with the request id.
    package func publicAction(
        _ request: Request, _ context: AppRequestContext, _ body: (ConsoleForm) async throws -> ConsoleAnswer
    ) async throws -> Response {
        do {
            try checkForgery(request)
            return try await body(try await ConsoleForm(request)).response(secure: context.scope.secure)
        } catch let busy as SignInBusy {
            return busy.response(pages, secure: context.scope.secure)
        } catch {
            let page = pages.error(error, requestID: context.scope.requestID, logger: context.logger)
            return ConsoleAnswer.page(page).response(secure: context.scope.secure)
        }
    }

    /// The context of work done before anyone is signed in (a sign-in step's lockout, an
    /// invitation): the anonymous caller, with this request's id and source address.
    package func anonymousContext(_ scope: RequestScope) -> OperationContext {
        OperationContext(scope, acting: .anonymous, policies: policies)
    }

    /// Whether the request's session cookie names a live, signed-in session whose role may take
    /// `action`, the bulk upload's (checked before its body is read: anyone else's is read only up
    /// to the ordinary limit, so an auditor's 32 MiB upload is refused as too large, not read in full).
    package func sessionMayUpload(_ request: Request, _ context: AppRequestContext, action: Action) async throws
        -> Bool
    {
        guard let secret = sessionSecret(request, context) else { return false }
        return try await database.consoleRequest(session: secret.hash, policy: policies.console, change: false) {
            principal, _ in
            (principal.map { policies.access.allows($0.role, action) } ?? false, commit: false)
        }
    }

    /// Refuses a POST whose `Origin` names another site (browsers send it with every form post).
    package func checkForgery(_ request: Request) throws {
        guard let origin = request.headers[.origin] else { return }
        let host = request.head.authority ?? ""
        guard origin == "http://\(host)" || origin == "https://\(host)" else { throw ConsoleRefusal.forgery }
    }

    /// To sign-in, and back to this page after it (a GET's own address; a POST's referring page).
    package func signInFirst(_ request: Request, ended: Bool = false) -> Response {
        let back = request.method == .get ? request.uri.description : "/console/home"
        let next = back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        var response = Response.redirect(to: "/console/sign-in?next=\(next)\(ended ? "&ended=1" : "")", type: .normal)
        ConsoleHeaders.apply(to: &response)
        return response
    }
}

/// Why the console refused a request before running anything.
package enum ConsoleRefusal: Error {
    /// A POST without its session's CSRF token, or from another origin.
    case forgery

    package var detail: String {
        """
        The form was sent without this session's security token (or from another site), so nothing was changed. \
        Reload the page and try again.
        """
    }
}

extension HTTPField.Name {
    package static let origin = HTTPField.Name("Origin")!
    package static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    package static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    package static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    package static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
}

/// The headers on every console response: a Content-Security-Policy with no inline script or
/// style and no framing, `Referrer-Policy: same-origin`, `nosniff`, and no caching of pages.
package enum ConsoleHeaders {
    package static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action 'self'; "
        + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"

    package static func apply(to response: inout Response, cache: String = "no-store") {
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.referrerPolicy] = "same-origin"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.cacheControl] = cache
    }
}

/// The console's cookies: the session (`__Host-` prefixed and Secure over TLS), and a flash
/// message that lives for one redirect.
package enum ConsoleCookies {
    package static let flash = "console_flash"

    package static func session(secure: Bool) -> String { secure ? "__Host-console_session" : "console_session" }

    package static func session(_ secret: SessionSecret, secure: Bool) -> Cookie {
        Cookie(
            name: session(secure: secure), value: secret.value, path: "/", secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    package static func endSession(secure: Bool) -> Cookie {
        Cookie(
            name: session(secure: secure), value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true,
            sameSite: .strict)
    }

    package static func flash(_ message: String, secure: Bool) -> Cookie {
        Cookie(
            name: flash, value: message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "", maxAge: 60,
            path: "/console",
            secure: secure, httpOnly: true, sameSite: .strict)
    }
}
