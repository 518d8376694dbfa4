import Foundation
import Logging
import PostgresNIO

/// The SQL of the Accounts domain. Every function runs on a connection inside the caller's
/// transaction; row-level security limits it to platform sessions.
enum AccountStore {
    /// The account with its open lock, locked FOR UPDATE until the transaction ends.
    static func fetchForUpdate(_ id: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Customer {
        guard let customer = try await connection.rows(FetchCustomerForUpdate(id: id), logger: logger).first else {
            throw Problem.notFound("Customer \(id.uuidString.lowercased())")
        }
        return customer
    }

    static func fetch(_ id: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Customer {
        let query: PostgresQuery = "SELECT \(unescaped: Customer.columns) FROM \(unescaped: Customer.from) WHERE c.id = \(id)"
        for try await row in try await connection.query(query, logger: logger) { return try Customer.decode(row) }
        throw Problem.notFound("Customer \(id.uuidString.lowercased())")
    }

    /// How a status change treats the account's lock record.
    enum LockChange: Sendable {
        case keep
        case open(AccountLock)
        case lift(by: UUID?, reason: String)
    }

    /// Writes `customer`'s new status and failed-login count, opens or lifts its lock, bumps the
    /// version; one statement. Returns the account as it now is.
    static func write(
        _ customer: Customer, status: AccountStatus, failedLogins: Int, lock change: LockChange,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Customer {
        var statement = ChangeAccount(id: customer.id, status: status.rawValue, failedLogins: failedLogins)
        switch change {
        case .keep: break
        case .open(let lock): statement.open = lock
        case .lift(let by, let reason):
            statement.lift = true
            statement.liftedBy = by
            statement.liftReason = reason
        }
        guard let (version, now) = try await connection.rows(statement, logger: logger).first else {
            throw Problem.notFound("Customer \(customer.id.uuidString.lowercased())")
        }
        var after = customer
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

struct FetchCustomerForUpdate: PostgresPreparedStatement {
    static let sql = "SELECT \(Customer.columns) FROM \(Customer.from) WHERE c.id = $1 FOR UPDATE OF c"
    typealias Row = Customer
    let id: UUID
    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 1)
        b.append(id)
        return b
    }
    func decodeRow(_ row: PostgresRow) throws -> Customer { try Customer.decode(row) }
}

/// Status, failed-login count, version and lock record of one account in one statement.
struct ChangeAccount: PostgresPreparedStatement {
    static let sql = """
        WITH opened AS (
            INSERT INTO account_locks (id, customer_id, cause, reason, failed_attempts, locked_by, until)
            SELECT $4, $1, $5, $6, $7, $8, $9 WHERE $4::uuid IS NOT NULL
            RETURNING id
        ), lifted AS (
            UPDATE account_locks SET lifted_at = now(), lifted_by = $11, lift_reason = $12
            WHERE customer_id = $1 AND lifted_at IS NULL AND $10
            RETURNING id
        )
        -- data-modifying CTEs run exactly once whether referenced or not
        UPDATE customers SET status = $2, failed_logins = $3, version = version + 1, updated_at = now(),
            deleted_at = CASE WHEN $2 = 'deleted' THEN now() ELSE NULL END
        WHERE id = $1
        RETURNING version, now()
        """
    typealias Row = (Int64, Date)
    let id: UUID
    let status: String
    let failedLogins: Int
    var open: AccountLock?
    var lift = false
    var liftedBy: UUID?
    var liftReason: String?

    init(id: UUID, status: String, failedLogins: Int) {
        self.id = id
        self.status = status
        self.failedLogins = failedLogins
    }

    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 12)
        b.append(id)
        b.append(status)
        b.append(Int32(failedLogins))
        b.append(open?.id)
        b.append(open?.cause.rawValue)
        b.append(open?.reason)
        b.append(open?.failedAttempts.map(Int32.init))
        b.append(open?.lockedBy)
        b.append(open?.until)
        b.append(lift)
        b.append(liftedBy)
        b.append(liftReason)
        return b
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// One page of the account list, ordered by (email, id), keyset-paginated after the account
/// `afterID` (its email is looked up, so cursors never carry PII); every filter is a bound
/// parameter of the one prepared statement, all index-friendly.
struct ListCustomers: PostgresPreparedStatement {
    static let sql = """
        SELECT \(Customer.columns) FROM \(Customer.from)
        WHERE c.status = ANY($1::text[])
          AND c.email >= $2 AND c.email < $3
          AND (c.email, c.id) > (coalesce((SELECT a.email FROM customers a WHERE a.id = $4), ''), $4::uuid)
        ORDER BY c.email, c.id
        LIMIT $5
        """
    typealias Row = Customer
    let statuses: [String]
    let prefix: String
    let afterID: UUID
    let limit: Int

    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 5)
        b.append(statuses)
        b.append(prefix)
        b.append(prefix + "\u{10FFFF}")
        b.append(afterID)
        b.append(Int64(limit))
        return b
    }
    func decodeRow(_ row: PostgresRow) throws -> Customer { try Customer.decode(row) }
}

/// The account list for roles that see PII masked: ordered by id, never by a masked field.
struct ListCustomersByID: PostgresPreparedStatement {
    static let sql = """
        SELECT \(Customer.columns) FROM \(Customer.from)
        WHERE c.status = ANY($1::text[]) AND c.id > $2
        ORDER BY c.id
        LIMIT $3
        """
    typealias Row = Customer
    let statuses: [String]
    let afterID: UUID
    let limit: Int

    func makeBindings() throws -> PostgresBindings {
        var b = PostgresBindings(capacity: 3)
        b.append(statuses)
        b.append(afterID)
        b.append(Int64(limit))
        return b
    }
    func decodeRow(_ row: PostgresRow) throws -> Customer { try Customer.decode(row) }
}
