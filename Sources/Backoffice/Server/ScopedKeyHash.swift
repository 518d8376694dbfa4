import BackofficePlatform
import Crypto
import Foundation

extension Principal {
    /// A client's Idempotency-Key scoped to this principal (tenant and operator) and hashed, 32 hex
    /// digits: what is kept or sent on where the key itself must not be (a provider's key, a stored
    /// notice's).
    func scopedKeyHash(_ key: String) -> String {
        let scoped = "\(tenantID.text):\(operatorID?.text ?? "-"):\(key)"
        return hex(Array(SHA256.hash(data: Data(scoped.utf8)).prefix(16)))
    }
}
