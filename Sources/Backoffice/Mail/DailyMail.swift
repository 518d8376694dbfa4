import BackofficeConsole
import BackofficePlatform
import Foundation
import Logging
import ServiceLifecycle

extension QueuedMail.Kind {
    /// A shop's day before: orders, sales, refunds, what waits to be handled, goods low in stock.
    static let dailySummary: Self = "daily_summary"
    /// The appeals waiting for a decision.
    static let appealsWaiting: Self = "appeals_waiting"
}

/// Sends the day's mails about the day before (UTC), once per day: each shop's summary
/// (`SendDailySummaries`) and the appeals waiting (`SendAppealsWaiting`). Wakes every `interval`;
/// a day already sent is skipped (`daily_mails`), so any number of processes send a day's mails
/// once. Stops on graceful shutdown.
struct DailyMailService: Service {
    let database: Database
    let policies: PolicySet
    let interval: Duration

    func run() async throws {
        await repeatEvery(interval, logger: database.logger, failure: "the day's mails failed") { try await sendDue() }
    }

    /// Sends what is due about yesterday (UTC) and was not sent yet; how many mails were queued.
    @discardableResult
    func sendDue() async throws -> Int {
        let context = OperationContext.system("daily-mail", policies: policies)
        let summaries = try await database.runAsSystem(SendDailySummaries(), context: context)
        let appeals = try await database.runAsSystem(SendAppealsWaiting(), context: context)
        return summaries + appeals
    }
}

/// Each shop's day before (UTC), mailed to its people who want it (`daily_summary`): the orders
/// placed and their sales, the refunds, the orders waiting now to be accepted or shipped, the goods
/// low in stock. A shop with none of these gets no mail that day. The day's run is recorded once
/// (`daily_mails`, audited as `mail.daily_summary`), each mail with its own `mail.queued`; a day
/// already run does nothing. Answers how many mails were queued.
struct SendDailySummaries: AuditedOperation {
    static let action: Action = "mail.daily_summary"

    func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        let day = UTCDay(unit.now).advanced(by: -1)
        guard try await DailyMails.claim(.dailySummary, day: day, in: unit) else { return .unchanged(0) }
        let sales = try await SalesByShop(range: try ReportRange(from: day, through: day)).read(in: unit)
        let waiting = try await ShopWaiting.all(in: unit)
        var mails: [AuditRecord] = []
        for shop in sales {
            let now = waiting[shop.tenantID] ?? ShopWaiting()
            let figures = shop.figures
            guard figures.orders > 0 || figures.refunds > 0 || !now.isEmpty else { continue }
            let fields = [
                "shop": shop.name, "day": day.description, "orders": String(figures.orders),
                "sales": Money.dollars(figures.grossCents), "sales_fitpoints": String(figures.grossFitPoints),
                "refunds": String(figures.refunds), "refunded": Money.dollars(figures.refundedCents),
                "to_accept": String(now.toAccept), "to_ship": String(now.toShip), "low_stock": String(now.lowStock),
            ]
            mails += try await DailyMails.queue(.dailySummary, tenant: shop.tenantID, fields: fields, in: unit)
        }
        return try await DailyMails.record(.dailySummary, action: Self.action, day: day, mails: mails, in: unit)
    }
}

/// The appeals waiting for a decision, mailed once a day to the platform's people who want it
/// (`appeals_waiting`) when there are any: how many, and since when the oldest waits. Recorded as
/// `SendDailySummaries` records its day (`mail.appeals_waiting`).
struct SendAppealsWaiting: AuditedOperation {
    static let action: Action = "mail.appeals_waiting"

    func perform(in unit: UnitOfWork) async throws -> Audited<Int> {
        let day = UTCDay(unit.now).advanced(by: -1)
        guard try await DailyMails.claim(.appealsWaiting, day: day, in: unit) else { return .unchanged(0) }
        let found = try await unit.first("SELECT count(*), min(created_at) FROM appeals WHERE status = 'open'") {
            try $0.decode((Int64, Date?).self)
        }
        var mails: [AuditRecord] = []
        if let (count, oldest) = found, count > 0, let oldest {
            let fields = ["count": String(count), "oldest": oldest.ISO8601Format()]
            mails = try await DailyMails.queue(.appealsWaiting, tenant: platformTenantID, fields: fields, in: unit)
        }
        return try await DailyMails.record(.appealsWaiting, action: Self.action, day: day, mails: mails, in: unit)
    }
}

