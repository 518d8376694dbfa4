import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

/// An independent reading of rendered HTML: every `<` must open or close an allowed element with
/// allowed, double-quoted attributes, and link and image URLs must be of the allowed schemes. It does
/// not share code with `HTMLSanitizer`, so a mistake there is not repeated here.
enum InertHTML {
    static let allowed: [String: Set<String>] = [
        "p": [], "br": [], "hr": [], "h1": [], "h2": [], "h3": [], "h4": [], "h5": [], "h6": [],
        "blockquote": [], "ul": [], "ol": ["start"], "li": [], "pre": [], "code": ["class"], "em": [],
        "strong": [], "del": [], "s": [], "a": ["href", "title", "rel"], "img": ["src", "alt", "title"],
        "table": [], "thead": [], "tbody": [], "tr": [], "th": ["align"], "td": ["align"],
    ]

    /// The problems found in `html`; empty when it is inert.
    static func problems(_ html: String) -> [String] {
        var problems: [String] = []
        let tag = /<(\/?)([a-z0-9]+)((?: [a-z]+="[^"<>]*")*)>/
        let attribute = /\ ([a-z]+)="([^"<>]*)"/
        var rest = Substring(html)
        while let open = rest.firstIndex(where: { $0 == "<" || $0 == ">" }) {
            guard rest[open] == "<", let match = rest[open...].prefixMatch(of: tag) else {
                problems.append("a stray '\(rest[open])' at: \(rest[open...].prefix(60))")
                rest = rest[rest.index(after: open)...]
                continue
            }
            let name = String(match.output.2)
            guard let attributes = allowed[name] else {
                problems.append("element <\(name)>")
                rest = rest[match.range.upperBound...]
                continue
            }
            if !match.output.1.isEmpty, !match.output.3.isEmpty { problems.append("attributes on </\(name)>") }
            for found in match.output.3.matches(of: attribute) {
                let key = String(found.output.1)
                let value = String(found.output.2).replacingOccurrences(of: "&quot;", with: "\"")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&amp;", with: "&")
                if !attributes.contains(key) { problems.append("attribute \(key) on <\(name)>") }
                if name == "a", key == "href",
                    !["http:", "https:", "mailto:", "#"].contains(where: { value.lowercased().hasPrefix($0) })
                {
                    problems.append("href \(value)")
                }
                if name == "img", key == "src", !value.lowercased().hasPrefix("https:") {
                    problems.append("src \(value)")
                }
                if name == "a", key == "rel", value != "noopener nofollow ugc" { problems.append("rel \(value)") }
            }
            if name == "a", match.output.1.isEmpty, !match.output.3.contains(#" rel="noopener nofollow ugc""#) {
                problems.append("a link without rel")
            }
            rest = rest[match.range.upperBound...]
        }
        return problems
    }
}

