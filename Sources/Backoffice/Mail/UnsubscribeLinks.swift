import BackofficeConsole
import BackofficePlatform
import Crypto
import Foundation

/// The unsubscribe links of notification mails. A link does one thing: it turns one topic off for
/// one operator, without signing in. It carries the operator, the topic and a key, the HMAC-SHA256
/// of `unsubscribe:<operator>:<topic>` under a key of the server's (derived from
/// `BACKOFFICE_SECOND_FACTOR_KEY`), so it cannot be made for another operator or topic; it is
/// stored nowhere (the outbox keeps the operator and the kind) and works as long as that key.
package struct UnsubscribeLinks: Sendable {
    private let key: SymmetricKey

    package init(key: SymmetricKey) { self.key = key }

    /// The links of a server with `secondFactorKey`; without one (a test server), a key of this
    /// process, `fallback`, which the outbox's delivery and the console must share.
    package init(secondFactorKey: SecondFactorKey?, fallback: SymmetricKey) {
        self.init(key: secondFactorKey?.derived(for: "unsubscribe-links") ?? fallback)
    }

    /// The console path that turns `topic` off for `operatorID`.
    package func path(operatorID: UUID, topic: String) -> String {
        let key = Base64URL.encode(code(operatorID, topic))
        return "/console/unsubscribe?operator=\(operatorID.text)&topic=\(topic)&key=\(key)"
    }

    /// Whether `key` is the link's key for `operatorID` and `topic` (compared in constant time).
    package func verifies(operatorID: UUID, topic: String, key: String) -> Bool {
        guard let given = Base64URL.decode(key) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            given, authenticating: message(operatorID, topic), using: self.key)
    }

    private func code(_ operatorID: UUID, _ topic: String) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: message(operatorID, topic), using: key))
    }

    private func message(_ operatorID: UUID, _ topic: String) -> Data {
        Data("unsubscribe:\(operatorID.text):\(topic)".utf8)
    }
}
