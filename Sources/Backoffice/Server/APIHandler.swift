import BackofficeAPI
import BackofficePlatform
import Foundation
import OpenAPIRuntime

/// The generated `APIProtocol`, implemented per domain in the domain's `APIHandler+<Domain>.swift`
/// (`Accounts/APIHandler+Accounts.swift`, …): each handler parses the contract's input into one
/// use case, runs it with `read` or `change`, and maps the result to the contract's types.
/// Permissions, transactions, audit and idempotency are the runners' work. The stored properties
/// are what domains' handlers need from the server (the payment provider, webhook secrets,
/// invitation links): this is the composition root's type, not the platform's.
struct APIHandler: APIProtocol {
    let database: Database
    let policies: PolicySet
    /// The payment provider (`simulated` unless configured otherwise).
    var payments: any PaymentGateway = SimulatedPaymentGateway()
    /// Each provider's webhook secrets (several during a rotation), from configuration.
    var webhookSecrets: [String: [String]] = [:]
    /// Webhooks refused for their signature: counted, logged once a minute per address.
    let webhookRefusals = WebhookRefusals()
    /// The secrets of invitation links (from the server's key).
    var invitationLinks = InvitationLinks(secondFactorKey: nil)
    /// Where a partner's webhook endpoints may point, and how their hosts are resolved.
    var outbound = OutboundSettings()
    /// The signing secrets of webhook endpoints (from the server's key).
    var webhookEndpointSecrets = WebhookEndpointSecrets(secondFactorKey: nil)
    /// Signs the token endpoint's access tokens.
    var accessTokens = AccessTokens(issuer: "http://127.0.0.1", key: .init(size: .bits256))

    /// The operation context of the current request (set by `EdgeResponder`).
    func context() throws -> OperationContext { try OperationContext(try scope(), policies: policies) }

    /// The time the current API call shows states at: its scope's one reading of the clock (the
    /// scope is always there while a handler runs).
    var now: Date { RequestScope.current?.now ?? database.clock.now() }

    /// The current API call's scope (set by the edge and `OperationScopeMiddleware`).
    func scope() throws -> RequestScope {
        guard let scope = RequestScope.current else { throw DomainError.inconsistent("no API call is running") }
        return scope
    }

    /// Runs a read use case for the current request.
    func read<Q: Query>(_ query: Q) async throws -> Q.Output {
        try await database.read(query, context: try context())
    }

    /// A newest-first page of a list operation: the contract's `limit` and `cursor`, `query` made for
    /// the page's keyset and size (one more row than the page, to know whether another follows) and
    /// read, each row answered as `answer` makes it.
    func newestFirst<Q: Query, Row: NewestFirst, Item>(
        limit: Int?, cursor: String?, _ query: ((createdAt: Date, id: UUID)?, Int) -> Q,
        answer: (Row) throws -> Item
    ) async throws -> (items: [Item], nextCursor: String?) where Q.Output == [Row] {
        let (rows, next) = try await newestFirstPage(after: cursor, limit: try pageLimit(limit)) {
            try await read(query($0, $1))
        }
        return (try rows.map(answer), next)
    }

    /// A page of a list kept in id order, as `newestFirst` reads one: the contract's `limit` and
    /// `cursor`, `query` made for the id to start after and the page's size plus one.
    func idOrdered<Q: Query, Row: Identifiable, Item>(
        limit: Int?, cursor: String?, _ query: (UUID, Int) -> Q, answer: (Row) throws -> Item
    ) async throws -> (items: [Item], nextCursor: String?) where Q.Output == [Row], Row.ID == UUID {
        let (rows, next) = try await idOrderedPage(after: cursor, limit: try pageLimit(limit)) {
            try await read(query($0, $1))
        }
        return (try rows.map(answer), next)
    }

    /// A page of a table paged by id (`ListByID`), of one owner or of all, each row answered as `answer` says.
    func listedByID<Row: ListedByID & Identifiable, Item>(
        _ type: Row.Type, owner: UUID?, limit: Int?, cursor: String?, answer: (Row) throws -> Item
    ) async throws -> (items: [Item], nextCursor: String?) where Row.ID == UUID {
        try await idOrdered(
            limit: limit, cursor: cursor, { ListByID<Row>(owner: owner, afterID: $0, limit: $1) }, answer: answer)
    }

    /// The request's `Idempotency-Key` (nil without one, or outside a generated handler).
    var idempotencyKey: String? { (try? scope())?.idempotencyKey }

