import Backoffice
import BackofficePlatform
import Foundation

/// Saved logins (`backoffice login`), the way `gh auth login` and kubectl contexts keep them: a
/// service URL and token per named profile, in a file private to the user (0600 in a 0700 folder):
/// `$BACKOFFICE_CONFIG`, else `$XDG_CONFIG_HOME/backoffice/config.json`, else
/// `~/.config/backoffice/config.json`. Flags and environment variables win over a profile.
struct Profiles: Codable {
    struct Profile: Codable, Equatable {
        var url: String
        var token: String
    }

    var current: String?
    var profiles: [String: Profile] = [:]

    static var file: URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["BACKOFFICE_CONFIG"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        return base.appendingPathComponent("backoffice").appendingPathComponent("config.json")
    }

    static func load() -> Profiles {
        guard let data = FileManager.default.contents(atPath: file.path) else { return Profiles() }
        return (try? JSONDecoder().decode(Profiles.self, from: data)) ?? Profiles()
    }

    func save() throws {
        try PrivateFile.directory(Self.file.deletingLastPathComponent().path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try PrivateFile.replace(Self.file.path, contents: try encoder.encode(self))
    }

    /// The profile to use: `name` (from `--profile` or `BACKOFFICE_PROFILE`), else the current one.
    func selected(_ name: String?) -> Profile? {
        guard let name = name ?? current else { return nil }
        return profiles[name]
    }
}
