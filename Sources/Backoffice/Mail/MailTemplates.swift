import BackofficeConsole
import BackofficePlatform
import Foundation

/// What each kind of mail says, in plain text and HTML (every value escaped by `HTML`'s
/// interpolation), with the product's name; a link's mail says until when it works.
enum MailTemplates {
    struct Rendered: Equatable {
        let subject: String
        let text: String
        let html: String
    }

    /// A kind of mail no template writes (a row queued by a newer build, say): set aside, never sent.
    struct Unwritten: Error, CustomStringConvertible {
        let kind: QueuedMail.Kind
        var description: String { "no template writes mail of kind \(kind.rawValue)" }
    }

    /// The mail of `kind` with `fields`; `link` is the absolute address a link's mail carries.
    /// `unsubscribe`, a notification's one-topic unsubscribe link, is offered at its foot.
    static func render(
        _ kind: QueuedMail.Kind, fields: [String: String], link: String?, unsubscribe: String? = nil
    ) throws -> Rendered {
        let product = "HealthTrack Back Office"
        switch kind {
        case .invitation:
            let role = (fields["role"] ?? "operator").replacingOccurrences(of: "_", with: " ")
            let expires = fields["expires_at"] ?? ""
            let link = link ?? ""
            return page(
                subject: "Set your \(product) password",
                paragraphs: [
                    "You have been invited to the \(product) as \(role)\(fields["tenant"].map { " of \($0)" } ?? "").",
                    """
                    Open this link to set your password. It works once, until \(expires) (UTC); a newer link \
                    replaces it.
                    """,
                ],
                link: (link, "Set your password"),
                footer: "If you did not expect this, ignore it: nothing happens until the link is opened.")
        case .lockoutNotice:
            return page(
                subject: "Failed sign-ins to your \(product) account",
                paragraphs: [
                    "There were \(fields["failures"] ?? "several") failed sign-ins to your account within "
                        + "\(fields["minutes"] ?? "a few") minutes. Sign-in is slowed for a while; you can still sign "
                        + "in, and the address that failed cannot try again for a while.",
                    "The last attempt came from \(fields["address"] ?? "an unknown address").",
                ],
                link: nil,
                footer: "If this was not you, tell your administrator: someone may be guessing your password.")
        case .shopDecision: return shopDecision(fields)
        case .webhookEndpointDisabled, .newOrder, .lowStock, .urgentCase, .dailySummary, .appealsWaiting:
            return try notification(kind, fields: fields, link: link, unsubscribe: unsubscribe)
        case .subscriptionReceipt, .subscriptionPaymentFailed, .subscriptionLapsed, .subscriptionPriceChange:
            return try billing(kind, fields: fields)
        default:
            throw Unwritten(kind: kind)
        }
    }

    /// A shop application's decision, to whoever applied.
    private static func shopDecision(_ fields: [String: String]) -> Rendered {
        let approved = fields["decision"] == "approved"
        let shop = fields["legal_name"] ?? "your shop"
        var paragraphs = [
            approved
                ? "Your application for \(shop) to sell on HealthTrack is approved."
                : "Your application for \(shop) to sell on HealthTrack was not approved."
        ]
        if approved {
            paragraphs.append(
                """
                Claim your shop with the claim code your application was answered with (backoffice shops \
                claim), within 14 days.
                """
            )
        } else if let reason = fields["reason"] {
            paragraphs.append("The reason given: \(reason)")
        }
        return page(
            subject: approved ? "\(shop) is approved on HealthTrack" : "Your HealthTrack shop application",
            paragraphs: paragraphs, link: nil,
            footer: "Reference: \(fields["application_id"] ?? "")")
    }

    /// The customer's mails about their subscription (`BillingMail`).
    private static func billing(_ kind: QueuedMail.Kind, fields: [String: String]) throws -> Rendered {
        let plan = fields["plan"] ?? "HealthTrack"
        let amount = fields["amount"] ?? ""
        let period = "\(fields["period_start"] ?? "") to \(fields["period_end"] ?? "")"
        let footer = "Invoice \(fields["invoice_id"] ?? ""). Amounts in US dollars; no tax is charged."
        switch kind {
        case .subscriptionReceipt:
            return page(
                subject: "Your HealthTrack receipt: \(amount)",
                paragraphs: ["Thank you: \(amount) was paid for your \(plan) subscription, from \(period) (UTC)."],
                link: nil, footer: footer)
        case .subscriptionPaymentFailed:
            return page(
                subject: "Your HealthTrack payment of \(amount) was declined",
                paragraphs: [
                    "The payment of \(amount) for your \(plan) subscription was declined "
                        + "(\(fields["code"] ?? "declined")).",
                    """
                    We will try again on \(fields["next_attempt"] ?? "a later day") (UTC). Your premium features stay \
                    on until \(fields["grace_ends"] ?? "then"); update your payment method in the app to pay now.
                    """,
                ],
                link: nil, footer: footer)
        case .subscriptionPriceChange:
            return page(
                subject: "The price of your HealthTrack subscription is changing",
                paragraphs: [
                    "The price of \(plan) changes from \(fields["old_price"] ?? "") to \(fields["new_price"] ?? "").",
                    """
                    Your subscription renews at the new price from its first renewal on or after \
                    \(fields["from"] ?? "the notice's end") (UTC). You can cancel in the app before then.
                    """,
                ],
                link: nil, footer: "Amounts in US dollars; no tax is charged.")
        case .subscriptionLapsed:
            return page(
                subject: "Your HealthTrack subscription has ended",
                paragraphs: [
                    "The last try to charge \(amount) for your \(plan) subscription was declined, so it has ended.",
                    "You can subscribe again in the app at any time.",
                ],
                link: nil, footer: footer)
        default:
            throw Unwritten(kind: kind)
        }
    }

    static func page(
        subject: String, paragraphs: [String], link: (url: String, label: String)?, footer: String,
        unsubscribe: String? = nil
    ) -> Rendered {
        // A subject is one line, whatever a shown value holds (a good's name with a line break).
        let subject = subject.split(whereSeparator: \.isNewline).joined(separator: " ")
        var text = paragraphs.joined(separator: "\n\n")
        if let link { text += "\n\n\(link.url)" }
        text += "\n\n\(footer)"
        if let unsubscribe { text += "\nStop these mails: \(unsubscribe)" }
        text += "\n\n-- \nHealthTrack Back Office\n"
        var html: HTML = "<!doctype html><html><body style=\"font-family: sans-serif; line-height: 1.5\">"
        for paragraph in paragraphs { html = "\(html)<p>\(paragraph)</p>" }
        if let link {
            html =
                "\(html)<p><a href=\"\(link.url)\">\(link.label)</a></p><p style=\"font-size: small\">\(link.url)</p>"
        }
        html =
            """
            \(html)<p style=\"color: #57606a; font-size: small\">\(footer)\(unsubscribeHTML(unsubscribe))</p>\
            <p style=\"color: #57606a; \
            font-size: small\">HealthTrack Back Office</p></body></html>
            """
        return Rendered(subject: subject, text: text, html: html.renderText)
    }

    private static func unsubscribeHTML(_ link: String?) -> HTML {
        guard let link else { return "" }
        return " <a href=\"\(link)\">Stop these mails</a>."
    }
}
