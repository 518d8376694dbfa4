import BackofficePlatform
import Foundation
import Logging
import PostgresNIO

/// How a customer account is stored: `customers` with its open lock from `account_locks`. Every
/// function runs inside the caller's unit of work; row-level security limits it to platform
/// sessions.
extension Customer: RowDecodable {
    /// Columns read by `init(row:)`, for `FROM customers c LEFT JOIN account_locks l ON … open lock`.
    package static let columns = """
        c.id, c.email, c.display_name, c.status, c.subscription, c.renews_at, c.failed_logins, c.created_at,
            c.updated_at, c.deleted_at, c.version,
        l.id, l.cause, l.reason, l.failed_attempts, l.locked_by, l.locked_at, l.until, l.lifted_at, l.lifted_by,
            l.lift_reason
        """
    static let from = "customers c LEFT JOIN account_locks l ON l.customer_id = c.id AND l.lifted_at IS NULL"

    /// Decodes `columns` cell by cell (cheaper than tuple decoding on list pages).
    package init(row: PostgresRow) throws {
        var cells = RowCells(row, of: "customers")
        self.init(
            id: try cells.next(UUID.self), email: try cells.next(String.self), displayName: try cells.next(String.self),
            status: try AccountStatus(known: try cells.next(String.self)),
            subscription: try Subscription(known: try cells.next(String.self)),
            renewsAt: try cells.next(Date?.self), failedLogins: try cells.next(Int.self),
            createdAt: try cells.next(Date.self), updatedAt: try cells.next(Date.self),
            deletedAt: try cells.next(Date?.self),
            version: try cells.next(Int64.self), lock: nil)
        if let lockID = try cells.next(UUID?.self) {
            lock = AccountLock(
                id: lockID, cause: try AccountLock.Cause(known: try cells.next(String.self)),
                reason: try cells.next(String.self),
                failedAttempts: try cells.next(Int?.self), lockedBy: try cells.next(UUID?.self),
                lockedAt: try cells.next(Date.self),
                until: try cells.next(Date?.self), liftedAt: try cells.next(Date?.self),
                liftedBy: try cells.next(UUID?.self),
                liftReason: try cells.next(String?.self))
        }
    }

    /// Nothing when the account exists (whatever its status), for reads about a customer that
    /// need no more of it (balances, badges).
    /// - Throws: `DomainError.notFound` when it does not exist or is not visible.
    static func requireExisting(_ id: UUID, in unit: UnitOfWork) async throws {
        guard try await unit.first("SELECT 1 FROM customers WHERE id = \(id)", { _ in true }) != nil else {
            throw DomainError.notFound("Customer \(id.text)")
        }
    }

    /// The account with its open lock; with `forUpdate`, locked until the unit of work ends.
    /// - Throws: `DomainError.notFound` when it does not exist or is not visible.
    static func fetch(_ id: UUID, forUpdate: Bool = false, in unit: UnitOfWork) async throws -> Customer {
        try await unit.byID(from, alias: "c", id, forUpdate: forUpdate, notFound: "Customer \(id.text)")
    }

    /// How a status change treats the account's lock record.
    enum LockChange: Sendable {
        case keep
        case open(AccountLock)
        case lift(by: UUID?, reason: String)
    }

