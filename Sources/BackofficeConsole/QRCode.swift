import BackofficePlatform

/// A QR code (ISO/IEC 18004) of a short text, drawn as SVG: byte mode, error correction level M,
/// versions 1 to 10 (up to 213 bytes: an `otpauth://` link is about 130). No package in reach
/// encodes QR codes, so this is the small encoder the second factor's enrolment page needs.
package struct QRCode {
    /// The modules, row by row: true is dark.
    package let modules: [[Bool]]
    package var size: Int { modules.count }

    package struct TooLong: Error {}

    /// Level M's blocks per version (1...10): error-correction codewords per block, and the
    /// groups of (blocks, data codewords per block).
    private static let blocks: [(ec: Int, groups: [(count: Int, data: Int)])] = [
        (10, [(1, 16)]), (16, [(1, 28)]), (26, [(1, 44)]), (18, [(2, 32)]), (24, [(2, 43)]),
        (16, [(4, 27)]), (18, [(4, 31)]), (22, [(2, 38), (2, 39)]), (22, [(3, 36), (2, 37)]), (26, [(4, 43), (1, 44)]),
    ]
    private static let alignment: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
    ]

    /// The code of `text`, in the smallest version that holds it, with the mask of least penalty.
    package init(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard
            let version = (1...10).first(where: { v in
                4 + (v < 10 ? 8 : 16) + bytes.count * 8 <= Self.blocks[v - 1].groups.reduce(0) {
                    $0 + $1.count * $1.data
                } * 8
            })
        else { throw TooLong() }
        var grid = Grid(version: version)
        grid.drawFunctionPatterns(alignment: Self.alignment[version - 1])
        grid.place(Self.codewords(bytes, version: version))
        modules = (0..<8).map { mask in grid.masked(mask) }.min { Grid.penalty($0) < Grid.penalty($1) }!
    }

    /// The data codewords (mode, count, bytes, terminator, padding) with each block's
    /// Reed-Solomon codewords, interleaved as the standard orders them.
    package static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let layout = blocks[version - 1]
        let capacity = layout.groups.reduce(0) { $0 + $1.count * $1.data }
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for i in (0..<count).reversed() { bits.append((value >> i) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version < 10 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacity * 8 - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        for pad in 0..<(capacity - data.count) { data.append(pad % 2 == 0 ? 0xEC : 0x11) }
        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for group in layout.groups {
            for _ in 0..<group.count {
                dataBlocks.append(Array(data[offset..<offset + group.data]))
                offset += group.data
            }
        }
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder($0, degree: layout.ec) }
        var result: [UInt8] = []
        for i in 0..<(dataBlocks.map(\.count).max() ?? 0) {
            for block in dataBlocks where i < block.count { result.append(block[i]) }
        }
        for i in 0..<layout.ec { for block in ecBlocks { result.append(block[i]) } }
        return result
    }

    /// The code as an SVG image with a four-module quiet zone, labelled for screen readers.
    package func svg(label: String) -> String {
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark { path += "M\(x + 4) \(y + 4)h1v1h-1z" }
        }
        let side = size + 8
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" \
            role="img" aria-label="\(label)" class="qr" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }
}

/// Reed-Solomon error correction over GF(256) with the QR polynomial (0x11D).
package enum ReedSolomon {
    package static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for i in (0..<8).reversed() {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= ((Int(y) >> i) & 1) * Int(x)
        }
        return UInt8(z & 0xFF)
    }

    /// The `degree` error-correction codewords of `data`.
    package static func remainder(_ data: [UInt8], degree: Int) -> [UInt8] {
        var divisor = [UInt8](repeating: 0, count: degree - 1) + [1]
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                divisor[j] = multiply(divisor[j], root)
                if j + 1 < degree { divisor[j] ^= divisor[j + 1] }
            }
            root = multiply(root, 0x02)
        }
        var result = [UInt8](repeating: 0, count: degree)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for i in 0..<degree { result[i] ^= multiply(divisor[i], factor) }
        }
        return result
    }
}

