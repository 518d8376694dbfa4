import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The second factor: the code step of sign-in, enrolment (at sign-in for roles that need it,
    /// or from the Security page), and the Security page itself.
    package func registerSecondFactor(on group: RouterGroup<AppRequestContext>) {
        get("sign-in/code", on: group, stage: .secondFactor) { console in
            console.page("second-factor", title: "Enter your code", ["next": Self.safeNext(console.form["next"])])
        }
        group.post("sign-in/code") { request, context in
            try await signedIn(request, context, holdsTransaction: false, stage: .secondFactor) {
                try await passSecondFactor($0)
            }
        }
        for (path, stage) in [("sign-in/enrol", ConsoleStage.enrol), ("security/second-factor", .signedIn)] {
            get(path, on: group, stage: stage) { console in
                try await enrolmentPage(console, secret: TOTPSecret.generate(), action: "/console/\(path)")
            }
            post(path, on: group, holdsTransaction: false, stage: stage) { console in
                try await enrol(console, action: "/console/\(path)")
            }
        }
        get("security", on: group) { console in try await securityPage(console) }
    }

    /// Checks the code (or a recovery code) of the sign-in's second-factor step, reserved first as
    /// an attempt of the operator's email (`ReserveSignInAttempt`: at most the policy's codes are
    /// checked within a window, however many arrive at once). Right: a new, signed-in session (new
    /// secret), the email's attempts cleared. Wrong: audited as a failed sign-in; the failure that
    /// reaches the lockout, or any code while locked out, ends the step.
    private func passSecondFactor(_ console: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let key = secondFactorKey else { throw Self.noKey }
        let state = try await console.readOwn(SecondFactorState())
        guard let sealed = state.sealedSecret, let operatorID = console.principal.operatorID else { return .signIn }
        let keys = signInGate.keys(email: state.email, sourceIP: console.context.sourceIP)
        let system = console.context.acting(as: .anonymous, sourceIP: console.context.sourceIP)
        let next = Self.safeNext(console.form["next"])
        guard
            let (ticket, attempt) = try await signInGate.reserve(
                keys, database: database, context: system, policy: policies.console)
        else {
            _ = try await database.runAsSystem(
                RecordFailedSignIn(
                    keys: keys, attempt: nil, target: console.principal, reason: "locked_out",
                    ending: console.principal.sessionID),
                context: system)
            return signInPage(email: state.email, next: next, notice: nil, refused: true)
        }
        let typed = console.form.text("code") ?? ""
        let proof: SecondFactorProof? =
            RecoveryCodes.looksLikeCode(typed)
            ? .recoveryCode(hash: RecoveryCodes.hash(typed, operatorID: operatorID))
            : try key.open(sealed, for: operatorID).matchingStep(typed, now: console.now).map {
                .code(step: $0)
            }
        if let proof {
            let secret = SessionSecret.generate()
            do {
                try await console.runOnOwnSession(
                    PassSecondFactor(proof: proof, newSessionID: database.ids.next(), secretHash: secret.hash))
                try await database.runAsSystem(ReleaseSignInAttempts.clearing(keys), context: system)
                signInGate.finish(ticket, .succeeded)
                return .startSession(secret, to: next)
            } catch DomainError.invalid {
                // A code already used, or a recovery code used before: a wrong code.
            }
        }
        signInGate.finish(ticket, .failed)
        let lockout = try await database.runAsSystem(
            RecordFailedSignIn(
                keys: keys, attempt: attempt, target: console.principal, reason: "wrong_code",
                endingIfLocked: console.principal.sessionID),
            context: system)
        if lockout.email != nil || lockout.address != nil {
            signInGate.remember(lockout, for: keys)
            return signInPage(email: state.email, next: next, notice: nil, refused: true)
        }
        var values: [String: Any] = ["next": next]
        FormRefusal(try FormRefusal.issues(PassSecondFactor.wrongCode)).add(to: &values)
        return console.page("second-factor", title: "Enter your code", status: .unprocessableContent, values)
    }

    /// The enrolment page: the secret as a QR code and as text, and the field for the first code.
    /// The secret travels in the form sealed for the operator, so nothing is stored until a code
    /// confirms it.
    private func enrolmentPage(
        _ console: ConsoleRequest, secret: TOTPSecret, action: String, refusal: FormRefusal? = nil
    ) async throws -> ConsoleAnswer {
        guard let key = secondFactorKey else { throw Self.noKey }
        guard let operatorID = console.principal.operatorID else { return .signIn }
        let state = try await console.readOwn(SecondFactorState())
        if state.sealedSecret != nil, console.stage == .signedIn {
            return .redirect(to: "/console/security", flash: "You already have a second factor.")
        }
        let uri = secret.uri(account: state.email)
        var values: [String: Any] = [
            "action": action, "uri": uri, "next": Self.safeNext(console.form["next"]),
            "qr": "data:image/svg+xml;base64," + Data(try QRCode(uri).svg(label: "QR code").utf8).base64EncodedString(),
            "secret": stride(from: 0, to: secret.base32.count, by: 4).map { start in
                String(secret.base32.dropFirst(start).prefix(4))
            }.joined(separator: " "),
            "sealed": Base64URL.encode(Data(try key.seal(secret, for: operatorID))),
        ]
        if console.stage == .enrol { values["signingIn"] = true }
        refusal?.add(to: &values)
        return console.page(
            "second-factor-enrol", title: "Set up a second factor",
            status: refusal == nil ? .ok : .unprocessableContent, values)
    }

    /// Confirms enrolment with a code of the sealed secret the page carried: stores it sealed with
    /// ten recovery codes, shown once on the page this answers. In the sign-in's enrolment step
    /// the session then becomes signed in, with a new secret.
    private func enrol(_ console: ConsoleRequest, action: String) async throws -> ConsoleAnswer {
        guard let key = secondFactorKey else { throw Self.noKey }
        guard let operatorID = console.principal.operatorID else { return .signIn }
        guard let sealed = Base64URL.decode(console.form["sealed"] ?? ""),
            let secret = try? key.open(Array(sealed), for: operatorID)
        else {
            // Not the secret this operator's page was given: a tampered or foreign form.
            return .page(
                pages.error(
                    status: .forbidden, title: "This form has expired", detail: ConsoleRefusal.forgery.detail,
                    requestID: nil))
        }
        guard let step = secret.matchingStep(console.form.text("code") ?? "", now: console.now) else {
            return try await enrolmentPage(
                console, secret: secret, action: action,
                refusal: FormRefusal([
                    FieldIssue(
                        field: "code", code: "wrong_code",
                        message: "is not the current code: check the app shows HealthTrack Back Office")
                ]))
        }
        let codes = RecoveryCodes.generate()
        let session = console.stage == .enrol ? (id: database.ids.next(), secret: SessionSecret.generate()) : nil
        try await console.runOnOwnSession(
            EnrolSecondFactor(
                operatorID: operatorID, sealedSecret: try key.seal(secret, for: operatorID), confirmedStep: step,
                recoveryCodeHashes: codes.map { RecoveryCodes.hash($0, operatorID: operatorID) },
                promoting: session.map { ($0.id, $0.secret.hash) }))
        var values: [String: Any] = [
            "codes": codes, "next": console.stage == .enrol ? Self.safeNext(console.form["next"]) : "/console/security",
        ]
        if session != nil { values["signingIn"] = true }
        guard case .page(var page) = console.page("recovery-codes", title: "Your recovery codes", values) else {
            return .signIn
        }
        if let session {
            page.cookies.append(ConsoleCookies.session(session.secret, secure: console.secure))
        }
        return .page(page)
    }

    package static let noKey = DomainError.inconsistent(
        "the service has no second-factor key (BACKOFFICE_SECOND_FACTOR_KEY)")
}
