import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import Synchronization

extension HTTPField.Name {
    /// Where a change's commit is in the primary's log (answered when a read replica is in use);
    /// a client that sends it back with a read is answered from data at least that new.
    package static let backofficeReadAfter = HTTPField.Name("Backoffice-Read-After")!
}

/// The outermost responder: gives every request an id (echoed as `X-Request-Id`), resolves the
/// client address (through trusted proxies only), enforces the body size limit, screens every
/// input string for NUL, and turns every error into problem+json. A `/v1` change runs in one
/// database transaction: leased and begun here, authenticated by its bearer token in the same
/// statement that makes it act for the principal (failures rate-limited per address), committed
/// only when the answer is a success. A read (GET) runs in a read session: authenticated the same
/// way, its reads each one statement, no transaction around them, on the read replica when the
/// contract marks it lag-tolerant and the replica is fit for it (`Database.readSession`).
/// Authorization happens per operation, against `policies/access.yaml`. The hot lists are answered
/// here, in the same read session and scope, by `HandEncodedLists`; everything else by `inner` (the
/// router and the generated API).
package struct EdgeResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == AppRequestContext {
    package typealias Context = AppRequestContext
    package let inner: Inner
    package let database: Database
    package let maxBodySize: Int
    package let maxBulkBodySize: Int
    package let bulkPaths: Set<String>
    package let clientAddress: ClientAddress
    package let throttle: AddressThrottle
    /// The credentials the throttle lets through from a limited address.
    package let knownCredentials: KnownCredentials
    /// The operations callable without a token, and the limit on public submissions.
    package let publicRoutes: ContractRoutes
    /// The reads a read replica may answer (`Database.readSession`).
    package let lagTolerantReads: ContractRoutes
    /// The changes that call another system (`StagedOperation`): authenticated, then run with no
    /// request transaction, each step in a transaction of its own.
    package let stagedChanges: ContractRoutes
    /// The uploads whose body the handler reads as it arrives (`StreamedBody`): never buffered
    /// here, and, like staged changes, run with no request transaction.
    package let streamedBodies: ContractRoutes
    package let submissionThrottle: AddressThrottle
    /// The hot lists: read with their plans, and answered here instead of by `inner` unless
    /// `answers` is false.
    package let hotLists: HandEncodedLists?
    /// The bulk uploads made in a signed-in session (a browser's, at `paths`) rather than with a
    /// token: read up to the bulk limit only from a session that `mayUpload`; from anyone else (no
    /// session, or one whose role may not upload), and from everyone when this is nil, up to the
    /// ordinary limit.
    package var sessionUploads: SessionUploads? = nil
    /// Verifies OAuth access tokens (JWTs) before the database is asked; without it only `bo_` tokens are taken.
    package var accessTokens: AccessTokenCheck? = nil

    /// Who acted for the access log: set before the handler runs, so a request that throws still logs its actor.
    private final class Acting: Sendable {
        private let value = Mutex<Principal?>(nil)
        package var principal: Principal? { value.withLock { $0 } }
        package func set(_ principal: Principal) { value.withLock { $0 = principal } }
    }

    /// The request's scope first (its id, the client's address, TLS), then `dispatch`; every
    /// failure a problem; the answer carries the request id and, over TLS, HSTS, and is logged.
    package func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        var context = context
        context.scope = RequestScope(
            requestID: RequestID.accept(request.headers[.xRequestID]),
            sourceIP: clientAddress.resolve(
                peer: context.remoteAddress?.ipAddress, forwardedFor: request.headers[.xForwardedFor]),
            secure: clientAddress.isTLS(
                peer: context.remoteAddress?.ipAddress, forwardedProto: request.headers[.xForwardedProto]),
            now: database.clock.now())
        context.logger[metadataKey: "request_id"] = .string(context.scope.requestID)
        let actor = Acting()
        var response: Response
        do {
            response = try await context.scope.serving { [context] in try await dispatch(request, context, actor) }
        } catch let refusal as Refusal {
            response = refusal.problem.response(requestID: context.scope.requestID)
            if let header = refusal.header { response.headers[header.name] = header.value }
        } catch {
            response = Problem.answering(error, logger: context.logger).response(requestID: context.scope.requestID)
        }
        response.headers[.xRequestID] = context.scope.requestID
        if context.scope.secure {
            // Over TLS, browsers are told to come back only over TLS (a year, subdomains too).
            response.headers[.strictTransportSecurity] = "max-age=31536000; includeSubDomains"
        }
        ServiceMetrics.answered(Int(response.status.code))
        logAccess(request, response.status, actor: actor.principal, since: started, logger: context.logger)
        return response
    }

    /// The steps in order: the body's limit, the token (before any body is read), the body read
    /// and screened; then the console and other routes, a public operation, or an authenticated one.
    private func dispatch(_ request: Request, _ context: Context, _ actor: Acting) async throws -> Response {
        var request = request
        let path = request.uri.path  // built anew by each call: read once
        let (limit, bulk) = try await bodyLimit(request, path: path, context)
        let api = Self.isAPI(path)
        let route = api ? publicRoutes.match(request.method, path) : nil
        // A body is read only from a caller that may send it: a /v1 change presents a well-formed
        // token first, and a bulk upload (32 MiB) one that authenticates.
        let secret =
            api && route == nil
            ? try await presentedToken(request, address: context.scope.address, logger: context.logger) : nil
        let streamed = secret != nil && streamedBodies.match(request.method, path) != nil
        if bulk, !streamed, let secret { try await authenticateBeforeBulkBody(secret, request, context) }
        let body = try await screen(&request, path: path, limit: limit, streamed: streamed)
        guard api else {
            return try await inner.respond(to: request, context: context).checkingRoute()
        }
        if let route {
            actor.set(.anonymous)
            return try await respondPublicly(request, body: body, context, route: route)
        }
        guard let secret else { throw refuse(request, address: context.scope.address, logger: context.logger) }
        return try await respondWithToken(request, context, secret: secret, path: path, streamed: streamed, actor)
    }

    /// The body's limit: the bulk limit for a bulk path (a session's upload only from a session that
    /// may upload), else the ordinary one; a declared length over it is refused at once (413).
    private func bodyLimit(_ request: Request, path: String, _ context: Context) async throws -> (Int, bulk: Bool) {
        var bulk = bulkPaths.contains(path)
        // A session's upload (a POST) may be large only from a session that may upload (looked up
        // for it alone); with no session uploads configured, none is.
        if let uploads = sessionUploads, uploads.paths.contains(path) {
            bulk = request.method == .post ? try await uploads.mayUpload(request, context) : false
        }
        let limit = bulk ? maxBulkBodySize : maxBodySize
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw Problem.payloadTooLarge
        }
        return (limit, bulk)
    }

    /// A bulk upload's token authenticates before its body is read (a token that authenticated
    /// lately is checked again by the request's own transaction: no second lease for it).
    private func authenticateBeforeBulkBody(_ secret: TokenSecret, _ request: Request, _ context: Context) async throws
    {
        if !knownCredentials.contains(secret.hash),
            try await database.readSession(tokenHash: secret.hash, { principal, _ in principal }) == nil
        {
            throw refuse(request, address: context.scope.address, logger: context.logger)
        }
    }

    /// The body read up to `limit` and screened for NUL (`InputScreen`); a streamed upload is
    /// screened and limited as its handler reads it, after authentication.
    private func screen(_ request: inout Request, path: String, limit: Int, streamed: Bool) async throws -> ByteBuffer {
        let body = streamed ? ByteBuffer() : try await request.collectBody(upTo: limit)
        if streamed { request.body = RequestBody(asyncSequence: StreamedBody(request.body, limit: limit)) }
        try InputScreen.check(path: path, query: request.uri.query, body: body)
        return body
    }

    /// An operation with a token, within the request's deadline: a read in a read session, a
    /// staged change or streamed upload authenticated with no transaction held, any other change
    /// in one transaction (committed on success, its position answered for read-your-writes).
    private func respondWithToken(
        _ request: Request, _ context: Context, secret: TokenSecret, path: String, streamed: Bool, _ actor: Acting
    ) async throws -> Response {
        let deadline =
            bulkPaths.contains(path) ? database.limits.bulkRequestDeadline : database.limits.requestDeadline
        let hotList = hotLists?.list(request.method, path)
        @Sendable func serve(_ principal: Principal?, _ transaction: RequestTransaction?) async throws -> Response {
            try await serveAuthenticated(
                request, context, principal: principal, transaction: transaction, secret: secret, hotList: hotList,
                actor)
        }
        return try await RequestDeadline.run(within: deadline, timers: database.limits.timers) {
            if request.method == .get || request.method == .head {
                // Routing for a read replica costs nothing without one.
                let replicated = database.replica != nil
                return try await database.readSession(
                    tokenHash: secret.hash, plans: HandEncodedLists.plans(hotList, query: request.uri.query),
                    lagTolerant: replicated && lagTolerantReads.match(.get, path) != nil,
                    readAfter: replicated ? request.headers[.backofficeReadAfter].flatMap { LSN($0) } : nil, serve)
            }
            if streamed || stagedChanges.match(request.method, path) != nil {
                // No transaction may wait on the other system's call: authenticated, then the connection goes back.
                return try await serve(
                    try await database.readSession(tokenHash: secret.hash) { principal, _ in principal }, nil)
            }
            let committed = CommittedPosition()
            var response = try await database.requestTransaction(tokenHash: secret.hash, committed: committed) {
                principal, transaction in
                let response = try await serve(principal, transaction)
                return (response, commit: response.status.code < 400)
            }
            if let lsn = committed.value { response.headers[.backofficeReadAfter] = lsn.description }
            return response
        }
    }

    /// The authenticated request (refused without a principal), its scope acting for the
    /// principal: a hot list answered here, anything else by `inner`.
    private func serveAuthenticated(
        _ request: Request, _ context: Context, principal: Principal?, transaction: RequestTransaction?,
        secret: TokenSecret, hotList: HandEncodedLists.List?, _ actor: Acting
    ) async throws -> Response {
        guard let principal else { throw refuse(request, address: context.scope.address, logger: context.logger) }
        guard principal.accepts(from: context.scope.address) else {
            context.logger.notice(
                "token used from outside its networks",
                metadata: [
                    "source_ip": .string(context.scope.address),
                    "token_id": .string(principal.tokenID?.text ?? ""),
                ])
            throw Refusal(problem: .addressNotAllowed)
        }
        knownCredentials.remember(secret.hash)
        actor.set(principal)
        var context = context
        context.scope = context.scope.acting(for: principal, transaction: transaction, tokenHash: secret.hash)
        if let hotLists, hotLists.answers, let hotList {
            return try await context.scope.serving { [context] in
                try await hotLists.respond(hotList, to: request, context: context, logger: context.logger)
            }
        }
        return try await forward(request, context)
    }

    /// `inner` answers the request (the router and the generated API), in the request's scope.
    private func forward(_ request: Request, _ context: Context) async throws -> Response {
        try await context.scope.serving { [inner] in
            try await inner.respond(to: request, context: context).checkingRoute()
        }
    }

    /// One line per request (at `info`, with the request id the logger carries): method, path
    /// (never the query string, which may hold an email prefix), status, duration, and who
    /// acted — operator, token, tenant and role — once authenticated. Never a credential.
    private func logAccess(
        _ request: Request, _ status: HTTPResponse.Status, actor: Principal?, since started: ContinuousClock.Instant,
        logger: Logger
    ) {
        guard logger.logLevel <= .info else { return }
        let elapsed = ContinuousClock.now - started
        var metadata: Logger.Metadata = [
            "method": .string(request.method.rawValue), "path": .string(request.uri.path),
            "status": .stringConvertible(status.code),
            "duration_ms": .string(elapsed.millisecondsText),
        ]
        if let actor {
            metadata["role"] = .string(actor.role)
            metadata["tenant_id"] = .string(actor.tenantID.text)
            if let operatorID = actor.operatorID { metadata["actor"] = .string(operatorID.text) }
            if let tokenID = actor.tokenID { metadata["token_id"] = .string(tokenID.text) }
        }
        logger.info("request", metadata: metadata)
    }

    /// A public operation (no token; one presented is ignored): runs in a transaction acting for
    /// `Principal.anonymous`, committed only on success. A rate-limited route counts every
    /// submission against the address and refuses it with 429 and `Retry-After` over the limit.
    private func respondPublicly(
        _ request: Request, body: ByteBuffer, _ context: Context, route: ContractRoutes.Route
    ) async throws -> Response {
        let address = context.scope.address
        // A client that authenticates itself (the OAuth endpoints) is held to the failed-authentication
        // limit like a bearer token: an address over it is refused, and each 401 counts.
        if let wait = throttle.retryAfter(address) {
            throw limited(
                address, wait: wait, "authentication rate-limited", .tooManyFailedAuthentications(retryAfter: wait),
                logger: context.logger)
        }
        if route.rateLimited, let wait = submissionThrottle.admit(ClientAddress.limitKey(address)) {
            throw limited(
                address, wait: wait, "public submissions rate-limited", .tooManySubmissions(retryAfter: wait),
                logger: context.logger)
        }
        var context = context
        context.scope.rawBody = Array(body.readableBytesView)
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic ") {
            context.scope.clientAuthorization = header
        }
        if stagedChanges.match(request.method, request.uri.path) != nil {
            // Checked before any lease (a webhook's signature), then each step in a transaction of its own.
            context.scope = context.scope.acting(for: .anonymous)
            return try await forward(request, context)
        }
        let response = try await database.publicTransaction { [context] transaction in
            var context = context
            context.scope = context.scope.acting(for: .anonymous, transaction: transaction)
            let response = try await forward(request, context)
            return (response, commit: response.status.code < 400)
        }
        if response.status.code == 401 {
            throttle.record(address)
            ServiceMetrics.authenticationFailures.increment()
        }
        return response
    }

    /// A refusal before any handler runs, with any header besides `Retry-After` (which the
    /// problem carries) that says what to do (RFC 6750).
    private struct Refusal: Error {
        package let problem: Problem
        package var header: HTTPField? = nil
    }

    /// An address over one of its limits: counted, logged, 429 with `Retry-After`.
    private func limited(_ address: String, wait: Int, _ message: Logger.Message, _ problem: Problem, logger: Logger)
        -> Refusal
    {
        ServiceMetrics.rateLimited.increment()
        logger.warning(message, metadata: ["source_ip": .string(address), "retry_after": .stringConvertible(wait)])
        return Refusal(problem: problem)
    }

    /// The request's well-formed bearer token. An address over the failure limit of
    /// `policies/security.yaml` is refused with 429 and `Retry-After` without a lookup, unless it
    /// sends a token that authenticated lately (`KnownCredentials`): one bad script does not lock
    /// the working clients of its host out. A missing or malformed token is refused (401) without
    /// touching the database.
    private func presentedToken(_ request: Request, address: String, logger: Logger) async throws -> TokenSecret {
        let token = Self.bearer(request.headers[.authorization]).map(TokenSecret.init(value:))
        if let wait = throttle.retryAfter(address),
            !(token.map {
                ($0.isWellFormed || AccessTokens.looksLikeJWT($0.value)) && knownCredentials.contains($0.hash)
            } ?? false)
        {
            throw limited(
                address, wait: wait, "authentication rate-limited", .tooManyFailedAuthentications(retryAfter: wait),
                logger: logger)
        }
        guard let token else { throw refuse(request, address: address, logger: logger) }
        if !token.isWellFormed, try await accessTokens?.accepts(token.value, at: database.clock.now()) != true {
            throw refuse(request, address: address, logger: logger)
        }
        return token
    }

    /// A failed authentication: counted against the address, logged without the token, 401 with
    /// `WWW-Authenticate: Bearer`.
    private func refuse(_ request: Request, address: String, logger: Logger) -> Refusal {
        throttle.record(address)
        ServiceMetrics.authenticationFailures.increment()
        logger.notice(
            "authentication failed",
            metadata: [
                "source_ip": .string(address),
                "credential": .string(request.headers[.authorization] == nil ? "missing" : "refused"),
            ])
        return Refusal(
            problem: .unauthenticated, header: HTTPField(name: .wwwAuthenticate, value: #"Bearer realm="backoffice""#))
    }

    /// Whether `path` is the contract's: `/v1/…`, and the OAuth endpoints (`/oauth/…`).
    private static func isAPI(_ path: String) -> Bool { path.hasPrefix("/v1/") || path.hasPrefix("/oauth/") }

    package static func bearer(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    package init(
        inner: Inner, database: Database, maxBodySize: Int, maxBulkBodySize: Int, bulkPaths: Set<String>,
        clientAddress: ClientAddress, throttle: AddressThrottle, knownCredentials: KnownCredentials,
        publicRoutes: ContractRoutes, lagTolerantReads: ContractRoutes, stagedChanges: ContractRoutes,
        streamedBodies: ContractRoutes, submissionThrottle: AddressThrottle, hotLists: HandEncodedLists?,
        sessionUploads: SessionUploads? = nil
    ) {
        (
            self.inner, self.database, self.maxBodySize, self.maxBulkBodySize, self.bulkPaths, self.clientAddress,
            self.throttle, self.knownCredentials, self.publicRoutes, self.lagTolerantReads, self.stagedChanges,
            self.streamedBodies, self.submissionThrottle, self.hotLists, self.sessionUploads
        ) = (
            inner, database, maxBodySize, maxBulkBodySize, bulkPaths, clientAddress, throttle, knownCredentials,
            publicRoutes, lagTolerantReads, stagedChanges, streamedBodies, submissionThrottle, hotLists, sessionUploads
        )
    }
}

/// The edge's problems: the ones every answer outside the generated handlers is made of.
extension Problem {
    /// What the client is told about `error` at the edge: a `Problem` or `DomainError` as it
    /// describes itself, Hummingbird's own HTTP errors as problems, anything else a logged 500
    /// that reveals nothing.
    package static func answering(_ error: any Error, logger: Logger) -> Problem {
        if let problem = Problem.describing(error) { return problem }
        switch error {
        case is NIOTooManyBytesError: return .payloadTooLarge  // a chunked body over the limit
        case let error as HTTPError:
            switch error.status {
            case .contentTooLarge: return .payloadTooLarge
            case .notFound:
                return Problem(status: 404, code: "not_found", title: "Not found", detail: "No such endpoint.")
            case .methodNotAllowed:
                return Problem(status: 405, code: "method_not_allowed", title: "Method not allowed", detail: error.body)
            default:
                return Problem(
                    status: error.status.code, code: "http_\(error.status.code)", title: error.status.reasonPhrase,
                    detail: error.body)
            }
        default:
            logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
    }

    /// The problem as a Hummingbird response: `application/problem+json`, `Retry-After` when it says when to retry.
    package func response(requestID: String) -> Response {
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let wait = retryAfter { headers[.retryAfter] = String(wait) }
        return Response(
            status: .init(code: status), headers: headers,
            body: .init(byteBuffer: ByteBuffer(data: body(requestID: requestID))))
    }
}

extension Response {
    /// The router's bare 404 for an unknown path, as a problem.
    fileprivate func checkingRoute() throws -> Response {
        if status == .notFound && headers[.contentType] == nil { throw HTTPError(.notFound) }
        return self
    }
}

extension RequestScope {
    /// The address the edge's limits count under (the client's, or "unknown").
    fileprivate var address: String { sourceIP ?? "unknown" }
}

extension HTTPField.Name {
    package static let xRequestID = Self("X-Request-Id")!
    package static let xForwardedFor = Self("X-Forwarded-For")!
    package static let xForwardedProto = Self("X-Forwarded-Proto")!
    package static let strictTransportSecurity = Self("Strict-Transport-Security")!
}

extension Duration {
    /// The duration in whole microseconds as milliseconds with three decimals (`3.214`, truncated), as the
    /// access log writes it (without Foundation's formatter, which costs more than the rest of the line).
    package var millisecondsText: String {
        let micros = components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// Where signed-in sessions upload bulk files, and who among them may: `EdgeResponder.sessionUploads`.
package struct SessionUploads: Sendable {
    /// The upload pages' paths (`/console/goods/import`), besides the token-authenticated `bulkPaths`.
    package let paths: Set<String>
    /// Whether the request presents a live session whose role may upload.
    package let mayUpload: @Sendable (Request, AppRequestContext) async throws -> Bool

    package init(
        paths: Set<String>, mayUpload: @escaping @Sendable (Request, AppRequestContext) async throws -> Bool
    ) {
        (self.paths, self.mayUpload) = (paths, mayUpload)
    }
}
