import BackofficePlatform
import Foundation

/// System messages' rules (`policies/messages.yaml`), read and digested with the other policies.
package struct MessagesPolicy: DomainPolicy {
    /// How long before its window a maintenance notice must be published.
    package let maintenanceNoticeHours: Int

    package static let file = "messages.yaml"

    package static func files(in directory: URL) -> [String] { [file] }

    package static func parse(_ texts: [String: String], directory: String) throws -> MessagesPolicy {
        let document = try PolicyDocument(texts, file, directory: directory)
        return MessagesPolicy(
            maintenanceNoticeHours: try document.integer("maintenance", "notice_period_hours", 0...8760))
    }
}

extension PolicySet {
    /// System messages' rules.
    package var messages: MessagesPolicy { self[MessagesPolicy.self] }
}
