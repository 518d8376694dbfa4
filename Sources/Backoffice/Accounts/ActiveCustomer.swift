import BackofficePlatform
import Foundation

/// The check every change a customer makes through the app starts with (checkout, subscribing):
/// the customer exists (else 404) and is active (else 409 `account_locked`), its row locked until
/// the transaction ends, so a lock or a deletion waits for the change, or the change for it.
enum ActiveCustomer {
    /// How the row is held: `share` lets changes for one customer run side by side, `update`
    /// queues them (subscribes for one customer, one at a time).
    enum Hold: String { case share = "FOR SHARE", update = "FOR UPDATE" }

    /// Refuses unless customer `id` is active, holding its row; `cannot` ends the refusal's detail
    /// ("it cannot check out").
    static func require(_ id: UUID, holding hold: Hold, cannot: String, in unit: UnitOfWork) async throws {
        guard
            let status = try await unit.first(
                "SELECT status FROM customers WHERE id = \(id) \(unescaped: hold.rawValue)",
                { try AccountStatus(known: try $0.decode(String.self)) })
        else { throw DomainError.notFound("Customer \(id.text)") }
        guard status == .active else {
            throw DomainError.conflict(
                code: "account_locked", detail: "The customer's account is \(status.rawValue): it cannot \(cannot).")
        }
    }
}
