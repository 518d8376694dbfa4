import Foundation

/// The demo's tables (staple foods, plain foods, recipes, articles), kept as JSON in `Data/` beside
/// this code: what the demo says, apart from how it is made.
enum DemoData {
    /// `Data/<name>.json`, decoded.
    /// - Throws: when the file is missing from the bundle or does not decode (a defect of the build).
    static func load<T: Decodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Data") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Data/\(name).json"])
        }
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }
}
