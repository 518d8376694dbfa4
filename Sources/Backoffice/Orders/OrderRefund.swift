import BackofficePlatform
import Foundation
import PostgresNIO

/// A partial refund of a shipped or delivered order: some of its lines, or an amount, with a
/// reason (tables `order_refunds` and `order_refund_lines`). Its cash goes back through the payment
/// provider; its FitPoints (lines paid in FitPoints) through the ledger; a return puts its lines'
/// units back in stock. The database keeps each unit refunded at most once and the cash within the
/// capture.
package struct OrderRefund: Sendable, Equatable, RowDecodable {
    /// pending (the provider is asked) → succeeded or failed (the provider's code kept).
    package enum Status: String, Sendable, CaseIterable { case pending, succeeded, failed }
    /// Units of one of the order's lines (its number, as on the order).
    package struct Line: Sendable, Equatable, Codable {
        package var line: Int
        package var quantity: Int
        package init(line: Int, quantity: Int) { (self.line, self.quantity) = (line, quantity) }
    }

    package let id: UUID
    package let orderID: UUID
    package let amountCents: Int64
    package let fitPoints: Int64
    /// A return: the lines' units went back in stock when it succeeded.
    package let restock: Bool
    package let lines: [Line]
    package let reason: String
    package let status: Status
    package let failureCode: String?
    package let createdAt: Date
    package let decidedAt: Date?

    /// The select list over `r` (`order_refunds r`), its lines as a JSON array of `Line`s.
    package static let columns = """
        r.id, r.order_id, r.amount_cents, r.fitpoints, r.restock,
        coalesce((SELECT json_agg(json_build_object('line', l.line, 'quantity', l.quantity) ORDER BY l.line)
            FROM order_refund_lines l
            WHERE l.refund_id = r.id), '[]')::text,
        r.reason, r.status, r.failure_code, r.created_at, r.decided_at
        """

    package init(row: PostgresRow) throws {
        var c = RowCells(row, of: "order refund")
        (id, orderID, amountCents, fitPoints, restock) = (
            try c.next(), try c.next(), try c.next(), try c.next(), try c.next()
        )
        lines = try JSONDecoder().decode([Line].self, from: Data(try c.next(String.self).utf8))
        (reason, status) = (try c.next(), try Status(known: try c.next(String.self)))
        (failureCode, createdAt, decidedAt) = (try c.next(), try c.next(), try c.next())
    }

    /// What the audit log keeps of it (the reason is the event's own).
    var snapshot: String {
        get throws {
            struct Snapshot: Encodable {
                let id: String, amount_cents: Int64, fitpoints: Int64, restock: Bool, lines: [Line], status: String,
                    failure_code: String?
            }
            return try AuditRecord.json(
                Snapshot(
                    id: id.text, amount_cents: amountCents, fitpoints: fitPoints, restock: restock, lines: lines,
                    status: status.rawValue, failure_code: failureCode))
        }
    }

    /// What a refund the provider declined is answered with: 409 `refund_refused`, with its code.
    static func refusedByProvider(_ code: String?) -> DomainError {
        .conflict(
            code: RefundOrder.refusal,
            detail: "The payment provider refused the refund (\(code ?? "declined")); it is kept as failed and its "
                + "units are free to refund again.")
    }

    /// The order's refunds, oldest first.
    static func all(of order: UUID, in unit: UnitOfWork) async throws -> [OrderRefund] {
        try await unit.all(
            "SELECT \(unescaped: columns) FROM order_refunds r WHERE r.order_id = \(order) ORDER BY r.created_at, r.id")
    }

    /// The refund `id`, locked until the unit ends.
    static func locked(_ id: UUID, in unit: UnitOfWork) async throws -> OrderRefund {
        try await unit.one(
            "SELECT \(unescaped: columns) FROM order_refunds r WHERE r.id = \(id) FOR UPDATE",
            as: OrderRefund.self, else: DomainError.notFound("Refund \(id.text)"))
    }

    /// Counts the refund's units as refunded on their lines (`sign` +1: taken by a refund asked),
    /// or no longer (-1: freed by a refund declined).
    static func countUnits(of refund: UUID, as sign: Int32, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            UPDATE order_lines l SET refunded_quantity = l.refunded_quantity + \(sign) * r.quantity
            FROM order_refund_lines r
            WHERE r.refund_id = \(refund) AND l.order_id = r.order_id AND l.line = r.line
            """)
    }

    /// Cents of the order's refunds the provider is still asked about (read by a statement after
    /// the order's lock, so it sees what the lock's last holder committed).
    static func pendingCents(of order: UUID, in unit: UnitOfWork) async throws -> Int64 {
        try await unit.first(
            """
            SELECT coalesce(sum(amount_cents), 0)::bigint FROM order_refunds
            WHERE order_id = \(order) AND status = 'pending'
            """, { try $0.decode(Int64.self) }) ?? 0
    }
}

/// What a partial refund is asked: the lines (with `restock`, a return) or an amount, and why.
package struct OrderRefundRequest: Sendable, Codable {
    package var lines: [OrderRefund.Line]?
    package var amountCents: Int64?
    package var restock: Bool
    package var reason: String

    package init(lines: [OrderRefund.Line]?, amountCents: Int64?, restock: Bool, reason: String) {
        (self.lines, self.amountCents, self.restock) = (lines, amountCents, restock)
        self.reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Checks of the request alone: a reason; lines or an amount, not both; each line once, 1 to
    /// 100 units; a return names lines.
    func check() throws {
        var validation = Validation()
        validation.text(reason, "reason", max: 500)
        validation.require(
            (lines == nil) != (amountCents == nil), "lines", "lines_or_amount",
            "either lines (with their quantities) or amount_cents, not both")
        if let lines {
            validation.require((1...100).contains(lines.count), "lines", "out_of_range", "1 to 100 lines")
            validation.require(
                Set(lines.map(\.line)).count == lines.count, "lines", "duplicate_line", "each line at most once")
            validation.require(
                lines.allSatisfy { (1...100).contains($0.quantity) }, "lines", "out_of_range",
                "each line's quantity from 1 to 100")
        }
        if let amountCents { validation.require(amountCents >= 1, "amount_cents", "out_of_range", "at least 1 cent") }
        validation.require(
            !restock || lines != nil, "restock", "restock_needs_lines", "a return puts lines back in stock: name them")
        try validation.check()
    }
}
