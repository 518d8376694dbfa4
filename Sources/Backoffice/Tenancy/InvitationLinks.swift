import BackofficeConsole
import BackofficePlatform
import Crypto
import Foundation

/// The secrets of invitation links: HMAC-SHA256 of the invitation's id under a key of the
/// server's (derived from `BACKOFFICE_SECOND_FACTOR_KEY`). The database keeps only the secret's
/// SHA-256 and the outbox only the invitation's id, so the link exists in the message that
/// delivers it (or the one response a platform admin asked to show it in) and nowhere else;
/// a retry sends the same link.
package struct InvitationLinks: Sendable {
    private let key: SymmetricKey

    package init(key: SymmetricKey) { self.key = key }

    /// The links of a server with `secondFactorKey` (nil, a test server: a key of this process).
    package init(secondFactorKey: SecondFactorKey?) {
        self.init(key: secondFactorKey?.derived(for: "invitation-links") ?? SymmetricKey(size: .bits256))
    }

    /// The secret of `invitation`'s link.
    package func secret(for invitation: UUID) -> SessionSecret {
        let code = HMAC<SHA256>.authenticationCode(for: Data("invitation:\(invitation.text)".utf8), using: key)
        return SessionSecret(value: Base64URL.encode(Data(code)))
    }
}
