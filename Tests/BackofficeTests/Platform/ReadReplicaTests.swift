import Foundation
import Logging
import PostgresNIO
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Read replica routing")
struct ReadReplicaTests {
    /// A replica whose routing is decided from its last check, never by connecting. Its default
    /// `maxLag` is an hour, so a busy machine cannot age a check out mid-test; the test of a
    /// check's age passes `.zero`.
    func replica(maxLag: Duration = .seconds(3600)) throws -> ReadReplica {
        let client = PostgresClient(
            configuration: try DatabaseURL("postgres://backoffice_app@127.0.0.1:1/none").clientConfiguration())
        return ReadReplica(client: client, maxLag: maxLag, logger: Logger(label: "test"))
    }

    @Test("a log position parses from and prints as PostgreSQL writes it; anything else is refused")
    func positions() throws {
        let lsn = try #require(LSN("16/B374D848"))
        #expect(lsn.value == 0x16_B374_D848)
        #expect(lsn.description == "16/B374D848")
        #expect(LSN("0/0")?.value == 0)
        #expect(LSN("FFFFFFFF/FFFFFFFF")?.value == .max)
        for bad in ["", "16", "16/", "/1", "g/1", "123456789/0", "1/2/3", "1 /2"] { #expect(LSN(bad) == nil, "\(bad)") }
        #expect(try #require(LSN("1/0")) > #require(LSN("0/FFFFFFFF")))
    }

    @Test(
        """
        a commit whose position could not be read (its connection lost) keeps that client's reads on the primary \
        until a check begun after it places it at the primary's flushed position, then until the replica has \
        replayed that; other clients' reads are not moved
        """
    )
    func unknownPosition() throws {
        let replica = try replica()
        let alice = Array("alice".utf8), bob = Array("bob".utf8)
        replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
        let before = ContinuousClock.now
        replica.wroteAtUnknownPosition(token: alice)
        #expect(replica.route(token: alice, readAfter: nil) == .primary(because: "read_your_writes"))
        #expect(replica.route(token: bob, readAfter: nil) == .replica)
        replica.placeUnknownFences(checkStarted: before, flushed: LSN(150))
        #expect(
            replica.route(token: alice, readAfter: nil) == .primary(because: "read_your_writes"),
            "a check begun before the commit says nothing of it")
        replica.placeUnknownFences(checkStarted: .now, flushed: LSN(200))
        replica.mark(up: true, replayed: LSN(199), lagBytes: 0, lagSeconds: 0)
        #expect(replica.route(token: alice, readAfter: nil) == .primary(because: "read_your_writes"))
        replica.mark(up: true, replayed: LSN(200), lagBytes: 0, lagSeconds: 0)
        #expect(replica.route(token: alice, readAfter: nil) == .replica, "replayed past where it was placed")
    }

    @Test("reads go to the replica only when it is up, not lagging, and has replayed the client's own last change")
    func routing() throws {
        let replica = try replica()
        let alice = Array("alice".utf8), bob = Array("bob".utf8)
        #expect(replica.route(token: alice, readAfter: nil) == .primary(because: "down"), "never checked")

        replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
        #expect(replica.route(token: alice, readAfter: nil) == .replica)

        replica.wrote(token: alice, at: LSN(150))
        #expect(replica.route(token: alice, readAfter: nil) == .primary(because: "read_your_writes"))
        #expect(replica.route(token: bob, readAfter: nil) == .replica, "another client's reads tolerate the lag")
        #expect(
            replica.route(token: bob, readAfter: LSN(120)) == .primary(because: "read_your_writes"),
            "unless it names a newer position")
        #expect(replica.route(token: bob, readAfter: LSN(90)) == .replica)

