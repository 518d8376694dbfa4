import Foundation

/// The one form an email address is stored, looked up and counted in: compatibility-composed
/// (NFKC), then lower-cased by Swift, then composed again, with surrounding spaces trimmed. Every
/// place that writes an operator's email, finds an operator by email or keys a sign-in failure
/// by email calls `normalised`, so no two of them can disagree on what "the same email" is
/// (PostgreSQL's `lower()` follows the C library, which maps some letters, U+0130 `İ` among them,
/// otherwise than Swift does; the database compares normalised text exactly and never lowers it).
package enum EmailAddress {
    /// `text` in its normalised form: `normalised(normalised(x)) == normalised(x)` for every `x`.
    package static func normalised(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCompatibilityMapping
            .lowercased()
            .precomposedStringWithCompatibilityMapping
    }
}

/// An email address as the console and the API show it to someone who asked for mail to be sent
/// to it: the first letter of the local part, then an ellipsis, then the domain
/// (`a…@green-grocer.example`).
package enum MaskedEmail {
    package static func text(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@"), let first = email.first, email.startIndex != at else { return "…" }
        return "\(first)…\(email[at...])"
    }
}

extension Character {
    /// `0` to `9`, and no other digit.
    package var isASCIIDigit: Bool { isASCII && isNumber }
}
