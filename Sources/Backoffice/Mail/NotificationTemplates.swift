import BackofficeConsole
import BackofficePlatform
import Foundation

extension MailTemplates {
    /// The console page a notification is about (the order, the good, the case, the endpoint).
    static func notificationPath(_ kind: QueuedMail.Kind, reference: UUID) -> String? {
        switch kind {
        case .newOrder: "/console/orders/\(reference.text)"
        case .lowStock: "/console/goods/\(reference.text)"
        case .urgentCase: "/console/moderation/cases/\(reference.text)"
        case .webhookEndpointDisabled: "/console/webhook-endpoints/\(reference.text)"
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
            let rules = fields["rules"].flatMap { $0.isEmpty ? nil : " (rules: \($0))" } ?? ""
            subject = "An urgent moderation case is waiting"
            let how = fields["opened_by"] == "report" ? "reported" : "held by the screen"
            paragraphs = [
                "A \(fields["content_kind"] ?? "piece of content") was \(how) at severity 3, urgent\(rules).",
                "Take it from the moderation queue.",
            ]
            label = "Open the case"
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
}
