/// A refusal a domain names in its own words, beside the shared `DomainError`: the domain
/// declares the type and the problem+json it answers, so the platform maps it without knowing the
/// domain (the edge and the CLI read `problem`; the console shows it on its error page).
package protocol DomainRefusal: Error, Sendable {
    /// The answer: status, stable `code`, title and detail (never a secret or a stored value).
    var problem: Problem { get }
}
