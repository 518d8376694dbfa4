import BackofficeConsole
import BackofficePlatform
import Foundation

extension MailTemplates {
    /// The console page a notification is about (the order, the good, the case, the endpoint).
    static func notificationPath(_ kind: QueuedMail.Kind, reference: UUID?) -> String? {
        switch (kind, reference) {
        case (.newOrder, let id?): "/console/orders/\(id.text)"
        case (.lowStock, let id?): "/console/goods/\(id.text)"
        case (.urgentCase, let id?): "/console/moderation/cases/\(id.text)"
        case (.webhookEndpointDisabled, let id?): "/console/webhook-endpoints/\(id.text)"
        case (.dailySummary, _): "/console/home"
        case (.appealsWaiting, _): "/console/appeals"
        default: nil
        }
    }

    /// A notification an operator chose (`MailPreference`): what happened, a link to it, and how to
    /// stop these mails (`unsubscribe`, the one-topic link, and the Security page).
    static func notification(
        _ kind: QueuedMail.Kind, fields: [String: String], link: String?, unsubscribe: String?
    ) throws -> Rendered {
        let (subject, paragraphs, label): (String, [String], String)
        switch kind {
        case .newOrder:
            let cents = Int64(fields["total_cents"] ?? "") ?? 0
            let points = Int64(fields["total_fitpoints"] ?? "") ?? 0
            let total = [cents > 0 ? Money.dollars(cents) : nil, points > 0 ? "\(points) FitPoints" : nil]
                .compactMap { $0 }.joined(separator: " and ")
            subject = "A new order to handle: \(total.isEmpty ? "no charge" : total)"
            paragraphs = [
                "An order of \(fields["line_count"] ?? "some") line(s) was paid (\(total.isEmpty ? "free" : total)).",
                "Accept it, then ship it, from the orders board.",
            ]
            label = "Open the order"
        case .lowStock:
            subject = "Low stock: \(fields["name"] ?? "a good") (\(fields["sku"] ?? ""))"
            paragraphs = [
                "\(fields["name"] ?? "A good") (SKU \(fields["sku"] ?? "")) has \(fields["stock"] ?? "few") left "
                    + "in stock.",
                "Restock it before it sells out: a good with no stock cannot be ordered.",
            ]
            label = "Open the good"
        case .urgentCase:
            (subject, paragraphs, label) = urgentCase(fields)
        case .dailySummary:
            (subject, paragraphs, label) = dailySummary(fields)
        case .appealsWaiting:
            subject = "\(fields["count"] ?? "Some") appeal(s) waiting for a decision"
            paragraphs = [
                "\(fields["count"] ?? "Some") appeal(s) against locks or moderation decisions wait for a decision; "
                    + "the oldest since \(fields["oldest"] ?? "a while") (UTC).",
                "An appeal is answered within the time the rules promise: decide them from the appeals page.",
            ]
            label = "Open the appeals"
        case .webhookEndpointDisabled:
            subject = "A webhook endpoint of your shop was disabled"
            paragraphs = [
                "Deliveries to \(fields["url"] ?? "your endpoint") failed for three days, so it is disabled: "
                    + "no more events are sent to it.",
                "The events waiting are kept: enable it again (backoffice webhook-endpoints update --status "
                    + "enabled) once it answers 2xx within 10 seconds, and they are sent in order.",
            ]
            label = "Open the endpoint"
        default:
            throw Unwritten(kind: kind)
        }
        return page(
            subject: subject, paragraphs: paragraphs, link: link.map { ($0, label) },
            footer: "You get this mail because you chose it on the Security page of the back office.",
            unsubscribe: unsubscribe)
    }

    /// A shop's day before: what was sold and refunded, and what waits now.
    private static func dailySummary(_ fields: [String: String]) -> (String, [String], String) {
        let points = fields["sales_fitpoints"].flatMap { $0 == "0" ? nil : " and \($0) FitPoints" } ?? ""
        return (
            "\(fields["shop"] ?? "Your shop"): your day, \(fields["day"] ?? "yesterday")",
            [
                "On \(fields["day"] ?? "yesterday") (UTC): \(fields["orders"] ?? "0") order(s) placed, "
                    + "\(fields["sales"] ?? "$0.00")\(points) in sales; \(fields["refunds"] ?? "0") refund(s) "
                    + "(\(fields["refunded"] ?? "$0.00")).",
                "Waiting now: \(fields["to_accept"] ?? "0") order(s) to accept, \(fields["to_ship"] ?? "0") to ship; "
                    + "\(fields["low_stock"] ?? "0") good(s) with 5 or fewer in stock.",
            ],
            "Open the shop's home"
        )
    }

    /// A moderation case open at severity 3 (urgent) or 4 (critical): how it was opened, never the content.
    private static func urgentCase(_ fields: [String: String]) -> (String, [String], String) {
        let rules = fields["rules"].flatMap { $0.isEmpty ? nil : " (rules: \($0))" } ?? ""
        let how = fields["opened_by"] == "report" ? "reported" : "held by the screen"
        let level = fields["severity"] == "4" ? "severity 4, critical" : "severity 3, urgent"
        return (
            "An urgent moderation case is waiting",
            [
                "A \(fields["content_kind"] ?? "piece of content") was \(how) at \(level)\(rules).",
                "Take it from the moderation queue.",
            ],
            "Open the case"
        )
    }
}