    /// Writes this account's new status and failed-login count, opens or lifts its lock, bumps
    /// the version; one statement. Returns the account as it now is.
    func write(status: AccountStatus, failedLogins: Int, lock change: LockChange, in unit: UnitOfWork) async throws
        -> Customer
    {
        var opened: AccountLock?
        var lift = false
        var liftedBy: UUID?
        var liftReason: String?
        switch change {
        case .keep: break
        case .open(let lock): opened = lock
        case .lift(let by, let reason): (lift, liftedBy, liftReason) = (true, by, reason)
        }
        // Data-modifying CTEs run exactly once whether referenced or not.
        let query: PostgresQuery = """
            WITH opened AS (
                INSERT INTO account_locks (id, customer_id, cause, reason, failed_attempts, locked_by, until, locked_at)
                SELECT \(opened?.id), \(id), \(opened?.cause.rawValue), \(opened?.reason), \(opened?.failedAttempts),
                    \(opened?.lockedBy),
                       \(opened?.until), \(unit.now)
                WHERE \(opened?.id)::uuid IS NOT NULL
                RETURNING id
            ), lifted AS (
                UPDATE account_locks SET lifted_at = \(unit.now), lifted_by = \(liftedBy), lift_reason = \(liftReason)
                WHERE customer_id = \(id) AND lifted_at IS NULL AND \(lift)
                RETURNING id
            )
            UPDATE customers SET status = \(status.rawValue), failed_logins = \(failedLogins), version = version + 1,
                updated_at = \(unit.now),
                deleted_at = CASE WHEN \(status == .deleted) THEN \(unit.now)::timestamptz ELSE NULL END
            WHERE id = \(id)
            RETURNING version
            """
        let now = unit.now
        guard let version = try await unit.first(query, { try $0.decode(Int64.self) }) else {
            throw DomainError.notFound("Customer \(id.text)")
        }
        var after = self
        after.status = status
        after.failedLogins = failedLogins
        after.version = version
        after.updatedAt = now
        after.deletedAt = status == .deleted ? now : nil
        switch change {
        case .keep: break
        case .open(var lock):
            lock.lockedAt = now
            after.lock = lock
        case .lift: after.lock = nil
        }
        return after
    }
}

/// One page of the account list, keyset-paginated after the account `afterID` (its email is
/// looked up, so cursors never carry PII); every filter is a bound parameter. A prepared
/// statement that its read session plans once, generically (`HandEncodedLists.plans`): the page's
/// accounts are chosen first, in index order, and only they are joined with their open locks (a
/// lateral lookup by `account_locks_open`), so the plan stays a short index walk however large the
/// lock table grows. An email prefix is its own shape: a generic plan cannot tell an empty prefix
/// (every account) from a narrow one, and one range for both made it sort the whole table.
struct CustomerPage<Shape: CustomerPageShape, Fetch: PageFetch>: PostgresPreparedStatement {
    static var name: String { "customers_page_\(Shape.name)_\(Fetch.rows)" }
    static var sql: String {
        """
        SELECT \(Customer.columns) FROM (
          SELECT * FROM customers c WHERE c.status = ANY($1::text[]) AND \(Shape.filter) ORDER BY \(Shape.order) LIMIT
              \(Fetch.rows)) c
        LEFT JOIN LATERAL (SELECT * FROM account_locks l WHERE l.customer_id = c.id AND l.lifted_at IS NULL) l ON true
        ORDER BY \(Shape.order)
        """
    }
    let statuses: [String]
    let afterID: UUID
    var prefix: String? = nil

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(statuses)
        bindings.append(afterID)
        if let prefix {
            bindings.append(prefix)
            bindings.append(prefix + "\u{10FFFF}")
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Customer { try Customer(row: row) }
}

/// Which accounts a `CustomerPage` holds and in which order; `filter` reads the account after
/// which the page starts as $2 (and an email prefix's bounds as $3 and $4).
protocol CustomerPageShape: PageShape {
    static var order: String { get }
}

/// Every account, by (email, id).
enum CustomersByEmail: CustomerPageShape {
    static let name = "by_email"
    static let filter = "(c.email, c.id) > (coalesce((SELECT a.email FROM customers a WHERE a.id = $2), ''), $2::uuid)"
    static let order = "c.email, c.id"
}

/// The accounts whose email starts with a prefix, by (email, id).
enum CustomersByEmailPrefix: CustomerPageShape {
    static let name = "by_email_prefix"
    static let filter = "\(CustomersByEmail.filter) AND c.email >= $3 AND c.email < $4"
    static let order = CustomersByEmail.order
}

/// Every account by id: for roles that see PII masked, never ordered by a masked field.
enum CustomersByID: CustomerPageShape {
    static let name = "by_id"
    static let filter = "c.id > $2"
    static let order = "c.id"
}
