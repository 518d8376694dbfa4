import BackofficeConsole
import BackofficePlatform
import Foundation
import Hummingbird

extension Console {
    /// A partial refund from the order's page (`RefundOrderPart`, confirmed): the units of each line
    /// to give back, or an amount in dollars, with a reason; "put back in stock" makes it a return.
    /// One past `policies/approvals.yaml`'s threshold is held for a second person (`HeldOrderRefund`).
    /// It calls the payment provider, so it runs as a staged operation in a request that holds no
    /// transaction. A provider's refusal is 409 `refund_refused` shown on the page.
    func registerOrderRefunds(on group: RouterGroup<AppRequestContext>, payments: any PaymentGateway) {
        post("orders/{id}/refunds", on: group, holdsTransaction: false) { console in
            let id = try console.routeID()
            return try await console.submit {
                try console.form.confirm("refund_part")
                let request = try OrderRefundForm.request(console.form)
                let held = try await console.read(OrderRefundQuote(orderID: id, request: request))
                if held.needsApproval(console.context.policies) != nil {
                    _ = try await console.run(RequestApproval(change: held))
                    return console.redirect(
                        "/console/orders/\(id.text)",
                        flash: "Held for a second person's approval: the refund is made when another admin accepts it.")
                }
                let refund = try await console.runStaged(
                    RefundOrderPart(orderID: id, request: request, payments: payments))
                guard refund.status != .failed else { throw OrderRefund.refusedByProvider(refund.failureCode) }
                return console.redirect(
                    "/console/orders/\(id.text)", flash: "Refunded \(OrderRefundForm.amount(refund)) of the order.")
            } refused: { issues in
                try await console.orderPage(id, issues: issues, values: console.form.values)
            }
        }
    }
}

/// The order page's partial refund: its form read, and the refunds and refundable lines shown.
enum OrderRefundForm {
    /// The request a form makes: `units_<line>` for each line's units (blank or 0: none), or
    /// `amount_usd`; `restock` and `reason`.
    static func request(_ form: ConsoleForm) throws -> OrderRefundRequest {
        let units = try form.values.compactMap { name, value -> OrderRefund.Line? in
            guard name.hasPrefix("units_"), let line = Int(name.dropFirst("units_".count)) else { return nil }
            let text = value.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty, text != "0" else { return nil }
            guard let quantity = Int(text) else {
                throw DomainError.invalid("units_\(line)", "not_a_number", "a whole number of units")
            }
            return OrderRefund.Line(line: line, quantity: quantity)
        }
        let amount = try form.text("amount_usd").map { try Money.cents($0, field: "amount_usd") }
        return OrderRefundRequest(
            lines: units.isEmpty ? nil : units.sorted { $0.line < $1.line }, amountCents: amount,
            restock: form.text("restock") == "yes", reason: form.text("reason") ?? "")
    }

    /// What a refund gave back, as people read it.
    static func amount(_ refund: OrderRefund) -> String {
        [
            refund.amountCents > 0 ? Money.dollars(refund.amountCents) : nil,
            refund.fitPoints > 0 ? Money.fitPoints(refund.fitPoints) : nil,
        ].compactMap { $0 }.joined(separator: " + ")
    }

    /// The page's refunds and the lines with units left to refund (`refundLines`, with
    /// `canRefundPart` when any is left or the payment has cash left).
    static func add(_ detail: OrderDetail, to data: inout [String: Any]) {
        data["refunds"] = detail.refunds.map { refund in
            [
                "when": ConsoleTime.text(refund.createdAt), "amount": amount(refund), "status": refund.status.rawValue,
                "reason": refund.reason, "failure": refund.failureCode ?? "", "return": refund.restock,
                "lines": refund.lines.map { "#\($0.line) × \($0.quantity)" }.joined(separator: ", "),
            ] as [String: Any]
        }
        data["hasRefunds"] = !detail.refunds.isEmpty
        let left = detail.lines.filter { $0.quantity > $0.refundedQuantity }
        data["refundLines"] = left.map { line in
            ["line": line.line, "name": line.name, "left": line.quantity - line.refundedQuantity] as [String: Any]
        }
        let cashLeft = detail.payment.map { $0.capturedCents > $0.refundedCents } ?? false
        data["canRefundPart"] = data["can_refund"] as? Bool == true && (!left.isEmpty || cashLeft)
    }
}
