import BackofficePlatform
import Foundation
import Yams

/// Every table and column that holds a customer's data, and what the purge and the data export do
/// with each, as `customer-data.yaml` beside this file declares it: the one list both read (the
/// purge's audit event names what it erased and kept from it; the export's sections are checked
/// against it). `CustomerDataRegistryTests` fails when the schema has a column naming a customer
/// (`customer_id`, `reporter_id`, a foreign key to `customers`, a customer's `author_id`) or a
/// personal column (`email`, `display_name`, `shipping_*`, `content_text`, …) that this list does
/// not name, or names one that is gone.
package enum CustomerDataRegistry {
    /// What `maintenance purge` does with a holding.
    package enum Purge: Sendable, Equatable, Decodable {
        /// The rows go with the account (the account row itself, or a foreign key `ON DELETE CASCADE`).
        case deletedWithAccount
        /// The purge deletes the rows itself (no foreign key: the rows are not the account's own).
        case deleted
        /// The rows stay with these columns erased (a placeholder, or NULL), for the reason given.
        case erased(columns: [String], keeping: String)
        /// The rows stay as they are, for the reason given (nothing in them names the person once the
        /// account is gone, or the law needs them).
        case kept(String)
    }

    /// One table's hold on a customer: the column naming the customer, the personal columns beside it.
    package struct Holding: Sendable, Equatable, Decodable {
        package let table: String
        /// The column whose value is the customer's id (`id` for `customers`).
        package let column: String
        /// Other columns with personal data.
        package let personal: [String]
        package let purge: Purge
        /// The data export's section that carries it, or why none does.
        package let export: Export
    }

    /// Where a holding goes in the customer's data export.
    package enum Export: Sendable, Equatable {
        case section(String)
        case notExported(String)
    }

    /// The holdings of `customer-data.yaml`, the declared list beside this file (a resource of the
    /// build: one missing or malformed is a defect of the build, and stops the process at once).
    package static let holdings: [Holding] = {
        do {
            guard let url = Bundle.module.url(forResource: "customer-data", withExtension: "yaml") else {
                throw CocoaError(.fileNoSuchFile)
            }
            return try YAMLDecoder().decode([Holding].self, from: try String(contentsOf: url, encoding: .utf8))
        } catch {
            fatalError("customer-data.yaml: \(error)")
        }
    }()

    /// What a purge erases, as its audit event names it: `table` (rows deleted) or `table.column`.
    package static var erased: [String] {
        holdings.flatMap { holding -> [String] in
            switch holding.purge {
            case .deletedWithAccount, .deleted: [holding.table]
            case .erased(let columns, _): columns.map { "\(holding.table).\($0)" }
            case .kept: []
            }
        }
    }

    /// What a purge keeps, and why.
    package static var kept: [String] {
        holdings.compactMap { holding in
            switch holding.purge {
            case .erased(_, let keeping): "\(holding.table) (\(keeping))"
            case .kept(let why): "\(holding.table) (\(why))"
            case .deletedWithAccount, .deleted: nil
            }
        }
    }
}

extension CustomerDataRegistry.Purge {
    private enum Keys: String, CodingKey { case erased, keeping, kept }

    /// `deleted_with_account`, `deleted`, `{erased: [columns], keeping: why}` or `{kept: why}`.
    package init(from decoder: any Decoder) throws {
        if let word = try? decoder.singleValueContainer().decode(String.self) {
            switch word {
            case "deleted_with_account": self = .deletedWithAccount
            case "deleted": self = .deleted
            default:
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: word))
            }
            return
        }
        let fields = try decoder.container(keyedBy: Keys.self)
        if let why = try fields.decodeIfPresent(String.self, forKey: .kept) {
            self = .kept(why)
        } else {
            self = .erased(
                columns: try fields.decode([String].self, forKey: .erased),
                keeping: try fields.decode(String.self, forKey: .keeping))
        }
    }
}

extension CustomerDataRegistry.Export: Decodable {
    private enum Keys: String, CodingKey { case notExported = "not_exported" }

    /// A section's name, or `{not_exported: why}`.
    package init(from decoder: any Decoder) throws {
        if let section = try? decoder.singleValueContainer().decode(String.self) {
            self = .section(section)
        } else {
            self = .notExported(try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .notExported))
        }
    }
}