/// What waits in a shop now: orders to accept, orders to ship, active goods at 5 or fewer.
struct ShopWaiting {
    var toAccept: Int64 = 0
    var toShip: Int64 = 0
    var lowStock: Int64 = 0

    var isEmpty: Bool { toAccept == 0 && toShip == 0 && lowStock == 0 }

    /// Every shop's, by tenant (shops with nothing waiting are absent).
    static func all(in unit: UnitOfWork) async throws -> [UUID: ShopWaiting] {
        let rows = try await unit.all(
            """
            WITH orders_waiting AS (
                SELECT tenant_id, count(*) FILTER (WHERE status = 'paid') AS to_accept,
                    count(*) FILTER (WHERE status = 'accepted') AS to_ship
                FROM orders WHERE status IN ('paid', 'accepted') GROUP BY tenant_id),
            low AS (
                SELECT tenant_id, count(*) AS low_stock FROM goods WHERE status = 'active' AND stock <= 5
                GROUP BY tenant_id)
            SELECT coalesce(o.tenant_id, l.tenant_id), coalesce(o.to_accept, 0), coalesce(o.to_ship, 0),
                coalesce(l.low_stock, 0)
            FROM orders_waiting o FULL JOIN low l ON l.tenant_id = o.tenant_id
            """
        ) { try $0.decode((UUID, Int64, Int64, Int64).self) }
        return Dictionary(
            uniqueKeysWithValues: rows.map { ($0.0, ShopWaiting(toAccept: $0.1, toShip: $0.2, lowStock: $0.3)) })
    }
}

/// The day's run of a daily mail (`daily_mails`) and the mails it queues.
enum DailyMails {
    /// Takes `kind`'s run of `day`; false when it was taken (another process, or an earlier wake).
    static func claim(_ kind: QueuedMail.Kind, day: UTCDay, in unit: UnitOfWork) async throws -> Bool {
        try await unit.first(
            """
            INSERT INTO daily_mails (topic, day, sent_at, mails) VALUES (\(kind.rawValue), \(day.description)::date,
                \(unit.now), 0)
            ON CONFLICT (topic, day) DO NOTHING RETURNING 1
            """
        ) { try $0.decode(Int32.self) } != nil
    }

    /// `kind`'s mail with `fields` queued to each of its recipients in `tenant`; their audit events.
    static func queue(_ kind: QueuedMail.Kind, tenant: UUID, fields: [String: String], in unit: UnitOfWork)
        async throws -> [AuditRecord]
    {
        let recipients = try await unit.all(
            "SELECT operator_id, email FROM mail_recipients(\(tenant), \(kind.rawValue))"
        ) { try $0.decode((UUID, String).self) }
        var events: [AuditRecord] = []
        for (id, email) in recipients {
            let mail = QueuedMail(kind: kind, tenantID: tenant, recipient: email, operatorID: id, fields: fields)
            events.append(try await Outbox.queue(mail, in: unit).bySystem)
        }
        return events
    }

    /// The run's count recorded, and its audit event with the mails'.
    static func record(
        _ kind: QueuedMail.Kind, action: Action, day: UTCDay, mails: [AuditRecord], in unit: UnitOfWork
    ) async throws -> Audited<Int> {
        try await unit.execute(
            """
            UPDATE daily_mails SET mails = \(mails.count) WHERE topic = \(kind.rawValue) AND day = \
            \(day.description)::date
            """)
        struct Run: Encodable { let mails: Int }
        let event = AuditRecord(
            action: action, tenantID: platformTenantID, targetType: "day", targetID: day.description, reason: nil,
            before: nil, after: try AuditRecord.json(Run(mails: mails.count))
        ).bySystem
        return Audited(mails.count, event: event, more: mails)
    }
}
