import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// People and their access: the operators the role may see (a partner admin its own shop's,
    /// a platform admin everyone), inviting a new or an existing person (a one-time link shown
    /// once), disabling one (confirmed); API tokens (issue, shown once; revoke, confirmed); and the
    /// invitation link's page, where the invited person sets a password. `invitationLinks` makes
    /// the links.
    func registerPeople(on group: RouterGroup<AppRequestContext>, invitationLinks: InvitationLinks) {
        section("people", "People", needs: InviteOperator.action, on: group) { console in
            try await console.peoplePage(issues: [])
        }
        post("people/new", on: group) { console in
            return try await console.submit {
                guard let role = Role(rawValue: console.form["role"] ?? "") else {
                    throw DomainError.invalid([
                        FieldIssue(field: "role", code: "unknown_role", message: "choose a role")
                    ])
                }
                let tenant = console.form.text("tenant_id").flatMap(UUID.init(uuidString:))
                let grant = CreateOperator(
                    email: console.form["email"] ?? "", role: role, tenantID: tenant,
                    reason: console.form.text("reason"))
                guard case .done(let person) = try await console.runUnlessHeld(grant) else {
                    return console.redirect(
                        "/console/people",
                        flash: "Held for a second person's approval: once approved, invite them from this page.")
                }
                return try await console.invited(
                    try await console.run(InviteOperator(operatorID: person.id, links: invitationLinks)))
            } refused: { issues in
                try await console.peoplePage(issues: issues, values: console.form.values)
            }
        }
        post("people/{id}/invite", on: group) { console in
            let invite = InviteOperator(
                operatorID: try console.routeID(), links: invitationLinks, showLink: console.form["show_link"] == "yes")
            return try await console.invited(try await console.run(invite))
        }
        post("people/{id}/disable", on: group) { console in
            return try await console.submit {
                try console.form.confirm("disable")
                let person = try await console.run(
                    DisableOperator(
                        operatorID: try console.routeID(), reason: console.form.text("reason"), ifMatch: nil))
                return console.redirect(
                    "/console/people", flash: "\(person.email) is disabled: its sessions and tokens no longer work.")
            } refused: { issues in
                try await console.peoplePage(issues: issues, values: console.form.values)
            }
        }
        registerInvitation(on: group)
    }

    /// The invitation link's page: who is invited, and the new password (twice). Anyone with the
    /// link may open it; it works once, within 24 hours.
    private func registerInvitation(on group: RouterGroup<AppRequestContext>) {
        group.get("invitation") { request, context in
            let key = ConsoleForm(query: request.uri.query)["key"] ?? ""
            return try await invitationAnswer(key: key, issues: [], scope: context.scope).response(
                secure: context.scope.secure)
        }
        group.post("invitation") { request, context in
            try await publicAction(request, context) { form in
                do { return try await acceptInvitation(form, scope: context.scope) } catch DomainError.notFound {
                    return invitationGone()
                }
            }
        }
    }

    /// The invitation's password set: checked, the link still open, then accepted (the operator's
    /// password hashed in the sign-in queue of the address); a link not open is gone.
    private func acceptInvitation(_ form: ConsoleForm, scope: RequestScope) async throws -> ConsoleAnswer {
        let key = form["key"] ?? ""
        // A key that cannot be a link's is gone before any password work.
        guard SessionSecret(value: key).isWellFormed else { return invitationGone() }
        let password = form["password"] ?? ""
        var issues: [FieldIssue] = []
        do { try PasswordRules.check(password) } catch DomainError.invalid(let found) { issues = found }
        if issues.isEmpty, password != form["confirm_password"] {
            issues.append(FieldIssue(field: "confirm_password", code: "mismatch", message: "is not the same password"))
        }
        guard issues.isEmpty else { return try await invitationAnswer(key: key, issues: issues, scope: scope) }
        let system = anonymousContext(scope)
        // A link that is not open (unknown, used, expired) is gone before any password work.
        guard
            try await database.readAsSystem(
                OpenInvitation(secretHash: SessionSecret(value: key).hash), context: system) != nil
        else { return invitationGone() }
        _ = try await database.runAsSystem(
            AcceptInvitation(
                secretHash: SessionSecret(value: key).hash,
                passwordHash: try await signInGate.check(address: SignInGate.address(scope.sourceIP)) {
                    try await PasswordRules.hash(password)
                }),
            context: system)
        return ConsoleAnswer.redirect(to: "/console/sign-in?welcome=1", flash: nil)
    }

    private func invitationAnswer(key: String, issues: [FieldIssue], scope: RequestScope) async throws
        -> ConsoleAnswer
    {
        let system = anonymousContext(scope)
        guard SessionSecret(value: key).isWellFormed,
            let found = try await database.readAsSystem(
                OpenInvitation(secretHash: SessionSecret(value: key).hash), context: system)
        else { return invitationGone() }
        var values: [String: Any] = [
            "title": "Set your password", "email": found.email, "key": key,
            "role": found.role.rawValue.replacingOccurrences(of: "_", with: " "),
            "minimum": PasswordRules.minimumLength,
        ]
        FormRefusal(issues).add(to: &values)
        return .page(pages.render("invitation", values, status: issues.isEmpty ? .ok : .unprocessableContent))
    }

    private func invitationGone() -> ConsoleAnswer {
        .page(
            pages.error(
                status: .notFound, title: "This link no longer works",
                detail:
                    """
                    An invitation works once, for 24 hours, and a newer one replaces it. Ask whoever invited you \
                    for a new link.
                    """,
                requestID: nil))
    }
}

