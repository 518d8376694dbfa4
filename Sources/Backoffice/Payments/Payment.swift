import Foundation
import PostgresNIO

/// An order's card payment at the provider, as the back office knows it. The database keeps
/// the capture within the authorization and refunds within the capture, and a provider payment
/// id belongs to one payment only.
public struct Payment: Sendable, Equatable {
    /// authorizing (the provider is asked; its verdict not recorded yet) → pending (the provider
    /// decides later, by webhook) → authorized → captured → refunded; voided (an authorization
    /// released); failed.
    public enum Status: String, Sendable, Codable, CaseIterable { case authorizing, pending, authorized, captured, voided, refunded, failed }

    public var id: UUID
    public var tenantID: UUID
    public var orderID: UUID
    public var provider: String
    public var providerPaymentID: String?
    public var status: Status
    public var amountCents: Int64
    public var authorizedCents: Int64
    public var capturedCents: Int64
    public var refundedCents: Int64
    public var failureCode: String?
    public var createdAt: Date
}

extension Payment: RowDecodable {
    public static let columns = """
        id, tenant_id, order_id, provider, provider_payment_id, status, amount_cents, authorized_cents, captured_cents, refunded_cents, failure_code,
        created_at
        """

    public init(row: PostgresRow) throws {
        let c = try row.decode((UUID, UUID, UUID, String, String?, String, Int64, Int64, Int64, Int64, String?, Date).self)
        self.init(
            id: c.0, tenantID: c.1, orderID: c.2, provider: c.3, providerPaymentID: c.4, status: try Status(known: c.5), amountCents: c.6,
            authorizedCents: c.7, capturedCents: c.8, refundedCents: c.9, failureCode: c.10, createdAt: c.11)
    }

    /// The order's payment (nil when it was paid in FitPoints only); with `forUpdate`, locked.
    static func of(order: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Payment? {
        try await unit.first(
            forUpdate
                ? "SELECT \(unescaped: columns) FROM payments WHERE order_id = \(order) FOR UPDATE"
                : "SELECT \(unescaped: columns) FROM payments WHERE order_id = \(order)", as: Payment.self)
    }

    /// The payment `id`, locked until the unit of work ends.
    /// - Throws: `notFound` when it does not exist or is not visible.
    static func locked(_ id: UUID, in unit: UnitOfWork) async throws -> Payment {
        try await unit.byID("payments", id, forUpdate: true, notFound: "Payment \(id.text)")
    }

    /// Records the payment's new state (amounts as given).
    static func record(
        _ id: UUID, status: Status, authorizedCents: Int64? = nil, capturedCents: Int64? = nil, refundedCents: Int64? = nil,
        providerPaymentID: String? = nil, failureCode: String? = nil, in unit: UnitOfWork
    ) async throws {
        try await unit.execute(
            """
            UPDATE payments SET status = \(status.rawValue), authorized_cents = coalesce(\(authorizedCents), authorized_cents),
                captured_cents = coalesce(\(capturedCents), captured_cents), refunded_cents = coalesce(\(refundedCents), refunded_cents),
                provider_payment_id = coalesce(\(providerPaymentID), provider_payment_id), failure_code = coalesce(\(failureCode), failure_code),
                updated_at = \(unit.now)
            WHERE id = \(id)
            """)
    }
}

/// The payment provider's calls as the use cases make them: a verdict that is no verdict
/// (timeout, provider failure) becomes 503 `payment_provider_unavailable`, and nothing commits.
extension PaymentValidator {
    func call(_ body: (Self) async throws -> PaymentOutcome) async throws -> PaymentOutcome {
        do { return try await body(self) } catch let error as PaymentProviderError { throw DomainError.paymentProviderUnavailable(error.description) }
    }
}