/// A QR symbol being drawn: its modules and which of them are function patterns.
private struct Grid {
    package let version: Int
    package let size: Int
    package var dark: [[Bool]]
    package var function: [[Bool]]

    package init(version: Int) {
        self.version = version
        size = version * 4 + 17
        dark = Array(repeating: Array(repeating: false, count: size), count: size)
        function = dark
    }

    package mutating func set(_ x: Int, _ y: Int, _ value: Bool) {
        dark[y][x] = value
        function[y][x] = true
    }

    package mutating func drawFunctionPatterns(alignment: [Int]) {
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(cx + dx) && (0..<size).contains(cy + dy) {
                    let distance = max(abs(dx), abs(dy))
                    set(cx + dx, cy + dy, distance != 2 && distance != 4)
                }
            }
        }
        let last = alignment.count - 1
        for (i, cx) in alignment.enumerated() {
            for (j, cy) in alignment.enumerated()
            where !((i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)) {
                for dy in -2...2 { for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) } }
            }
        }
        drawFormat(mask: 0)
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for i in 0..<18 {
                let bit = (bits >> i) & 1 == 1
                set(size - 11 + i % 3, i / 3, bit)
                set(i / 3, size - 11 + i % 3, bit)
            }
        }
    }

    /// The 15 format bits (level M, `mask`) in both copies, and the dark module.
    package mutating func drawFormat(mask: Int) {
        var remainder = mask
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (mask << 10 | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    /// The codewords' bits in the zigzag order, upward and downward in two-module columns.
    package mutating func place(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let y = (right + 1) & 2 == 0 ? size - 1 - vertical : vertical
                    if !function[y][x] && index < codewords.count * 8 {
                        dark[y][x] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                        index += 1
                    }
                }
            }
            right -= 2
        }
    }

    /// The modules with `mask` applied to the data and its format bits drawn.
    package func masked(_ mask: Int) -> [[Bool]] {
        var grid = self
        for y in 0..<size {
            for x in 0..<size where !function[y][x] {
                let invert: Bool
                switch mask {
                case 0: invert = (x + y) % 2 == 0
                case 1: invert = y % 2 == 0
                case 2: invert = x % 3 == 0
                case 3: invert = (x + y) % 3 == 0
                case 4: invert = (x / 3 + y / 2) % 2 == 0
                case 5: invert = x * y % 2 + x * y % 3 == 0
                case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                default: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if invert { grid.dark[y][x].toggle() }
            }
        }
        grid.drawFormat(mask: mask)
        return grid.dark
    }

    /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, imbalance.
    package static func penalty(_ modules: [[Bool]]) -> Int {
        let size = modules.count
        let columns = (0..<size).map { x in modules.map { $0[x] } }
        var score = 0
        let finderLike: [[Bool]] = [
            [true, false, true, true, true, false, true, false, false, false, false],
            [false, false, false, false, true, false, true, true, true, false, true],
        ]
        for line in modules + columns {
            var run = 1
            for i in 1..<size {
                if line[i] == line[i - 1] {
                    run += 1
                } else {
                    if run >= 5 { score += run - 2 }
                    run = 1
                }
            }
            if run >= 5 { score += run - 2 }
            for start in 0...(size - 11) where finderLike.contains(where: { Array(line[start..<start + 11]) == $0 }) {
                score += 40
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let color = modules[y][x]
                if modules[y][x + 1] == color && modules[y + 1][x] == color && modules[y + 1][x + 1] == color {
                    score += 3
                }
            }
        }
        let darkCount = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let total = size * size
        // Each 5 % away from half dark costs 10 (the size is odd, so never exactly half).
        score += ((abs(darkCount * 20 - total * 10) + total - 1) / total - 1) * 10
        return score
    }
}
