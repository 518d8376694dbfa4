import Foundation

/// What a client sees of every failure: RFC 9457 `application/problem+json` with a stable
/// snake_case `code`. Domain code throws `DomainError`; only the HTTP edge makes `Problem`s
/// (`Problem.init(_:)` maps every domain case, in this one place).
package struct Problem: Error, Sendable, Equatable {
    package let status: Int
    package let code: String
    package let title: String
    package let detail: String?
    package var errors: [FieldIssue] = []
    package var currentState: String?
    /// Seconds after which the same request may succeed (`Retry-After`), for failures that pass.
    package var retryAfter: Int?
    /// How to authenticate (`WWW-Authenticate`), for a 401 whose scheme is not the bearer token's.
    package var wwwAuthenticate: String?

    package init(
        status: Int, code: String, title: String, detail: String? = nil, errors: [FieldIssue] = [],
        currentState: String? = nil,
        retryAfter: Int? = nil
    ) {
        (self.retryAfter, self.status, self.code, self.title, self.detail, self.errors, self.currentState) = (
            retryAfter, status, code, title, detail, errors, currentState
        )
    }

    package static func malformed(_ detail: String) -> Problem {
        Problem(status: 400, code: "malformed_request", title: "Malformed request", detail: detail)
    }
    package static let unauthenticated = Problem(
        status: 401, code: "unauthenticated", title: "Unauthenticated",
        detail: "Send a valid, unexpired, unrevoked token as 'Authorization: Bearer bo_…'.")
    package static func tooManyFailedAuthentications(retryAfter seconds: Int) -> Problem {
        tooMany("failed_authentications", "requests from this address failed to authenticate", retryAfter: seconds)
    }
    package static func tooManySubmissions(retryAfter seconds: Int) -> Problem {
        tooMany("submissions", "submissions from this address", retryAfter: seconds)
    }
    /// 429 `too_many_<what>`: `happened` too often from one address, with when to try again.
    private static func tooMany(_ what: String, _ happened: String, retryAfter seconds: Int) -> Problem {
        let words = what.replacingOccurrences(of: "_", with: " ")
        return Problem(
            status: 429, code: "too_many_\(what)", title: "Too many \(words)",
            detail: "Too many \(happened); try again in \(seconds) s.", retryAfter: seconds)
    }
    /// A token bound to source networks, presented from outside them.
    package static let addressNotAllowed = Problem(
        status: 403, code: "address_not_allowed", title: "Forbidden",
        detail: "This token is not accepted from your address (its allowed_addresses).")
    package static func forbidden(_ action: Action) -> Problem {
        Problem(
            status: 403, code: "forbidden", title: "Forbidden",
            detail: "Your role may not perform '\(action.rawValue)'.")
    }
    package static func piiMasked(_ field: String) -> Problem {
        Problem(
            status: 403, code: "pii_masked", title: "Forbidden",
            detail: "Your role sees '\(field)' masked: it may not filter or sort by it.",
            errors: [FieldIssue(field: field, code: "pii_masked", message: "is masked for your role")])
    }
    package static func notFound(_ what: String) -> Problem {
        Problem(
            status: 404, code: "not_found", title: "Not found",
            detail: "\(what) does not exist or is not visible to you.")
    }
    package static func invalidTransition(_ detail: String, current: String) -> Problem {
        Problem(
            status: 409, code: "invalid_transition", title: "Invalid transition", detail: detail, currentState: current)
    }
    package static func conflict(_ code: String, _ detail: String) -> Problem {
        Problem(status: 409, code: code, title: "Conflict", detail: detail)
    }
    package static let idempotencyKeyReused = Problem(
        status: 409, code: "idempotency_key_reused", title: "Idempotency key reused",
        detail: "This Idempotency-Key was used with a different request.")
    package static func preconditionFailed(current: String, changedBy: String? = nil, at: Date? = nil) -> Problem {
        let who = changedBy.map { who in
            " It was changed by \(who)" + (at.map { " at \($0.formatted(.iso8601))" } ?? "") + "."
        }
        return Problem(
            status: 412, code: "version_mismatch", title: "Precondition failed",
            detail: "If-Match does not match the current version; the current ETag is \(current)." + (who ?? ""))
    }
    package static let payloadTooLarge = Problem(
        status: 413, code: "payload_too_large", title: "Payload too large",
        detail: "The request body exceeds the limit.")
    package static func invalid(_ errors: [FieldIssue]) -> Problem {
        Problem(
            status: 422, code: "validation_failed", title: "Validation failed",
            detail: errors.map { "\($0.field): \($0.message)" }.joined(separator: "; "), errors: errors)
    }
    package static let unavailable = Problem(
        status: 503, code: "service_unavailable", title: "Service unavailable",
        detail: "The database is not reachable or busy; nothing was changed. Send the request again later.",
        retryAfter: 2)
    package static let internalError = Problem(
        status: 500, code: "internal_error", title: "Internal error",
        detail: "The request failed; see the server log for its request id.")

    /// The codes that are OAuth 2.0 errors (RFC 6749 §5.2): such a problem also carries `error` and
    /// `error_description`, as an OAuth client reads them.
    package static let oauthErrors: Set<String> = [
        "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
        "invalid_scope",
    ]

    /// The problem+json document, compact.
    package func body(requestID: String?) -> Data {
        struct Document: Encodable {
            let type: String, title: String, status: Int, code: String
            let detail: String?
            let current_state: String?
            let request_id: String?
            let errors: [FieldIssue]?
            let error: String?
            let error_description: String?
        }
        let oauth = Self.oauthErrors.contains(code)
        let doc = Document(
            type: "https://healthtrack.example/problems/\(code)", title: title, status: status, code: code,
            detail: detail, current_state: currentState, request_id: requestID, errors: errors.isEmpty ? nil : errors,
            error: oauth ? code : nil, error_description: oauth ? detail : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do { return try encoder.encode(doc) } catch {
            // Strings and integers always encode; should that ever fail, the answer still says what it is.
            return Data(
                #"""
                {"code":"internal_error","status":500,"title":"Internal error",\#
                "type":"https://healthtrack.example/problems/internal_error"}
                """#
                .utf8)
        }
    }
}

extension Problem {
    /// The problem+json of a domain error: the one mapping from domain words to HTTP statuses.
    package init(_ error: DomainError) {
        switch error {
        case .notFound(let what): self = .notFound(what)
        case .invalid(let issues): self = .invalid(issues)
        case .unprocessable(let code, let detail, let issues):
            self = Problem(status: 422, code: code, title: "Unprocessable", detail: detail, errors: issues)
        case .forbidden(let action): self = .forbidden(action)
        case .forbiddenTarget(_, let code, let detail):
            self = Problem(status: 403, code: code, title: "Forbidden", detail: detail)
        case .refused:
            self = Problem(status: 403, code: "forbidden", title: "Forbidden", detail: "Refused by the database.")
        case .refusedBecause(let reason):
            self = Problem(status: 403, code: "forbidden", title: "Forbidden", detail: reason)
        case .piiMasked(let field): self = .piiMasked(field)
        case .invalidTransition(let detail, let current): self = .invalidTransition(detail, current: current)
        case .conflict(let code, let detail): self = .conflict(code, detail)
        case .outdated(let code, let detail, let issues):
            self = Problem(status: 409, code: code, title: "Conflict", detail: detail, errors: issues)
        case .versionMismatch(let current, let who, let at):
            self = .preconditionFailed(current: current, changedBy: who, at: at)
        case .idempotencyKeyReused: self = .idempotencyKeyReused
        case .unauthenticated: self = .unauthenticated
        case .unavailable: self = .unavailable
        case .contention:
            self = Problem(
                status: 503, code: "transaction_conflict", title: "Try again",
                detail:
                    """
                    A concurrent change conflicted with this one; nothing was changed. Send the request again \
                    (with the same Idempotency-Key).
                    """,
                retryAfter: 1)
        case .timedOut:
            self = Problem(
                status: 503, code: "statement_timeout", title: "Try again",
                detail:
                    """
                    The database did not finish in time (a statement waited too long); nothing was changed. Send \
                    the request again.
                    """,
                retryAfter: 2)
        case .preconditionRequired:
            self = Problem(
                status: 428, code: "precondition_required", title: "Precondition required",
                detail: "Send If-Match with the ETag of the version you are changing (read it with GET).")
        case .inconsistent: self = .internalError
        }
    }

    /// The problem for an error the edge knows how to describe (a `Problem`, a `DomainError` or a
    /// domain's `DomainRefusal`), nil otherwise.
    package static func describing(_ error: any Error) -> Problem? {
        switch error {
        case let problem as Problem: problem
        case let domain as DomainError: Problem(domain)
        case let refusal as any DomainRefusal: refusal.problem
        default: nil
        }
    }
}
