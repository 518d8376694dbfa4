import Foundation
import Testing

@testable import BackofficePlatform

@Suite("An id's text")
struct UUIDTextTests {
    @Test("is Foundation's text in lower case, for the extremes and 10,000 random ids")
    func textIsFoundationsLowerCased() throws {
        let extremes = [
            try #require(UUID(uuidString: "00000000-0000-0000-0000-000000000000")),
            try #require(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")),
            try #require(UUID(uuidString: "0123ABCD-4567-89EF-FEDC-BA9876543210")),
        ]
        for id in extremes + (0..<10_000).map({ _ in UUID() }) {
            #expect(id.text == id.uuidString.lowercased())
            #expect(UUID(uuidString: id.text) == id)
        }
    }
}
