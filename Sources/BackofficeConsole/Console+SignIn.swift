import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// Sign-in (email and password; a new session, so a new id, at every sign-in), sign-out, and
    /// sign-out everywhere.
    package func registerSignIn(on group: RouterGroup<AppRequestContext>) {
        group.get("sign-in") { request, context in
            let form = ConsoleForm(query: request.uri.query)
            let notice =
                form["welcome"] != nil
                ? "Your password is set. Sign in with it."
                : form["ended"] == nil ? nil : "Your session has ended. Sign in again to go on."
            return signInPage(email: "", next: form["next"], notice: notice, refused: false).response(
                secure: context.scope.secure)
        }
        group.post("sign-in") { request, context in
            try await publicAction(request, context) { form in
                let email = form.text("email") ?? ""
                let outcome = try await ConsoleSignIn(database: database, policies: policies, gate: signInGate).signIn(
                    email: email, password: form["password"] ?? "", scope: context.scope)
                guard case .started(let secret, _, let stage) = outcome else {
                    return signInPage(email: email, next: form["next"], notice: nil, refused: true)
                }
                let next = Self.safeNext(form["next"])
                let step =
                    switch stage {
                    case .signedIn: next
                    case .secondFactor: ConsoleLinks.path("/console/sign-in/code", ["next": next])
                    case .enrol: ConsoleLinks.path("/console/sign-in/enrol", ["next": next])
                    }
                return ConsoleAnswer.startSession(secret, to: step)
            }
        }
        for (path, everywhere) in [("sign-out", false), ("sign-out-everywhere", true)] {
            group.post(RouterPath(path)) { request, context in
                var response = try await signedIn(request, context) { console in
                    let ended = try await console.runOnOwnSession(EndConsoleSessions(everywhere: everywhere))
                    return .redirect(
                        to: "/console/sign-in", flash: everywhere ? "Signed out of \(ended) sessions." : "Signed out.")
                }
                if response.status == .seeOther {
                    response.setCookie(ConsoleCookies.endSession(secure: context.scope.secure))
                }
                return response
            }
        }
    }

    /// Where to go after sign-in: a console page named by `next`, else home. Never another site.
    package static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/console/"), !next.hasPrefix("/console/sign-"), !next.contains("\\") else {
            return "/console/home"
        }
        return next
    }

    package func signInPage(email: String, next: String?, notice: String?, refused: Bool) -> ConsoleAnswer {
        var values: [String: Any] = ["title": "Sign in", "email": email, "next": Self.safeNext(next)]
        if let notice { values["notice"] = notice }
        if refused {
            values["refused"] =
                """
                The email or password is wrong, or sign-in is paused for this account after too many failures. \
                Try again later.
                """
        }
        return .page(pages.render("sign-in", values, status: refused ? .unauthorized : .ok))
    }
}

extension SignInBusy {
    /// 503 with Retry-After: the password checks are full, nothing was checked or counted.
    package func response(_ pages: ConsolePages, secure: Bool) -> Response {
        let page = pages.error(
            status: .serviceUnavailable, title: "Sign-in is busy",
            detail: "Too many sign-ins are being checked right now; nothing was counted. Try again in a few seconds.",
            requestID: nil)
        var response = ConsoleAnswer.page(page).response(secure: secure)
        response.headers[.retryAfter] = String(retryAfterSeconds)
        return response
    }
}
