import BackofficeConsole
import BackofficePlatform
import Foundation

/// Rewrites HTML so that only an allow-list of elements and attributes remains: what experts write
/// reaches the app as inert markup.
///
/// Guarantees, whatever the input:
/// - every `<` of the output opens or closes an element of `elements`, with only that element's
///   attributes of `attributes`, each value double-quoted and escaped; every other `<` is `&lt;`;
/// - the content of `dropped` elements (script, style, iframe, svg, …) is removed with them; other
///   elements outside the list are removed and their text kept;
/// - a link's `href` is `http:`, `https:`, `mailto:` or a `#fragment`, an image's `src` is `https:`,
///   checked after entities, control characters and white space are taken out (`jav&#x09;ascript:`
///   is refused); a refused URL drops its attribute;
/// - every link gets `rel="noopener nofollow ugc"`;
/// - elements are balanced: a stray end tag is dropped, open elements are closed at the end;
/// - elements nest at most `maxDepth` deep (a deeper one is removed, its text kept), so no reader's
///   parser meets a document deeper than that;
/// - comments, doctypes and processing instructions are removed;
/// - the work is linear in the input: one pass, no backtracking, no recursion, an end tag finds its
///   element in constant time (a count per open element's name).
package enum HTMLSanitizer {
    /// The elements kept, with the attributes each may carry.
    package static let attributes: [String: Set<String>] = [
        "p": [], "br": [], "hr": [], "h1": [], "h2": [], "h3": [], "h4": [], "h5": [], "h6": [],
        "blockquote": [], "ul": [], "ol": ["start"], "li": [], "pre": [], "code": ["class"], "em": [],
        "strong": [], "del": [], "s": [], "a": ["href", "title", "rel"], "img": ["src", "alt", "title"],
        "table": [], "thead": [], "tbody": [], "tr": [], "th": ["align"], "td": ["align"],
    ]
    /// Elements removed together with everything inside them.
    static let dropped: Set<String> = [
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript", "noembed",
        "noframes", "template", "textarea", "title", "xmp", "svg", "math", "select", "plaintext", "head",
    ]
    static let void: Set<String> = ["br", "hr", "img"]
    /// How deep elements may nest.
    static let maxDepth = 64

    /// The sanitised form of `html`.
    package static func sanitize(_ html: String) -> String {
        var scanner = Scanner(Array(html.unicodeScalars))
        var output = Output()
        while let token = scanner.next() {
            switch token {
            case .text(let text): output.text(text)
            case .start(let name, let attributes): output.start(name, attributes)
            case .end(let name): output.end(name)
            }
        }
        output.closeAll()
        return output.html
    }

    /// What the output holds so far and the elements still open.
    private struct Output {
        var html = ""
        var open: [String] = []
        /// How many of each name `open` holds.
        var openCounts: [String: Int] = [:]
        /// Set inside a dropped element: its name and how deep it nests in itself.
        var dropping: (name: String, depth: Int)?

        mutating func text(_ text: String) {
            guard dropping == nil else { return }
            html += HTMLSanitizer.escapeText(text)
        }

        mutating func start(_ name: String, _ attributes: [(String, String)]) {
            if let current = dropping {
                if current.name == name { dropping = (name, current.depth + 1) }
                return
            }
            if HTMLSanitizer.dropped.contains(name) {
                dropping = (name, 1)
                return
            }
            guard let allowed = HTMLSanitizer.attributes[name],
                HTMLSanitizer.void.contains(name) || open.count < HTMLSanitizer.maxDepth
            else { return }
            var kept: [(String, String)] = []
            for (key, value) in attributes where allowed.contains(key) && !kept.contains(where: { $0.0 == key }) {
                guard key != "rel", let value = HTMLSanitizer.attribute(key, value, of: name) else { continue }
                kept.append((key, value))
            }
            if name == "a" { kept.append(("rel", "noopener nofollow ugc")) }
            if name == "img" {
                // An image without a safe source shows nothing: dropped. One without a description
                // is marked decorative (`alt=""`), so a screen reader does not read its address.
                guard kept.contains(where: { $0.0 == "src" }) else { return }
                if !kept.contains(where: { $0.0 == "alt" }) { kept.append(("alt", "")) }
            }
            html += "<" + name
            for (key, value) in kept { html += " \(key)=\"\(HTMLSanitizer.escapeAttribute(value))\"" }
            html += ">"
            if !HTMLSanitizer.void.contains(name) {
                open.append(name)
                openCounts[name, default: 0] += 1
            }
        }

        mutating func end(_ name: String) {
            if let current = dropping {
                if current.name == name { dropping = current.depth > 1 ? (name, current.depth - 1) : nil }
                return
            }
            // A stray end tag costs one look-up; a matching one closes what it pops.
            guard openCounts[name, default: 0] > 0 else { return }
            while let element = open.popLast() {
                html += "</\(element)>"
                openCounts[element, default: 0] -= 1
                if element == name { break }
            }
        }

        mutating func closeAll() {
            for element in open.reversed() { html += "</\(element)>" }
            open.removeAll()
            openCounts.removeAll()
        }
    }

    /// The value kept for an allowed attribute, nil to drop it.
    static func attribute(_ key: String, _ raw: String, of element: String) -> String? {
        let value = decodeEntities(raw)
        switch (element, key) {
        case ("a", "href"): return safeURL(value, schemes: ["http", "https", "mailto"], fragment: true)
        case ("img", "src"): return safeURL(value, schemes: ["https"], fragment: false)
        case ("ol", "start"): return value.count <= 6 && value.allSatisfy(\.isASCIIDigitCharacter) ? value : nil
        case (_, "align"): return ["left", "center", "right"].contains(value.lowercased()) ? value.lowercased() : nil
        case ("code", "class"):
            let language = value.hasPrefix("language-") ? value.dropFirst("language-".count) : ""
            let allowed =
                language.count <= 30
                && language.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || "0123456789+-_#".unicodeScalars.contains($0))
                }
            return !language.isEmpty && allowed ? value : nil
        default: return value  // title, alt: text, escaped on output
        }
    }

    /// `value` (entities decoded) when it is a URL of one of `schemes` (or a `#fragment` where allowed),
    /// else nil. Control characters and white space, which browsers ignore inside a scheme, are removed
    /// first; a scheme is letters only, so an entity left undecoded before the colon refuses the URL.
    static func safeURL(_ value: String, schemes: Set<String>, fragment: Bool) -> String? {
        let cleaned = String(
            String.UnicodeScalarView(value.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }))
        if fragment, cleaned.hasPrefix("#") { return cleaned }
        guard let colon = cleaned.firstIndex(of: ":") else { return nil }
        let scheme = cleaned[..<colon].lowercased()
        guard schemes.contains(scheme), scheme.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        return cleaned
    }

    /// Numeric character references and the named ones that can spell a URL's punctuation, decoded.
    /// Other named references stay as they are.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "colon": ":", "tab": "\t",
            "newline": "\n", "sol": "/", "period": ".", "lpar": "(", "rpar": ")", "num": "#", "nbsp": "\u{A0}",
        ]
        var result = ""
        var scalars = Substring(text).unicodeScalars[...]
        while let first = scalars.first {
            scalars = scalars.dropFirst()
            guard first == "&" else {
                result.unicodeScalars.append(first)
                continue
            }
            let candidate = scalars.prefix(34)
            let body = candidate.prefix { $0 != ";" && $0 != "&" }
            let terminated = candidate.dropFirst(body.count).first == ";"
            let name = String(String.UnicodeScalarView(body))
            if name.hasPrefix("#"), let scalar = numericReference(name.dropFirst()) {
                result.unicodeScalars.append(scalar)
                scalars = scalars.dropFirst(body.count + (terminated ? 1 : 0))
            } else if terminated, let decoded = named[name.lowercased()] {
                result += decoded
                scalars = scalars.dropFirst(body.count + 1)
            } else {
                result.unicodeScalars.append(first)
            }
        }
        return result
    }

    /// `#65`, `#x41` (without the `#`): the scalar, nil when not a number or not a scalar. Browsers
    /// read the digits without a closing `;`, and so does this.
    private static func numericReference(_ body: Substring) -> Unicode.Scalar? {
        let hex = body.first == "x" || body.first == "X"
        let digits = hex ? body.dropFirst() : body
        guard !digits.isEmpty, digits.count <= 8, let value = UInt32(digits, radix: hex ? 16 : 10) else { return nil }
        return Unicode.Scalar(value == 0 ? 0xFFFD : value) ?? Unicode.Scalar(0xFFFD)
    }

    /// Text for element content: `<` and `>` escaped, `&` kept only where it starts a character reference.
    static func escapeText(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "&": result += startsReference(scalars[(index + 1)...]) ? "&" : "&amp;"
            case "\u{0}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func startsReference(_ rest: ArraySlice<Unicode.Scalar>) -> Bool {
        let body = rest.prefix(33).prefix { $0 != ";" }
        guard body.count < rest.prefix(33).count, let first = body.first else { return false }
        if first == "#" {
            let digits = body.dropFirst()
            let hex = digits.first == "x" || digits.first == "X"
            let number = hex ? digits.dropFirst() : digits
            return !number.isEmpty
                && number.allSatisfy { hex ? $0.properties.isASCIIHexDigit : ("0"..."9").contains($0) }
        }
        return first.properties.isAlphabetic && first.isASCII
            && body.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }

    static func escapeAttribute(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "\"": result += "&quot;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\u{0}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    enum Token {
        case text(String)
        case start(String, [(String, String)])
        case end(String)
    }

    /// A forgiving tokenizer: what is not a well-formed tag is text (and escaped as text on output).
    struct Scanner {
        let input: [Unicode.Scalar]
        var index = 0
        init(_ input: [Unicode.Scalar]) { self.input = input }

        mutating func next() -> Token? {
            guard index < input.count else { return nil }
            if input[index] == "<", let token = markup() { return token }
            let start = index
            index += 1
            while index < input.count, input[index] != "<" { index += 1 }
            return .text(String(String.UnicodeScalarView(input[start..<index])))
        }

        /// A tag, comment or declaration at `index`; nil (index unchanged) when `<` is only text.
        private mutating func markup() -> Token? {
            let after = index + 1
            guard after < input.count else { return nil }
            let next = input[after]
            if next == "!" || next == "?" {
                let comment = input[after...].starts(with: "!--".unicodeScalars)
                index = comment ? skip(past: "-->", from: after + 3) : skip(past: ">", from: after)
                return .text("")
            }
            if next == "/" {
                guard after + 1 < input.count, isLetter(input[after + 1]) else {
                    index = skip(past: ">", from: after)  // `</ …>` with no name: a bogus comment
                    return .text("")
                }
                index = after + 1
                let name = readName()
                index = skip(past: ">", from: index)
                return .end(name)
            }
            guard isLetter(next) else { return nil }
            index = after
            let name = readName()
            var attributes: [(String, String)] = []
            while index < input.count {
                let scalar = input[index]
                if scalar == ">" {
                    index += 1
                    return .start(name, attributes)
                }
                if scalar.properties.isWhitespace || scalar == "/" {
                    index += 1
                    continue
                }
                attributes.append(readAttribute())
            }
            return .text("")  // a tag left open at the end is dropped, as browsers do
        }

        private func isLetter(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && scalar.properties.isAlphabetic }

        private mutating func readName() -> String {
            let start = index
            while index < input.count, !input[index].properties.isWhitespace, input[index] != "/", input[index] != ">" {
                index += 1
            }
            return String(String.UnicodeScalarView(input[start..<index])).lowercased()
        }

        private mutating func readAttribute() -> (String, String) {
            let start = index
            index += 1  // an attribute's name may start with `=`
            while index < input.count, !input[index].properties.isWhitespace,
                !"/>=".unicodeScalars.contains(input[index])
            {
                index += 1
            }
            let name = String(String.UnicodeScalarView(input[start..<index])).lowercased()
            while index < input.count, input[index].properties.isWhitespace { index += 1 }
            guard index < input.count, input[index] == "=" else { return (name, "") }
            index += 1
            while index < input.count, input[index].properties.isWhitespace { index += 1 }
            guard index < input.count else { return (name, "") }
            let quote = input[index]
            let valueStart: Int
            if quote == "\"" || quote == "'" {
                index += 1
                valueStart = index
                while index < input.count, input[index] != quote { index += 1 }
                let value = String(String.UnicodeScalarView(input[valueStart..<index]))
                if index < input.count { index += 1 }
                return (name, value)
            }
            valueStart = index
            while index < input.count, !input[index].properties.isWhitespace, input[index] != ">" { index += 1 }
            return (name, String(String.UnicodeScalarView(input[valueStart..<index])))
        }

        private func skip(past terminator: String, from start: Int) -> Int {
            let pattern = Array(terminator.unicodeScalars)
            var position = start
            while position + pattern.count <= input.count {
                if input[position..<(position + pattern.count)].elementsEqual(pattern) {
                    return position + pattern.count
                }
                position += 1
            }
            return input.count
        }
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