@Suite("Articles: Markdown rendered inert")
struct SafeMarkdownTests {
    /// The OWASP XSS filter-evasion cheat sheet's vectors that Markdown with inline HTML can carry,
    /// and Markdown's own (links and images with hostile URLs).
    static let hostile: [String] = [
        "<SCRIPT SRC=https://xss.rocks/xss.js></SCRIPT>",
        #"<IMG SRC="javascript:alert('XSS');">"#,
        "<IMG SRC=javascript:alert('XSS')>",
        "<IMG SRC=JaVaScRiPt:alert('XSS')>",
        "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
        #"<a onmouseover="alert(document.cookie)">xxs link</a>"#,
        "<a onmouseover=alert(document.cookie)>xxs link</a>",
        #"<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\>"#,
        "<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>",
        "<IMG SRC=# onmouseover=\"alert('xxs')\">",
        "<IMG SRC= onmouseover=\"alert('xxs')\">",
        "<IMG onmouseover=\"alert('xxs')\">",
        "<IMG SRC=/ onerror=\"alert(String.fromCharCode(88,83,83))\"></img>",
        "<img src=x onerror=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000"
            + "105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000"
            + "039&#0000088&#0000083&#0000083&#0000039&#0000041\">",
        "<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#"
            + "114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>",
        "<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112"
            + "&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088"
            + "&#0000083&#0000083&#0000039&#0000041>",
        "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&"
            + "#x28&#x27&#x58&#x53&#x53&#x27&#x29>",
        "<IMG SRC=\"jav\tascript:alert('XSS');\">",
        #"<IMG SRC="jav&#x09;ascript:alert('XSS');">"#,
        #"<IMG SRC="jav&#x0A;ascript:alert('XSS');">"#,
        #"<IMG SRC="jav&#x0D;ascript:alert('XSS');">"#,
        "<IMG SRC=\"jav\0ascript:alert('XSS');\">",
        #"<IMG SRC=" &#14;  javascript:alert('XSS');">"#,
        #"<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>"#,
        "<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
        #"<SCRIPT/SRC="http://xss.rocks/xss.js"></SCRIPT>"#,
        "<<SCRIPT>alert(\"XSS\");//\\<</SCRIPT>",
        "<SCRIPT SRC=http://xss.rocks/xss.js?< B >",
        "<SCRIPT SRC=//xss.rocks/.j>",
        #"<IMG SRC="`<javascript:alert>`('XSS')""#,
        "<iframe src=http://xss.rocks/scriptlet.html <",
        "</TITLE><SCRIPT>alert(\"XSS\");</SCRIPT>",
        #"<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">"#,
        "<BODY BACKGROUND=\"javascript:alert('XSS')\">",
        #"<IMG DYNSRC="javascript:alert('XSS')">"#,
        #"<IMG LOWSRC="javascript:alert('XSS')">"#,
        "<STYLE>li {list-style-image: url(\"javascript:alert('XSS')\");}</STYLE><UL><LI>XSS</br>",
        #"<svg/onload=alert('XSS')>"#,
        "<BODY ONLOAD=alert('XSS')>",
        #"<BGSOUND SRC="javascript:alert('XSS');">"#,
        #"<LINK REL="stylesheet" HREF="javascript:alert('XSS');">"#,
        #"<STYLE>@import'http://xss.rocks/xss.css';</STYLE>"#,
        #"<META HTTP-EQUIV="Link" Content="<http://xss.rocks/xss.css>; REL=stylesheet">"#,
        #"<IMG STYLE="xss:expr/*XSS*/ession(alert('XSS'))">"#,
        "<STYLE TYPE=\"text/javascript\">alert('XSS');</STYLE>",
        #"<DIV STYLE="background-image: url(javascript:alert('XSS'))">"#,
        #"<DIV STYLE="width: expression(alert('XSS'));">"#,
        #"<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">"#,
        #"<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">"#,
        #"<IFRAME SRC="javascript:alert('XSS');"></IFRAME>"#,
        "<IFRAME SRC=# onmouseover=\"alert(document.cookie)\"></IFRAME>",
        #"<FRAMESET><FRAME SRC="javascript:alert('XSS');"></FRAMESET>"#,
        "<TABLE BACKGROUND=\"javascript:alert('XSS')\">",
        "<TABLE><TD BACKGROUND=\"javascript:alert('XSS')\">",
        #"<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>"#,
        #"<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDA"#
            + #"vc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3Lncz"#
            + #"Lm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw "#
            + #"IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc"#
            + #"3ZnPg==" type="image/svg+xml" AllowScriptAccess="always"></EMBED>"#,
        #"<SCRIPT a=">" SRC="httx://xss.rocks/xss.js"></SCRIPT>"#,
        #"<SCRIPT a=`>` SRC="httx://xss.rocks/xss.js"></SCRIPT>"#,
        #"<A HREF="http://66.102.7.147/">XSS</A>"#,
        #"<A HREF="javascript:document.location='http://www.google.com/'">XSS</A>"#,
        #"<a href="jAvAsCrIpT&colon;alert(1)">x</a>"#,
        #"<a href="&#x6A;avascript:alert(1)">x</a>"#,
        #"<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>"#,
        #"<a href="vbscript:msgbox(1)">x</a>"#,
        "<!--<img src=\"--><img src=x onerror=alert(1)//\">",
        "<![CDATA[<script>alert(1)</script>]]>",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
        "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
        "<form><button formaction=javascript:alert(1)>x</button></form>",
        "<details open ontoggle=alert(1)>",
        "<p style=\"color:red\" class=\"x\" id=\"y\">styled</p>",
        "[click](javascript:alert(1))",
        "[click](JavaScript:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[click](vbscript:alert(1))",
        "[click](javascript&#58;alert(1))",
        "![x](javascript:alert(1))",
        "![x](http://insecure.example/cat.png)",
        #"![x" onerror="alert(1)](https://example.com/a.png)"#,
        #"[x](https://example.com/" onclick="alert(1))"#,
        "[a]: javascript:alert(1)\n\n[link][a]",
        "```html\n<script>alert(1)</script>\n```",
        "`<img src=x onerror=alert(1)>`",
        "> <script>alert(1)</script>",
        "* <a href=\"javascript:alert(1)\">item</a>",
        "| a | b |\n|---|---|\n| <script>alert(1)</script> | <img src=x onerror=alert(1)> |",
        "# <svg onload=alert(1)>",
        "<scr<script>ipt>alert(1)</scr</script>ipt>",
        "<a href=\"https://ok.example\" target=\"_blank\" rel=\"opener\">ok</a>",
    ]

