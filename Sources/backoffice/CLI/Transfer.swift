import BackofficePlatform
import Foundation
import OpenAPIRuntime

/// Long transfers (exports, imports): streamed, so a file of any size never sits in memory, with
/// progress on stderr when it is a terminal and nothing on a pipe.
enum Transfer {
    /// Writes `body` to `file` (or stdout) as it arrives; with a file on a terminal, counts the
    /// lines written (`noun`: "events", "goods").
    static func download(_ body: HTTPBody, to file: String?, counting noun: String, skippingHeaderLine: Bool = false)
        async throws
    {
        let handle: FileHandle
        if let file {
            guard FileManager.default.createFile(atPath: file, contents: nil) else {
                throw CLIFailure.usage("cannot write \(file)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        } else {
            handle = FileHandle.standardOutput
        }
        let progress = file != nil && isatty(STDERR_FILENO) == 1
        var lines = skippingHeaderLine ? -1 : 0
        for try await chunk in body {
            handle.write(Data(chunk))
            if progress {
                lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
                FileHandle.standardError.write(Data("\rexported \(max(0, lines)) \(noun)".utf8))
            }
        }
        if progress { FileHandle.standardError.write(Data("\n".utf8)) }
        if file != nil { try handle.close() }
    }

    /// The file at `path` as a request body read in 256 KiB chunks; on a terminal, a progress bar
    /// on stderr as it is sent.
    static func upload(_ path: String) throws -> HTTPBody {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIFailure(message: "error: cannot read \(path)", exitCode: 64)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let progress = isatty(STDERR_FILENO) == 1 && size > 0
        let sent = Counter()
        let chunks = AsyncThrowingStream<ArraySlice<UInt8>, any Error> {
            guard let data = try handle.read(upToCount: 256 << 10), !data.isEmpty else {
                if progress {
                    FileHandle.standardError.write(
                        Data("\r\(bar(size, of: size)) sent; the service is working on it…\n".utf8))
                }
                try? handle.close()
                return nil
            }
            let total = sent.add(data.count)
            if progress { FileHandle.standardError.write(Data("\r\(bar(total, of: size)) sending \(path)".utf8)) }
            return ArraySlice(data)
        }
        return HTTPBody(chunks, length: .known(Int64(size)), iterationBehavior: .single)
    }

    /// `[█████·····]  50%`
    static func bar(_ done: Int, of total: Int, width: Int = 30) -> String {
        let filled = total > 0 ? min(width, done * width / total) : width
        let percent = total > 0 ? min(100, done * 100 / total) : 100
        return "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "] "
            + String(format: "%3d%%", percent)
    }

    /// Bytes sent so far (read and advanced by the one task the body is iterated on).
    private final class Counter: @unchecked Sendable {
        private var value = 0
        func add(_ count: Int) -> Int {
            value += count
            return value
        }
    }
}
