import BackofficeConsole
import BackofficePlatform
import Foundation

/// One email as the service sends it: plain text and HTML alternatives, UTF-8, from the
/// service's address to one recipient, under a stable `Message-ID` (a message sent again after
/// a crash carries the same id, so the receiver can tell it is the same message).
package struct MailMessage: Sendable, Equatable {
    package let messageID: String
    package let from: String
    package let to: String
    package let subject: String
    package let text: String
    package let html: String
    package let date: Date
    /// A notification's one-click unsubscribe address (RFC 8058): sent as `List-Unsubscribe` with
    /// `List-Unsubscribe-Post`, so a mail program offers it and may POST to it.
    package var unsubscribe: String?

    package init(messageID: String, from: String, to: String, subject: String, text: String, html: String, date: Date) {
        (self.messageID, self.from, self.to, self.subject, self.text, self.html, self.date) = (
            messageID, from, to, subject, text, html, date
        )
    }

    /// Refused: a header value with a line break (header injection), or an address that is not a
    /// plain mailbox (`Validation.isMailbox`: what `RCPT TO:<…>` and `To: <…>` carry as it is).
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    /// The message in RFC 5322 form with CRLF line ends: headers (a non-ASCII subject as an
    /// RFC 2047 encoded word), then `multipart/alternative` with both parts in base64.
    package func rendered() throws -> String {
        let headers = [
            ("From", from), ("To", to), ("Subject", subject), ("Message-ID", messageID),
            ("List-Unsubscribe", unsubscribe ?? ""),
        ]
        for (name, value) in headers {
            guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw Malformed(description: "\(name) holds a line break")
            }
        }
        for address in [from, to] where !Validation.isMailbox(address, singleLabel: true) {
            throw Malformed(description: "\(address) is not an email address")
        }
        let boundary = "=_healthtrack_" + messageID.filter { $0.isLetter || $0.isNumber }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        var lines = [
            "From: HealthTrack Back Office <\(from)>",
            "To: <\(to)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(formatter.string(from: date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
        ]
        if let unsubscribe {
            lines += ["List-Unsubscribe: <\(unsubscribe)>", "List-Unsubscribe-Post: List-Unsubscribe=One-Click"]
        }
        lines += [
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += ["--\(boundary)", "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
            lines += Self.base64Lines(body)
        }
        lines += ["--\(boundary)--", ""]
        return lines.joined(separator: "\r\n")
    }

    /// `text` as it may stand in a header: itself when printable ASCII, else `=?utf-8?B?…?=`.
    static func encodedWord(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E }) else { return text }
        return "=?utf-8?B?" + Data(text.utf8).base64EncodedString() + "?="
    }

    /// `text` (with CRLF line ends) in base64, 76 characters a line.
    static func base64Lines(_ text: String) -> [String] {
        let normalised = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let encoded = Data(normalised.utf8).base64EncodedString()
        return stride(from: 0, to: encoded.count, by: 76).map { start in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            return String(
                encoded[from..<(encoded.index(from, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
        }
    }
}
