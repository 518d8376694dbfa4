import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// A real SMTP server for a test (`ops/mail-sink.py`, aiosmtpd, run by `TestPython`): STARTTLS
/// required before AUTH, with a certificate made for this run (for `localhost`, trusted by the
/// client through `?ca=`), each accepted message a file.
final class MailSink: Sendable {
    let folder: URL
    let port: Int
    let pid: pid_t
    let certificate: String
    static let user = "backoffice"
    static let password = "mail-sink-password"

    /// The SMTP URL of this server, trusting its own certificate.
    var url: String {
        "smtp://\(Self.user):\(Self.password)@localhost:\(port)?ca=\(certificate)&from=backoffice@healthtrack.example"
    }
    var settings: SMTPSettings { get throws { try SMTPSettings(url: url) } }

    /// Starts one (on `port`, or any free one); fails the test when aiosmtpd cannot be installed.
    init(port: Int = 0, refuseAfter: Int? = nil, certificateFrom other: MailSink? = nil) throws {
        let python: String
        do { python = try TestPython.path.get() } catch { throw MailSinkFailure(description: "\(error)") }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mail-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let key: String
        if let other {
            (certificate, key) = (other.certificate, other.folder.appendingPathComponent("key.pem").path)
        } else {
            (certificate, key) = (
                folder.appendingPathComponent("cert.pem").path, folder.appendingPathComponent("key.pem").path
            )
            let made = try ChildProcess.run([
                "/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
                certificate, "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
            ])
            guard made.status == 0 else { throw MailSinkFailure(description: "openssl: \(made.output)") }
        }
        let log = folder.appendingPathComponent("sink.log").path
        var argv = [
            python, projectRoot.appendingPathComponent("ops/mail-sink.py").path, "--dir",
            folder.appendingPathComponent("mail").path,
            "--cert", certificate, "--key", key, "--port", String(port),
        ]
        if let refuseAfter { argv += ["--refuse-after", String(refuseAfter)] }
        pid = try ChildProcess.spawn(argv, outputPath: log)
        guard let found = readyPort(in: log) else {
            kill(pid, SIGKILL)
            throw MailSinkFailure(
                description: "the mail sink did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
            )
        }
        self.port = found
    }

    /// The messages accepted so far, oldest first, as written.
    func messages() throws -> [String] {
        let mail = folder.appendingPathComponent("mail")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: mail.path)) ?? []).filter {
            $0.hasSuffix(".eml")
        }.sorted()
        return try names.map { try String(contentsOf: mail.appendingPathComponent($0), encoding: .utf8) }
    }

    func stop() {
        kill(pid, SIGKILL)
        _ = ChildProcess.wait(pid)
    }

    deinit { kill(pid, SIGKILL) }
}

/// The port a test's server process announced in `log` with a line `ready PORT`, within 20 s; nil
/// when it did not.
func readyPort(in log: String) -> Int? {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }),
            let port = Int(line.dropFirst(6))
        {
            return port
        }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return nil
}

struct MailSinkFailure: Error, CustomStringConvertible {
    let description: String
}

extension String {
    /// A message's header `name`'s value (the first such line).
    func header(_ name: String) -> String? {
        split(separator: "\r\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
            .first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    /// The decoded parts of a message (`text/plain` then `text/html`, each base64 as the service writes them).
    var mailBodies: [String] {
        components(separatedBy: "Content-Transfer-Encoding: base64\r\n\r\n").dropFirst().map { part in
            let encoded = part.components(separatedBy: "\r\n--").first?.replacingOccurrences(of: "\r\n", with: "") ?? ""
            return String(decoding: Data(base64Encoded: encoded) ?? Data(), as: UTF8.self)
        }
    }
}
