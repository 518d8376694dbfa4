import Foundation
import NIOCore
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Clocks give instants PostgreSQL stores exactly")
struct WallClockTests {
    /// `date` stored as timestamptz and read back, as postgres-nio encodes and decodes it.
    func roundTrip(_ date: Date) throws -> Date {
        var buffer = ByteBuffer()
        date.encode(into: &buffer, context: .default)
        return try Date(from: &buffer, type: .timestamptz, format: .binary, context: .default)
    }

    @Test(
        """
        an instant from a clock, stored and read back, is never later than itself (a message published now never \
        reads back as scheduled)
        """
    )
    func neverLaterAfterStoring() throws {
        var generator = SystemRandomNumberGenerator()
        var rawLater = 0
        for _ in 0..<10_000 {
            let instant = Date(timeIntervalSinceReferenceDate: Double.random(in: 8e8...9e8, using: &generator))
            if try roundTrip(instant) > instant { rawLater += 1 }
            let clocked = instant.atDatabasePrecision
            let stored = try roundTrip(clocked)
            #expect(stored <= clocked)
            #expect(clocked.timeIntervalSince(stored) < 0.000_002, "at most a microsecond apart")
        }
        #expect(rawLater > 0, "a raw Date does come back later sometimes: the case the clocks exist to avoid")
    }
}

@Suite("One clock: every time a use case writes and returns is the unit of work's now")
struct OneClockTests {
    @Test("with the clock two days ahead of the database, each written time is the clock's, not PostgreSQL's now()")
    func writtenTimesFollowTheClock() async throws {
        try await TestEnvironment.with { env in
            env.clock.advance(by: 2 * 86_400)
            let now = env.clock.now()
            let manager = env.context(.backendManager)
            let customer = try await env.customer()
            #expect(customer.createdAt == now && customer.updatedAt == now)

            let locked = try await env.database.run(
                TransitionAccount(customerID: customer.id, move: .lock, reason: "clock"), context: manager)
            #expect(locked.updatedAt == now && locked.lock?.lockedAt == now)
            let appeal = try await env.database.run(
                FileAppeal(customerID: customer.id, message: "please"), context: env.context(.appService))
            #expect(appeal.createdAt == now)
            env.clock.advance(by: 60)
            let later = env.clock.now()
            let resolved = try await env.database.run(
                ResolveAppeal(appealID: appeal.id, decision: .lift, reason: "ok"), context: manager)
            #expect(resolved.resolvedAt == later)
            let reread = try await env.database.read(GetCustomerAccount(id: customer.id), context: manager)
            #expect(reread.updatedAt == later, "the lift's update")

            let (_, balance) = try await env.database.run(
                AdjustFitPoints(customerID: customer.id, points: 5, reason: "clock"), context: manager)
            #expect(balance.updatedAt == later, "a wallet's time is its latest transfer's")

            let admin = env.context(.platformAdmin)
            let tenant = try await env.database.run(CreateTenant(slug: "clock-shop", name: "Clock"), context: admin)
            let staff = try await env.database.run(
                CreateOperator(email: "s@clock.example", role: .partnerStaff, tenantID: tenant.id), context: admin)
            #expect(tenant.createdAt == later && staff.createdAt == later)
            let (token, _) = try await env.database.run(
                CreateToken(operatorID: staff.id, name: "t", expiresInHours: 3), context: admin)
            #expect(token.createdAt == later && token.expiresAt == later.addingTimeInterval(3 * 3600))
            let revoked = try await env.database.run(RevokeToken(tokenID: token.id), context: admin)
            #expect(revoked.revokedAt == later)
            let disabled = try await env.database.run(
                DisableOperator(operatorID: staff.id, reason: "clock", ifMatch: nil), context: admin)
            #expect(disabled.disabledAt == later)

            let message = try await env.database.run(
                CreateMessage(title: "Clock", body: "Times", severity: .info), context: manager)
            #expect(message.createdAt == later && message.updatedAt == later)
        }
    }
}
