import Foundation

/// The OpenAPI document the server and client are generated from, as served at `GET /openapi.yaml`.
public enum OpenAPIDocument {
    /// The document's bytes (bundled as a resource of this module).
    public static let yaml: Data? = Bundle.module.url(forResource: "openapi", withExtension: "yaml").flatMap {
        try? Data(contentsOf: $0)
    }
}
