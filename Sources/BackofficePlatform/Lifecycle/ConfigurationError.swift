/// A configuration value the service cannot use.
package struct ConfigurationError: Error, CustomStringConvertible {
    package let description: String

    package init(description: String) { self.description = description }
}
