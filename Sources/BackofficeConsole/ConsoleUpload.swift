import BackofficePlatform
import Foundation
import MultipartKit
import NIOCore

/// A file sent with a console form (`multipart/form-data`, parsed by MultipartKit).
package struct ConsoleUpload: Sendable {
    package let fileName: String
    package let bytes: [UInt8]

    /// One part of a multipart body: its field name, its file name when it is a file, its bytes.
    package struct Part {
        package let name: String?
        package let fileName: String?
        package let bytes: [UInt8]
    }

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    package static func boundary(contentType: String) -> String? {
        guard contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        return parameter("boundary", in: contentType)
    }

    /// The parts of a multipart body; a body MultipartKit cannot parse is a refused form (400).
    package static func parts(_ body: ByteBuffer, boundary: String) throws -> [Part] {
        let parser = MultipartParser(boundary: boundary)
        var parts: [Part] = []
        var disposition = ""
        var bytes: [UInt8] = []
        parser.onHeader = { field, value in
            if field.lowercased() == "content-disposition" { disposition = value }
        }
        parser.onBody = { chunk in bytes += chunk.readableBytesView }
        parser.onPartComplete = {
            parts.append(
                Part(
                    name: parameter("name", in: disposition), fileName: parameter("filename", in: disposition),
                    bytes: bytes))
            (disposition, bytes) = ("", [])
        }
        do { try parser.execute(body) } catch {
            throw DomainError.invalid([
                FieldIssue(field: "file", code: "malformed_form", message: "the form could not be read: send it again")
            ])
        }
        return parts
    }

    /// A `key="value"` parameter of a header value (Content-Type, Content-Disposition); `key` in lower case.
    private static func parameter(_ key: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == key {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }
}
