import BackofficePlatform
import Foundation
import PostgresNIO

/// An order's card payment at the provider, as the back office knows it. The database keeps
/// the capture within the authorization and refunds within the capture, and a provider payment
/// id belongs to one payment only.
package struct Payment: Sendable, Equatable {
    /// authorizing (the provider is asked; its verdict not recorded yet) → pending (the provider
    /// decides later, by webhook) → authorized → captured → refunded; voided (an authorization
    /// released); failed.
    package enum Status: String, Sendable, Codable, CaseIterable {
        case authorizing, pending, authorized, captured, voided, refunded, failed
    }

    package var id: UUID
    package var tenantID: UUID
    package var orderID: UUID
    package var provider: String
    package var providerPaymentID: String?
    package var status: Status
    package var amountCents: Int64
    package var authorizedCents: Int64
    package var capturedCents: Int64
    package var refundedCents: Int64
    package var failureCode: String?
    package var createdAt: Date
    /// The provider operation a partner's move has under way (capture, void, refund), if any.
    package var pendingOperation: PaymentOperation?
}

/// What the provider is asked to do to an authorized or captured payment.
package enum PaymentOperation: String, Sendable, Codable { case capture, void, refund }

extension Payment: RowDecodable {
    package static let columns = """
        id, tenant_id, order_id, provider, provider_payment_id, status, amount_cents, authorized_cents,
            captured_cents, refunded_cents, failure_code,
        created_at, pending_operation
        """

    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "payment")
        try self.init(cells: &cells)
    }

    /// The payment from `cells`, read in `columns`' order (a wider select list reads on after it).
    init(cells: inout RowCells) throws {
        self.init(
            id: try cells.next(), tenantID: try cells.next(), orderID: try cells.next(), provider: try cells.next(),
            providerPaymentID: try cells.next(), status: try Status(known: try cells.next(String.self)),
            amountCents: try cells.next(),
            authorizedCents: try cells.next(), capturedCents: try cells.next(), refundedCents: try cells.next(),
            failureCode: try cells.next(),
            createdAt: try cells.next(),
            pendingOperation: try cells.next(String?.self).map { try PaymentOperation(known: $0) })
    }

    /// The order's payment (nil when it was paid in FitPoints only); with `forUpdate`, locked.
    static func of(order: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Payment? {
        try await unit.first(
            forUpdate
                ? "SELECT \(unescaped: columns) FROM payments WHERE order_id = \(order) FOR UPDATE"
                : "SELECT \(unescaped: columns) FROM payments WHERE order_id = \(order)", as: Payment.self)
    }

    /// Refuses a move while the order's payment is at the provider (its authorization, or another
    /// move's capture, void or refund): 409 `payment_in_progress`.
    static func requireIdle(_ payment: Payment?) throws {
        guard payment?.status != .authorizing, payment?.pendingOperation == nil else {
            throw DomainError.conflict(
                code: "payment_in_progress",
                detail: "The order's payment is at the provider now; try again once its answer is in.")
        }
    }

    /// The payment `id`, locked until the unit of work ends.
    /// - Throws: `notFound` when it does not exist or is not visible.
    static func locked(_ id: UUID, in unit: UnitOfWork) async throws -> Payment {
        try await unit.byID("payments", id, forUpdate: true, notFound: "Payment \(id.text)")
    }

    /// Marks `operation` as under way at the provider, with what its move records once it
    /// succeeds (`detail`, JSON: no secret).
    static func begin(_ operation: PaymentOperation, detail: String, on id: UUID, in unit: UnitOfWork) async throws {
        try await unit.execute(
            """
            UPDATE payments SET pending_operation = \(operation.rawValue), pending_detail = \(detail)::jsonb,
                pending_since = \(unit.now),
                updated_at = \(unit.now)
            WHERE id = \(id)
            """)
    }

    /// Records the payment's new state (amounts as given); an operation under way is over.
    static func record(
        _ id: UUID, status: Status, authorizedCents: Int64? = nil, capturedCents: Int64? = nil,
        refundedCents: Int64? = nil,
        providerPaymentID: String? = nil, failureCode: String? = nil, in unit: UnitOfWork
    ) async throws {
        try await unit.execute(
            """
            UPDATE payments SET status = \(status.rawValue), authorized_cents = coalesce(\(authorizedCents),
                authorized_cents),
                captured_cents = coalesce(\(capturedCents), captured_cents), refunded_cents =
                    coalesce(\(refundedCents), refunded_cents),
                provider_payment_id = coalesce(\(providerPaymentID), provider_payment_id), failure_code =
                    coalesce(\(failureCode), failure_code),
                pending_operation = NULL, pending_detail = NULL, pending_since = NULL, updated_at = \(unit.now)
            WHERE id = \(id)
            """)
    }
}

/// The payment provider's calls as the use cases make them: a verdict that is no verdict
/// (timeout, provider failure) becomes 503 `payment_provider_unavailable`, and nothing commits.
extension PaymentGateway {
    /// Refuses a change that needs the provider before anything is reserved, while its circuit is
    /// open (calls known to fail at once): 503 `payment_provider_unavailable`.
    func refuseWhileUnavailable() throws {
        guard isAcceptingCalls else {
            throw PaymentRefusal.providerUnavailable("the payment provider's circuit is open")
        }
    }

    /// How long a claim on a charge holds it: longer than any call to the provider, retries
    /// included, and at least a minute.
    var claimLease: Duration { max(longestCall * 2, .seconds(60)) }

    func call<Answer>(_ body: (Self) async throws -> Answer) async throws -> Answer {
        do { return try await body(self) } catch let error as PaymentProviderError {
            throw PaymentRefusal.providerUnavailable(error.description)
        }
    }
}