    @Test("every hostile vector renders inert: only allowed elements and attributes, no script URL, no handler")
    func hostileCorpus() {
        for vector in Self.hostile {
            let html = SafeMarkdown(vector).html
            #expect(InertHTML.problems(html).isEmpty, "\(vector) → \(html): \(InertHTML.problems(html))")
            let lowered = html.lowercased()
            for banned in ["<script", "<style", "<iframe", "<svg", "javascript:", "vbscript:", "data:", " on"]
            where lowered.contains(banned) {
                // Escaped text may still read "javascript:" — but never inside a tag.
                // An attribute's quoted value is text (`alt="x&quot; onerror=…"`): a handler would be a name.
                let inTags = lowered.matches(of: /<[^>]*>/).contains {
                    (banned == " on" ? $0.output.replacing(/"[^"]*"/, with: "\"\"") : $0.output).contains(banned)
                }
                #expect(!inTags, "\(vector) → \(html): '\(banned)' inside a tag")
            }
        }
    }

    @Test("what experts need survives: headings, emphasis, lists, links with rel, https images, code, tables")
    func ordinaryMarkdown() {
        let html = SafeMarkdown(
            """
            # Protein at breakfast

            Eat **more** eggs, *less* sugar. See [the study](https://example.org/study?a=1&b=2).

            - oats
            - yoghurt

            ![A bowl](https://cdn.example.org/bowl.jpg)

            ```swift
            let x = 1 < 2
            ```

            | food | kcal |
            |:-----|-----:|
            | egg  | 78   |
            """
        ).html
        #expect(html.contains("<h1>Protein at breakfast</h1>"))
        #expect(html.contains("<strong>more</strong>") && html.contains("<em>less</em>"))
        #expect(
            html.contains(
                #"<a href="https://example.org/study?a=1&amp;b=2" rel="noopener nofollow ugc">the study</a>"#),
            "\(html)")
        #expect(html.contains("<li>oats</li>"))
        #expect(html.contains(#"<img src="https://cdn.example.org/bowl.jpg" alt="A bowl">"#), "\(html)")
        #expect(html.contains(#"<code class="language-swift">let x = 1 &lt; 2"#), "\(html)")
        #expect(html.contains(#"<td align="right">78</td>"#), "\(html)")
        #expect(InertHTML.problems(html).isEmpty)
        #expect(SafeMarkdown("A <img src=x> B").html == "<p>A  B</p>", "an image with no safe source is dropped")
        #expect(
            SafeMarkdown("![](https://cdn.example.org/line.png)").html
                == #"<p><img src="https://cdn.example.org/line.png" alt=""></p>"#,
            "an image without a description is marked decorative")
    }

    @Test("specific vectors lose exactly their hostile part")
    func specificOutcomes() {
        #expect(
            SafeMarkdown("[click](javascript:alert(1))").html == #"<p><a rel="noopener nofollow ugc">click</a></p>"#)
        #expect(SafeMarkdown("<p onclick=\"x()\" style=\"a\">hi</p>").html == "<p>hi</p>")
        #expect(SafeMarkdown("<script>alert(1)</script>after").html.contains("alert") == false)
        #expect(SafeMarkdown("<div>kept <b>text</b></div>").html.contains("kept text"))
        #expect(SafeMarkdown("a <!-- hidden --> b").html.contains("hidden") == false)
        #expect(HTMLSanitizer.sanitize("<em>open") == "<em>open</em>")
        #expect(HTMLSanitizer.sanitize("</em>stray") == "stray")
        #expect(HTMLSanitizer.sanitize("1 < 2 && 3 > 2 &amp; &copy;") == "1 &lt; 2 &amp;&amp; 3 &gt; 2 &amp; &copy;")
    }

    /// Fragments a hostile writer would combine: tags in and outside the list, handlers, URLs of
    /// every scheme and disguise, quotes, entities, comments and Markdown's own syntax.
    static let fragments: [String] = [
        "<", ">", "</", "/>", "<!--", "-->", "<!", "<?", "\"", "'", "`", "=", " ", "\n", "\n\n", "\t", "&", "&#", "&#x",
        ";", "#", "*", "_", "[", "]", "(", ")", "!", "|", "-", "> ", "```", "`", "    ", "1. ", "---\n",
        "<script>", "</script>", "<style>", "<img", "<a", "<p", "<svg", "<iframe", "<b>", "<div", "<table>", "<td",
        "<IMG", "<ScRiPt", "<math>", "<noscript>", "<title>", "<textarea>", "<xmp>", "<plaintext>",
        " src=", " href=", " onerror=", " onload=", " ONCLICK=", " style=", " class=", " rel=", " align=",
        " start=", " title=", " alt=", " formaction=",
        "javascript:", "JaVaScRiPt:", "java\tscript:", "jav&#x09;ascript:", "&#106;avascript:", "vbscript:",
        "data:text/html,", "https://ok.example/", "http://ok.example/", "mailto:a@b.example", "#top",
        "&colon;", "&#58;", "&#x3A;", "&Tab;", "&NewLine;", "&amp;", "&lt;", "&quot;", "&#0;", "\u{0}",
        "alert(1)", "word", "é", "𝒳", "\u{202E}", "\u{FEFF}",
        "[x](", "![y](", "](javascript:alert(1))", "[r]: ", "<https://ok.example>",
    ]

    @Test("property: 3,000 generated documents never render an element or attribute outside the allow-list")
    func neverOutsideTheAllowList() {
        var generator = SplitMix64(seed: 0x5EED_A771_C1E5)
        for round in 0..<3_000 {
            let length = Int.random(in: 1...40, using: &generator)
            let document = (0..<length).map { _ in Self.fragments.randomElement(using: &generator)! }.joined()
            let html = SafeMarkdown(document).html
            let problems = InertHTML.problems(html)
            #expect(problems.isEmpty, "round \(round): \(document.debugDescription) → \(html): \(problems)")
            if !problems.isEmpty { return }
        }
    }

    @Test(
        """
        renders at once do not disturb each other: 8 tasks render 500 documents each, and every bare URL is \
        linked (cmark-gfm's parsers share one table of special characters, so the renders take turns)
        """
    )
    func concurrentRenders() async {
        let linked = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    (0..<500).filter { index in
                        let html = SafeMarkdown("See https://ok.example/\(task)/\(index) and **more**.").html
                        return html.contains(#"<a href="https://ok.example/\#(task)/\#(index)""#)
                    }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(linked == 4_000)
    }

    @Test(
        """
        nested links: the inner link cancels the outer, as CommonMark says (the outer's address is then a bare \
        URL, linked on its own), so no <a> is ever inside another
        """
    )
    func nestedLinks() {
        let hostile = SafeMarkdown("[[nested](javascript:alert(1))](https://ok.example/)").html
        #expect(
            hostile
                == #"<p>[<a rel="noopener nofollow ugc">nested</a>]("#
                + #"<a href="https://ok.example/" rel="noopener nofollow ugc">https://ok.example/</a>)</p>"#,
            "\(hostile)")
        let both = SafeMarkdown("[[inner](https://a.example/)](https://b.example/)").html
        #expect(
            both
                == #"<p>[<a href="https://a.example/" rel="noopener nofollow ugc">inner</a>]("#
                + #"<a href="https://b.example/" rel="noopener nofollow ugc">https://b.example/</a>)</p>"#,
            "\(both)")
        for text in [
            "[[[a](https://a.example/)](https://b.example/)](https://c.example/)",
            "[![x](https://i.example/i.png)](https://b.example/)",
        ] {
            let html = SafeMarkdown(text).html
            var depth = 0
            var deepest = 0
            for match in html.matches(of: /<(\/?)a[ >]/) {
                depth += match.output.1.isEmpty ? 1 : -1
                deepest = max(deepest, depth)
            }
            #expect(deepest == 1 && depth == 0, "\(text) → \(html)")
        }
    }

    @Test("inputs on which the earlier renderer (Ink 0.6.0) never returned render as the text they mean")
    func inkLoopsGuarded() {
        #expect(SafeMarkdown("* a\n\t").html == "<ul>\n<li>a</li>\n</ul>")
        #expect(SafeMarkdown("1. a\n\t").html == "<ol>\n<li>a</li>\n</ol>")
        #expect(SafeMarkdown("---\n ").html == "<hr>")
        #expect(SafeMarkdown("* a\n \nb").html == "<ul>\n<li>a</li>\n</ul>\n<p>b</p>")
        #expect(SafeMarkdown("rel=<p#").html.contains("rel="))
        #expect(SafeMarkdown("x > y <p").html.contains("x &gt; y"))
    }

    @Test("reading time: 200 words a minute, rounded up, at least one; words are runs of letters or digits")
    func readingTime() {
        #expect(SafeMarkdown("").readingMinutes == 1)
        #expect(SafeMarkdown("It's a well-known fact: 3 eggs.").words == 6)
        #expect(
            SafeMarkdown("Read <script>var a = 1</script> this [link](https://x.example \"title\")").words == 3,
            "a removed script's text and a link's address are not read")
        #expect(SafeMarkdown("Don&#39;t&nbsp;stop &amp; go").words == 3, "references decoded")
        let words = Array(repeating: "word", count: 401).joined(separator: " ")
        #expect(SafeMarkdown(words).words == 401)
        #expect(SafeMarkdown(words).readingMinutes == 3)
    }
}

/// A small seeded generator, so a failing round can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