        replica.mark(up: true, replayed: LSN(150), lagBytes: 0, lagSeconds: 0)
        #expect(replica.route(token: alice, readAfter: nil) == .replica, "replayed: the client's own change is there")
        replica.wrote(token: alice, at: LSN(140))
        #expect(
            replica.route(token: alice, readAfter: nil) == .replica,
            "a change the replica already has costs no primary read")

        replica.mark(up: true, replayed: LSN(150), lagBytes: 4096, lagSeconds: 3600)
        #expect(replica.route(token: bob, readAfter: nil) == .primary(because: "lagging"))
        replica.mark(up: true, replayed: LSN(160), lagBytes: 0, lagSeconds: 0)
        replica.failed()
        #expect(
            replica.route(token: bob, readAfter: nil) == .primary(because: "down"),
            "a failed read takes it out until the next check")
    }

    @Test(
        """
        a credential the primary refused lately reads on the primary (which refuses it); a replica not checked \
        within the lag is not used
        """
    )
    func refusedCredentials() throws {
        let replica = try replica()
        let alice = Array("alice".utf8), bob = Array("bob".utf8)
        replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0, refused: [alice])
        #expect(replica.route(token: alice, readAfter: nil) == .primary(because: "credential_refused"))
        #expect(replica.route(token: bob, readAfter: nil) == .replica)
        replica.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
        #expect(
            replica.route(token: alice, readAfter: nil) == .replica, "out of the window: the replica has replayed it")
        let unchecked = try self.replica(maxLag: .zero)  // its last check is always older than the lag
        unchecked.mark(up: true, replayed: LSN(100), lagBytes: 0, lagSeconds: 0)
        #expect(unchecked.route(token: bob, readAfter: nil) == .primary(because: "unchecked"))
    }

    @Test("the primary names the tokens revoked and the tokens of operators disabled within the window, and no others")
    func recentlyRefusedCredentials() async throws {
        try await TestEnvironment.with { env in
            let partner = env.fixture.partners[0]
            let (revoked, disabled, kept) = (env.fixture.tokens[.auditor]!, partner.staffToken, partner.adminToken)
            try await env.asOwner(
                "UPDATE tokens SET revoked_at = now() WHERE secret_hash = sha256('\(revoked)'::bytea)")
            try await env.asOwner(
                """
                UPDATE operators SET status = 'disabled', disabled_at = now()
                    WHERE id = (SELECT operator_id FROM tokens WHERE secret_hash = sha256('\(disabled)'::bytea))
                """)
            try await env.asOwner(
                """
                UPDATE tokens SET revoked_at = now() - interval '1 hour' WHERE secret_hash = \
                sha256('\(env.fixture.tokens[.appService]!)'::bytea)
                """
            )
            let refused = try await env.database.client.withConnection { connection in
                var hashes: Set<[UInt8]> = []
                let rows = try await connection.query(
                    "SELECT secret_hash FROM recently_refused_credentials(interval '30 seconds')", logger: testLogger)
                for try await hash in rows.decode(ByteBuffer.self) { hashes.insert(Array(hash.readableBytesView)) }
                return hashes
            }
            #expect(
                refused == [TokenSecret(value: revoked).hash, TokenSecret(value: disabled).hash],
                "not \(kept.prefix(6))…, nor a token revoked an hour ago")
        }
    }

    @Test(
        """
        a change run in its own transactions (a staged step) with a request's token fences that token's replica \
        reads, as a request transaction does
        """
    )
    func ownTransactionsFence() async throws {
        try await TestEnvironment.with { env in
            let replica = try replica()
            replica.mark(up: true, replayed: LSN(1), lagBytes: 0, lagSeconds: 0)
            let database = Database(client: env.database.client, logger: testLogger, clock: env.clock, replica: replica)
            let (token, other) = (Array("request token".utf8), Array("another".utf8))
            let context = OperationContext(
                principal: env.fixture.principals[.appService]!, requestID: "fence", sourceIP: nil,
                policies: env.policies, tokenHash: token)
            #expect(replica.route(token: token, readAfter: nil) == .replica)
            _ = try await database.run(
                SyncCustomer(id: UUID(), email: "fence@example.com", displayName: "Fence"), context: context)
            #expect(
                replica.route(token: token, readAfter: nil) == .primary(because: "read_your_writes"),
                "its own change: read from the primary")
            #expect(replica.route(token: other, readAfter: nil) == .replica)
        }
    }
}
