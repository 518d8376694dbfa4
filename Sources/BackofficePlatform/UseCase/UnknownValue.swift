import Foundation

/// A value the code does not know, read from the database (a newer schema, or corruption) or
/// mapped from the contract: the read fails (500, logged) instead of guessing a default.
package struct UnknownValue: Error, CustomStringConvertible {
    package let type: String
    package let value: String
    package var description: String { "unknown \(type) '\(value)'" }
}

extension RawRepresentable where RawValue == String {
    /// The case named `known`; anything else throws `UnknownValue`, never a silent default.
    package init(known: String) throws {
        guard let value = Self(rawValue: known) else { throw UnknownValue(type: "\(Self.self)", value: known) }
        self = value
    }
}
