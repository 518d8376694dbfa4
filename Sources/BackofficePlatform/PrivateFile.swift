import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files and folders that hold secrets: created private to the owner (0600 / 0700) from their
/// first byte, never readable by others even for a moment.
package enum PrivateFile {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Creates `path` with `contents`, mode 0600; refuses when it exists.
    package static func create(_ path: String, contents: Data) throws {
        try write(path, contents: contents, flags: O_WRONLY | O_CREAT | O_EXCL)
    }

    /// Writes `path` (created or truncated) with mode 0600, also when it existed with a wider mode.
    package static func replace(_ path: String, contents: Data) throws {
        try write(path, contents: contents, flags: O_WRONLY | O_CREAT | O_TRUNC)
    }

    /// Creates the folder (and missing parents) with mode 0700; an existing folder is narrowed to 0700.
    package static func directory(_ path: String) throws {
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path && !FileManager.default.fileExists(atPath: parent) {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        guard chmod(path, 0o700) == 0 else {
            throw Failure(description: "cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
    }

    private static func write(_ path: String, contents: Data, flags: Int32) throws {
        let fd = open(path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw Failure(description: "cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
        let written = contents.withUnsafeBytes { buffer in
            buffer.baseAddress.map { Glibc.write(fd, $0, buffer.count) } ?? 0
        }
        guard written == contents.count else {
            throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
