import Crypto
import Foundation
import Testing

@testable import Backoffice
@testable import BackofficeConsole
@testable import BackofficePlatform

@Suite("Signed files: a backup's checksums under the audit key")
struct FileSignatureTests {
    @Test(
        """
        a signature verifies only the file it was made over, with the signer's key, and never the bare bytes' \
        signature
        """
    )
    func signatures() throws {
        let key = AuditPrivateKey(), other = AuditPrivateKey()
        let sums = Data("0123abcd  database.dump.age\n".utf8)
        let signature = try FileSignature.sign(sums, with: key)
        #expect(signature.hasSuffix("\n"))
        #expect(FileSignature.isValid(signature, of: sums, publicKey: key.publicKey))
        #expect(
            !FileSignature.isValid(signature, of: sums + Data("x".utf8), publicKey: key.publicKey), "a changed file")
        #expect(!FileSignature.isValid(signature, of: sums, publicKey: other.publicKey), "another key")
        #expect(!FileSignature.isValid("not base64!", of: sums, publicKey: key.publicKey))
        let bare = try key.signature(for: sums).base64EncodedString()
        #expect(
            !FileSignature.isValid(bare, of: sums, publicKey: key.publicKey),
            "a signature made for another purpose does not pass")
    }
}
