import Foundation

/// Entity tags of versioned resources (`"3"` for version 3) and the If-Match check.
enum EntityTag {
    static func of(_ version: Int64) -> String { "\"\(version)\"" }

    /// Throws `versionMismatch` (412 at the edge) unless `ifMatch`, when sent, names `version`
    /// (quoted, bare or weak) or is `*`.
    static func check(_ ifMatch: String?, version: Int64) throws {
        guard let ifMatch else { return }
        let tag = ifMatch.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
        if tag != "*" && tag != of(version) && tag != String(version) {
            throw DomainError.versionMismatch(current: of(version))
        }
    }
}
