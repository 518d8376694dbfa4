import Foundation

/// What can go wrong in a use case, in words every domain shares. Domain code throws these, or a
/// refusal of its own (`DomainRefusal`); the HTTP edge turns each case into its problem+json in
/// one place (`Problem.init(_:)`), and the CLI's server commands into an exit code.
package enum DomainError: Error, Sendable, Equatable {
    /// The resource does not exist or row-level security hides it (`what` names it: "Customer …").
    case notFound(String)
    /// Input that breaks a rule, field by field.
    case invalid([FieldIssue])
    /// The principal's role may not perform the action.
    case forbidden(Action)
    /// The role may perform the action, but not on this resource (`detail` says why; `code`
    /// names the refusal, `forbidden` unless more is to be said).
    case forbiddenTarget(Action, code: String = "forbidden", detail: String)
    /// The database refused the statement to the service role (row-level security, privileges).
    case refused
    /// A definer function refused the statement and said why (its `HINT`): a reason for a person,
    /// never a value.
    case refusedBecause(String)
    /// The principal's role sees `field` masked and may not filter or sort by it.
    case piiMasked(field: String)
    /// Input that is well-formed but breaks a named rule (`code`, snake_case, e.g.
    /// `notice_period_too_short`), with the fields concerned.
    case unprocessable(code: String, detail: String, issues: [FieldIssue])
    /// The move is not allowed from the resource's `current` state.
    case invalidTransition(String, current: String)
    /// The change conflicts with what is stored (`code` is stable, snake_case).
    case conflict(code: String, detail: String)
    /// The request named values that are no longer the stored ones (`code`, e.g. `price_changed`);
    /// each issue names a field and carries the stored value in `current`.
    case outdated(code: String, detail: String, issues: [FieldIssue])
    /// `If-Match` names an older version than `current` (an entity tag); `changedBy` and `at` say
    /// who made the current version and when, where the resource records it.
    case versionMismatch(current: String, changedBy: String? = nil, at: Date? = nil)
    /// The same Idempotency-Key came with a different request.
    case idempotencyKeyReused
    /// The request's credential does not (or no longer) identify a principal.
    case unauthenticated
    /// The database cannot be reached, or no pooled connection came in time.
    case unavailable
    /// A statement ran past the statement timeout (waiting on a lock included) and was cancelled:
    /// its transaction changed nothing, and the same request may be sent again.
    case timedOut
    /// The database gave up on the transaction to let a concurrent one through (deadlock,
    /// serialization failure): nothing was changed, and the same request may be sent again.
    case contention
    /// The change needs `If-Match` (a versioned resource updated without naming its version).
    case preconditionRequired
    /// A stored row or state the code cannot read (a bug or a damaged row); never detailed to clients.
    case inconsistent(String)

    /// 422 `validation_failed` for one field.
    package static func invalid(_ field: String, _ code: String, _ message: String) -> DomainError {
        .invalid([FieldIssue(field: field, code: code, message: message)])
    }
}
