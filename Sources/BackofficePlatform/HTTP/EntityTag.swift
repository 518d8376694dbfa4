import Crypto
import Foundation

/// Entity tags of versioned resources (`"3"` for version 3) and the If-Match check.
package enum EntityTag {
    package static func of(_ version: Int64) -> String { "\"\(version)\"" }

    /// Throws `versionMismatch` (412 at the edge) unless `ifMatch`, when sent, names `version`
    /// (quoted, bare or weak) or is `*`.
    package static func check(_ ifMatch: String?, version: Int64) throws {
        guard let ifMatch else { return }
        let tag = ifMatch.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
        if tag != "*" && tag != of(version) && tag != String(version) {
            throw DomainError.versionMismatch(current: of(version))
        }
    }

    /// A strong entity tag over what a read answered (`parts`): the same parts, the same tag.
    package static func digest(_ kind: String, _ parts: [String]) -> String {
        "\"\(kind)-" + hex(SHA256.hash(data: Data(parts.joined(separator: ",").utf8)).prefix(12)) + "\""
    }

    /// Whether an `If-None-Match` header names `etag` (strong or weak) or is `*`.
    package static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains {
            let tag = $0.trimmingCharacters(in: .whitespaces)
            return tag == etag || tag == "W/" + etag || tag == "*"
        }
    }
}