extension ConsoleRequest {
    /// The people the role may see, with the forms to invite and disable; `issues` in place (422).
    fileprivate func peoplePage(issues: [FieldIssue], values: [String: String] = [:]) async throws -> ConsoleAnswer {
        let platform = principal.knownRole?.isPlatform ?? false
        let tenant = platform ? form.text("tenant").flatMap(UUID.init(uuidString:)) : principal.tenantID
        let after = form.text("after").flatMap(UUID.init(uuidString:)) ?? ConsoleLinks.firstID
        let found = try await read(ListOperators(owner: tenant, afterID: after, limit: Console.pageSize + 1))
        let people = found.prefix(Console.pageSize)
        let roles: [Role] = platform ? Role.allCases.filter { $0 != .appService } : [.partnerStaff, .partnerAdmin]
        var data: [String: Any] = [
            "people": people.filter { $0.kind == "person" }.map { PersonView($0, me: principal.operatorID) },
            "values": values,
            "roles": ConsoleOption.all(roles.map(\.rawValue), selected: values["role"] ?? roles.first?.rawValue),
            "canDisable": may(DisableOperator.action), "canCreate": may(CreateOperator.action),
        ]
        if platform { data["platform"] = true }
        let pending = try await pendingApprovals(on: "people", "platform")
        (data["pending"], data["hasPending"]) = (pending, !pending.isEmpty)
        if found.count > Console.pageSize, let last = people.last {
            data["next"] = ConsoleLinks.path("/console/people", ["tenant": tenant?.text, "after": last.id.text])
        }
        FormRefusal(issues).add(to: &data)
        return page("people", title: "People", status: issues.isEmpty ? .ok : .unprocessableContent, data)
    }

    /// Where a new invitation went: back to People saying to whom it was emailed, or — a platform
    /// admin asked — its link, shown this once.
    fileprivate func invited(_ invitation: Invitation) async throws -> ConsoleAnswer {
        guard let path = invitation.path else {
            return redirect(
                "/console/people",
                flash: "A sign-in link is on its way to \(invitation.sentTo ?? "them") (it works for 24 hours).")
        }
        let origin = request.head.authority.map { "\(secure ? "https" : "http")://\($0)" } ?? ""
        return page(
            "invitation-link", title: "Invitation for \(invitation.email)",
            ["email": invitation.email, "link": origin + path, "expires": ConsoleTime.text(invitation.expiresAt)])
    }
}

/// A person as the people page shows it.
struct PersonView {
    let id: String, email: String, role: String, status: String, active: Bool, isMe: Bool

    init(_ person: Operator, me: UUID?) {
        id = person.id.text
        email = person.email
        role = person.role.rawValue.replacingOccurrences(of: "_", with: " ")
        status = person.status
        active = person.status == "active"
        isMe = person.id == me
    }
}
