import BackofficePlatform

/// Every table and column that holds a customer's data, and what the purge and the data export do
/// with each: the one declared list both read (the purge's audit event names what it erased and
/// kept from it; the export's sections are checked against it). `CustomerDataRegistryTests` fails
/// when the schema has a column naming a customer (`customer_id`, `reporter_id`, a foreign key to
/// `customers`, a customer's `author_id`) or a personal column (`email`, `display_name`,
/// `shipping_*`, `content_text`, …) that this list does not name, or names one that is gone.
package enum CustomerDataRegistry {
    /// What `maintenance purge` does with a holding.
    package enum Purge: Sendable, Equatable {
        /// The rows go with the account (the account row itself, or a foreign key `ON DELETE CASCADE`).
        case deletedWithAccount
        /// The purge deletes the rows itself (no foreign key: the rows are not the account's own).
        case deleted
        /// The rows stay with these columns erased (a placeholder, or NULL), for the reason given.
        case erased(columns: [String], keeping: String)
        /// The rows stay as they are, for the reason given (nothing in them names the person once the
        /// account is gone, or the law needs them).
        case kept(String)
    }

    /// One table's hold on a customer: the column naming the customer, the personal columns beside it.
    package struct Holding: Sendable, Equatable {
        package let table: String
        /// The column whose value is the customer's id (`id` for `customers`).
        package let column: String
        /// Other columns with personal data.
        package let personal: [String]
        package let purge: Purge
        /// The data export's section that carries it, or why none does.
        package let export: Export
    }

    /// Where a holding goes in the customer's data export.
    package enum Export: Sendable, Equatable {
        case section(String)
        case notExported(String)
    }

    package static let holdings: [Holding] = [
        Holding(
            table: "customers", column: "id", personal: ["email", "display_name"], purge: .deletedWithAccount,
            export: .section("account")),
        Holding(
            table: "account_locks", column: "customer_id", personal: [], purge: .deletedWithAccount,
            export: .section("locks")),
        Holding(
            table: "login_attempts", column: "customer_id", personal: [], purge: .deletedWithAccount,
            export: .section("login_attempts")),
        Holding(
            table: "appeals", column: "customer_id", personal: [], purge: .deletedWithAccount,
            export: .section("appeals")),
        Holding(
            table: "health_profiles", column: "customer_id", personal: [], purge: .deletedWithAccount,
            export: .section("health_profile")),
        Holding(
            table: "health_profile_history", column: "customer_id", personal: [], purge: .deletedWithAccount,
            export: .section("health_profile")),
        Holding(
            table: "plan_requests", column: "customer_id", personal: ["goal"], purge: .deletedWithAccount,
            export: .section("plans")),
        Holding(
            table: "plans", column: "customer_id", personal: [], purge: .deletedWithAccount, export: .section("plans")),
        Holding(
            table: "orders", column: "customer_id", personal: ["shipping_name", "shipping_address"],
            purge: .erased(
                columns: ["shipping_name", "shipping_address"],
                keeping: "amounts, dates and lines: tax records"),
            export: .section("orders")),
        Holding(
            table: "subscriptions", column: "customer_id", personal: [],
            purge: .kept("subscriptions by id: their invoices rest on them"),
            export: .section("subscriptions")),
        Holding(
            table: "invoices", column: "customer_id", personal: [],
            purge: .kept("amounts and dates by id: accounting records"),
            export: .section("subscriptions")),
        Holding(
            table: "invoice_refunds", column: "customer_id", personal: [],
            purge: .kept("refunds by id: accounting records (their reasons are the staff's)"),
            export: .section("subscriptions")),
        Holding(
            table: "activity_events", column: "customer_id", personal: [],
            purge: .kept("activity by id: nothing names the person once the account is gone"),
            export: .section("activity")),
        Holding(
            table: "fitpoints_daily_earnings", column: "customer_id", personal: [],
            purge: .kept("points paid per day, by id: the ledger's earnings balance against it"),
            export: .section("daily_earnings")),
        Holding(
            table: "badge_awards", column: "customer_id", personal: [], purge: .kept("badges by id"),
            export: .section("badges")),
        Holding(
            table: "challenge_scores", column: "customer_id", personal: [],
            purge: .kept("scores by id: a settled challenge's payouts rest on them"),
            export: .section("challenge_scores")),
        Holding(
            table: "health_access_events", column: "customer_id", personal: [],
            purge: .kept("who read the data, when and why: the controller's record, hash-chained"),
            export: .section("health_profile_accesses")),
        Holding(
            table: "console_read_purposes", column: "customer_id", personal: [],
            purge: .kept("an operator's stated purpose for reading, by id, for the session it was given in"),
            export: .notExported("an operator's session state, not the customer's data")),
        Holding(
            table: "moderation_cases", column: "author_id", personal: ["content_text"],
            purge: .erased(
                columns: ["author_id", "content_text"],
                keeping: "the case and its decisions: the statements of reasons (DSA Art. 17, 24(5))"),
            export: .notExported("the app holds the author's posts; statements reach the author in the app")),
        Holding(
            table: "moderation_reports", column: "reporter_id", personal: [], purge: .deleted,
            export: .notExported("a report is about another customer's content")),
    ]

    /// What a purge erases, as its audit event names it: `table` (rows deleted) or `table.column`.
    package static var erased: [String] {
        holdings.flatMap { holding -> [String] in
            switch holding.purge {
            case .deletedWithAccount, .deleted: [holding.table]
            case .erased(let columns, _): columns.map { "\(holding.table).\($0)" }
            case .kept: []
            }
        }
    }

    /// What a purge keeps, and why.
    package static var kept: [String] {
        holdings.compactMap { holding in
            switch holding.purge {
            case .erased(_, let keeping): "\(holding.table) (\(keeping))"
            case .kept(let why): "\(holding.table) (\(why))"
            case .deletedWithAccount, .deleted: nil
            }
        }
    }
}
