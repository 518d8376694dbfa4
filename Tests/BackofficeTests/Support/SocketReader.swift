import Foundation
@testable import BackofficePlatform

#if canImport(Glibc)
    import Glibc
#endif

/// A client on a raw socket to 127.0.0.1:`port` that reads only when told (to play a slow reader).
final class SocketReader: @unchecked Sendable {  // used by one thread at a time
    let fd: Int32

    init(port: Int) throws { fd = try loopbackSocket(port: port, timeout: 60) }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw TestSetupError(description: "send") }
    }

    /// At least `count` bytes (fewer only if the server closes first).
    func read(atLeast count: Int) throws -> [UInt8] {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while answer.count < count {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return answer
    }

    /// Everything until the answer's closing chunk, or the server closes the connection (or stops sending for 60 s).
    func readToEnd() throws -> [UInt8] {
        var answer: [UInt8] = []
        while !answer.suffix(5).elementsEqual(Array("0\r\n\r\n".utf8)) {
            let more = try read(atLeast: 1)
            if more.isEmpty { break }
            answer += more
        }
        return answer
    }
}
