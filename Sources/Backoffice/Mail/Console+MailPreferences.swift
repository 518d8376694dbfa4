import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// The Security page's mail choices: each topic the operator's role is offered, a checkbox.
    static let offeredMail: @Sendable (ConsoleRequest) async throws -> [MailChoice] = { console in
        guard console.may(ReadMailPreferences.action) else { return [] }
        return try await console.read(ReadMailPreferences()).map {
            (topic: $0.topic, description: $0.description, subscribed: $0.subscribed)
        }
    }

    /// The Security page's mail form, and the page an unsubscribe link opens, which works without
    /// signing in.
    func registerMailPreferences(on group: RouterGroup<AppRequestContext>, links: UnsubscribeLinks) {
        post("security/mail", on: group) { console in
            let offered = try await console.read(ReadMailPreferences())
            let choices = offered.map { (topic: $0.topic, subscribed: console.form["mail_\($0.topic)"] == "on") }
            let after = try await console.run(SetMailPreferences(choices: choices))
            let on = after.filter(\.subscribed).count
            return .redirect(
                to: "/console/security",
                flash: on == 0 ? "You get none of these mails now." : "You get \(on) of \(after.count) kinds of mail.")
        }
        group.get("unsubscribe") { request, context in
            let link = UnsubscribeLink(ConsoleForm(query: request.uri.query))
            return try await unsubscribePage(link, links: links, scope: context.scope).response(
                secure: context.scope.secure)
        }
        group.post("unsubscribe") { request, context in
            try await publicAction(request, context) { form in
                // A mail program's one-click POST (RFC 8058) carries the link's own query, not a form.
                let query = ConsoleForm(query: request.uri.query)
                let link = UnsubscribeLink(form["key"] == nil ? query : form)
                return try await unsubscribe(link, links: links, scope: context.scope)
            }
        }
    }

    /// What the link names: the operator (when the link is its), whether the topic is offered to
    /// its role, and its address masked.
    private func linked(_ link: UnsubscribeLink, links: UnsubscribeLinks, scope: RequestScope) async throws
        -> LinkedOperator?
    {
        guard let operatorID = link.operatorID,
            links.verifies(operatorID: operatorID, topic: link.topic, key: link.key),
            let found = try await database.readAsSystem(
                LinkedOperator.Read(id: operatorID), context: anonymousContext(scope)),
            found.topics.contains(link.topic)
        else { return nil }
        return found
    }

    private func unsubscribePage(_ link: UnsubscribeLink, links: UnsubscribeLinks, scope: RequestScope) async throws
        -> ConsoleAnswer
    {
        guard let found = try await linked(link, links: links, scope: scope) else { return linkGone() }
        return .page(
            pages.render(
                "unsubscribe",
                [
                    "title": "Stop these mails", "email": MaskedEmail.text(found.email),
                    "description": MailPreference(topic: link.topic, subscribed: true).description,
                    "operator": found.principal.operatorID?.text ?? "", "topic": link.topic, "key": link.key,
                ]))
    }

    private func unsubscribe(_ link: UnsubscribeLink, links: UnsubscribeLinks, scope: RequestScope) async throws
        -> ConsoleAnswer
    {
        guard let found = try await linked(link, links: links, scope: scope) else { return linkGone() }
        // The link stands for its operator: the change is theirs, audited as theirs, with the reason.
        let context = OperationContext(scope, acting: found.principal, policies: policies)
        _ = try await database.run(
            SetMailPreferences(choices: [(topic: link.topic, subscribed: false)], reason: "unsubscribe link"),
            context: context)
        return .page(
            pages.render(
                "unsubscribe",
                [
                    "title": "You will not get these mails", "done": true, "email": MaskedEmail.text(found.email),
                    "description": MailPreference(topic: link.topic, subscribed: false).description,
                ]))
    }

    private func linkGone() -> ConsoleAnswer {
        .page(
            pages.error(
                status: .notFound, title: "This link does not work",
                detail:
                    """
                    An unsubscribe link works for the person and the kind of mail it was sent with. Sign in and \
                    choose your mails on the Security page.
                    """,
                requestID: nil))
    }
}

/// The parts of an unsubscribe link (`UnsubscribeLinks.path`).
struct UnsubscribeLink {
    let operatorID: UUID?
    let topic: String
    let key: String

    init(_ form: ConsoleForm) {
        operatorID = form["operator"].flatMap(UUID.init(uuidString:))
        (topic, key) = (form["topic"] ?? "", form["key"] ?? "")
    }
}

/// The active person an unsubscribe link names, and the topics its role is offered.
struct LinkedOperator: Sendable {
    let principal: Principal
    let email: String
    let topics: [String]

    /// Read before anyone is signed in; nil when no active person has the id.
    struct Read: Query {
        static let action = SetMailPreferences.action
        let id: UUID

        func read(in unit: UnitOfWork) async throws -> LinkedOperator? {
            try await unit.first(
                """
                SELECT o.tenant_id, o.role, o.email,
                    ARRAY(SELECT topic FROM mail_topics t WHERE o.role = ANY (t.roles) ORDER BY topic)
                FROM operators o WHERE o.id = \(id) AND o.status = 'active' AND o.kind = 'person'
                """
            ) { row in
                let (tenantID, role, email, topics) = try row.decode((UUID, String, String, [String]).self)
                guard let known = Role(rawValue: role) else { return nil }
                return LinkedOperator(
                    principal: Principal(operatorID: id, role: known, tenantID: tenantID, tokenID: nil),
                    email: email, topics: topics)
            }.flatMap { $0 }
        }
    }
}
