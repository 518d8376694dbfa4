import BackofficeConsole
import BackofficePlatform
import Crypto
import Foundation

/// The signing secrets of webhook endpoints: `whsec_` and the base64url of HMAC-SHA256 of the
/// endpoint's id and the secret's generation, under a key of the server's (derived from
/// `BACKOFFICE_SECOND_FACTOR_KEY`). The database keeps only the generation, so a secret exists in
/// the one response that shows it (made or rolled) and nowhere else; a database read alone cannot
/// sign a delivery. Changing the server's key changes every endpoint's secret: roll them all then.
package struct WebhookEndpointSecrets: Sendable {
    private let key: SymmetricKey

    package init(key: SymmetricKey) { self.key = key }

    /// The secrets of a server with `secondFactorKey` (nil, a test server: a key of this process).
    package init(secondFactorKey: SecondFactorKey?) {
        self.init(key: secondFactorKey?.derived(for: "webhook-endpoint-secrets") ?? SymmetricKey(size: .bits256))
    }

    /// The secret of `endpoint`'s `generation`.
    package func secret(for endpoint: UUID, generation: Int) -> String {
        let code = HMAC<SHA256>.authenticationCode(
            for: Data("webhook-endpoint:\(endpoint.text):\(generation)".utf8), using: key)
        return "whsec_" + Base64URL.encode(Data(code))
    }

    /// The secrets that sign a delivery to `endpoint` at `now`: the current generation's, and the
    /// previous one's while a roll's overlap lasts (a receiver accepts either during its switch).
    package func signing(_ endpoint: WebhookEndpoint, at now: Date) -> [String] {
        var secrets = [secret(for: endpoint.id, generation: endpoint.secretGeneration)]
        if let until = endpoint.previousSecretUntil, now < until, endpoint.secretGeneration > 1 {
            secrets.append(secret(for: endpoint.id, generation: endpoint.secretGeneration - 1))
        }
        return secrets
    }
}
