import Foundation

@testable import BackofficePlatform

#if canImport(Glibc)
    import Glibc
#endif

/// Runs blocking work (a raw socket's reads) on a thread of its own, never on the concurrency
/// pool the server under test runs on (two cores: two blocked threads would stall it).
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// A TCP connection to 127.0.0.1:`port` whose reads give up after `timeout` seconds.
func loopbackSocket(port: Int, timeout: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSetupError(description: "socket") }
    var wait = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        throw TestSetupError(description: "connect")
    }
    return fd
}

/// Sends raw bytes to 127.0.0.1:`port` and returns the whole answer (for requests the test
/// clients cannot make, such as a chunked body without Content-Length).
/// An answer that does not come within `timeout` seconds ends the exchange (what came so far is returned).
func rawHTTP(port: Int, _ request: [UInt8], timeout: Int = 60) throws -> String {
    let fd = try loopbackSocket(port: port, timeout: timeout)
    defer { close(fd) }
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { break }  // the server may answer 413 and close before reading everything
        sent += n
    }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        answer += buffer[0..<n]
        if let text = String(bytes: answer, encoding: .utf8), text.contains("\r\n\r\n"), text.contains("}") { break }
    }
    return String(decoding: answer, as: UTF8.self)
}