    /// Runs a change use case for the current request, once per `Idempotency-Key`: the key is
    /// fingerprinted with the contract's operation id (both from the request's `RequestScope`), the path's
    /// `id` of a change on a path resource, and `body`; `respond` shapes the body that is
    /// answered, stored and replayed.
    func change<Operation: AuditedChange, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?, status: Int = 200,
        respond: @escaping @Sendable (Operation.Output) throws -> Reply
    ) async throws -> Reply {
        try await change(operation, on: id, body: body) { output in
            StoredResponse(status: status, body: try respond(output))
        }.body
    }

    /// Like `change`, for a use case whose answer's status depends on its outcome (created or updated).
    func change<Operation: AuditedChange, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Reply>
    ) async throws -> StoredResponse<Reply> {
        try await Idempotency(database: database).run(
            operation, try idempotentCall(on: id, body: body), respond: respond)
    }

    /// The status this request's `Idempotency-Key` answered before, nil when it is new
    /// (`Idempotency.recordedStatus`).
    func recordedStatus(on id: UUID? = nil, body: (some Encodable & Sendable)?) async throws -> Int? {
        try await Idempotency(database: database).recordedStatus(try idempotentCall(on: id, body: body))
    }

    /// Like `change`, for a staged use case (the payment provider is called between its
    /// transactions; `Idempotency.runStaged`).
    func changeStaged<Operation: StagedOperation, Reply: Codable & Sendable>(
        _ operation: Operation, on id: UUID? = nil, body: (some Encodable & Sendable)?,
        respond: @escaping @Sendable (Operation.Output) throws -> StoredResponse<Reply>
    ) async throws -> StoredResponse<Reply> {
        try await Idempotency(database: database).runStaged(
            operation, try idempotentCall(on: id, body: body), respond: respond)
    }

    /// Like `change`, for an upload the edge held no transaction for while its body arrived
    /// (`x-streamed-body`): the change's transaction authenticates the token again in its first
    /// statement, so a token revoked or an operator disabled during the upload changes nothing.
    func changeAfterUpload<Operation: AuditedOperation, Reply: Codable & Sendable>(
        _ operation: Operation, body: some Encodable & Sendable,
        respond: @escaping @Sendable (Operation.Output) throws -> Reply
    ) async throws -> Reply {
        let (database, call) = (self.database, try idempotentCall(on: nil, body: body))
        return try await database.reauthenticatedTransaction(for: call.context) { context in
            let reauthenticated = IdempotentCall(
                key: call.key, request: call.request, operationID: call.operationID, context: context)
            return try await Idempotency(database: database).run(operation, reauthenticated) { output in
                StoredResponse(status: 200, body: try respond(output))
            }.body
        }
    }

    /// Runs a change use case of a public operation (no token, `Principal.anonymous`): no
    /// Idempotency-Key (an anonymous caller has no key space of its own); the use case
    /// deduplicates by what it receives.
    func publicChange<Operation: AuditedOperation>(_ operation: Operation) async throws -> Operation.Output {
        try await database.run(operation, context: try context())
    }

    /// The document of a generated request body (`input.body`): each request body in the contract has
    /// one media type (`application/json`; the OAuth endpoints' form), so the generator makes each a
    /// one-case enum `.json(Document)` or `.urlEncodedForm(Document)`, with no accessor (it writes
    /// those for responses only); the case's one reflected child is the document. An absent optional
    /// body, or another media type, is a 400.
    func json<Document>(_ body: (some Sendable)?, expected: String = "application/json") throws -> Document {
        guard let body, let document = Mirror(reflecting: body).children.first?.value as? Document else {
            throw Problem.malformed("expected \(expected)")
        }
        return document
    }

    /// What the runners take for the current request's change: its key, what the key is
    /// fingerprinted with, the contract's operation id and the context.
    private func idempotentCall<Body: Encodable & Sendable>(on id: UUID?, body: Body?) throws
        -> IdempotentCall<ChangeRequest<Body>>
    {
        let scope = try scope()
        guard let operationID = scope.operationID else {
            throw DomainError.inconsistent("a change ran outside a generated handler")
        }
        return IdempotentCall(
            key: scope.idempotencyKey, request: ChangeRequest(id: id, body: body), operationID: operationID,
            context: try OperationContext(scope, policies: policies))
    }
}

/// What a change's `Idempotency-Key` is fingerprinted with: the body, or for a change on a path
/// resource (`POST /v1/customers/{id}/lock`) the path's id and the body (`ActionRequest`).
private struct ChangeRequest<Body: Encodable & Sendable>: Encodable, Sendable {
    let id: UUID?
    let body: Body?

    func encode(to encoder: any Encoder) throws {
        if let id {
            try ActionRequest(id: id.text, body: body).encode(to: encoder)
        } else {
            try body.encode(to: encoder)
        }
    }
}

/// The request of a change on a path resource (`POST /v1/customers/{id}/lock`), as fingerprinted
/// for Idempotency-Key: the path's id and the body.
struct ActionRequest<Body: Encodable>: Encodable {
    let id: String
    let body: Body?
}
