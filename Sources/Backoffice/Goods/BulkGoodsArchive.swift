import BackofficePlatform
import Foundation
import PostgresNIO

/// A partner archives up to 500 goods at once (`goods.bulk_archive`, and `goods.archive`): each
/// good archived by `ArchiveGood`, its own audited change, so a refusal of one (archived already;
/// another shop's good: not found) leaves the others done (`Bulk`). A dry run changes nothing and
/// says what each archive would do, checked as the archive checks it. A repeat of the same bulk
/// answers the goods archived already as refused.
package struct BulkGoodsArchive: BulkChange {
    package static let action: Action = "goods.bulk_archive"
    let goodIDs: [UUID]
    let dryRun: Bool

    /// `dryRun` nil: the change itself.
    package init(goodIDs: [UUID], dryRun: Bool?) { (self.goodIDs, self.dryRun) = (goodIDs, dryRun ?? false) }

    /// Runs the bulk for `context`'s principal: its permission and the archive's, then each good's.
    package func run(_ database: Database, context: OperationContext) async throws -> [BulkOutcome<Good>] {
        try context.permit(Self.action)
        try context.permit(ArchiveGood.action)
        var validation = Validation()
        Bulk.check(goodIDs, field: "good_ids", into: &validation)
        try validation.check()
        if dryRun { return try await database.read(CheckGoodsArchive(goodIDs: goodIDs), context: context) }
        return try await Bulk.each(goodIDs) { id in
            try await database.run(ArchiveGood(goodID: id, ifMatch: nil), context: context)
        }
    }
}

/// A bulk archive's dry run: each good read (another shop's is not found) and checked as its archive
/// checks it (archived already is refused); a good that would be archived is answered as it would be.
struct CheckGoodsArchive: Query {
    static let action = BulkGoodsArchive.action
    let goodIDs: [UUID]

    func read(in unit: UnitOfWork) async throws -> [BulkOutcome<Good>] {
        let goods = try await unit.all(
            "SELECT \(unescaped: Good.columns) FROM goods WHERE id = ANY(\(goodIDs))", as: Good.self)
        let byID = Dictionary(uniqueKeysWithValues: goods.map { ($0.id, $0) })
        return goodIDs.map { id in
            guard let good = byID[id] else {
                return BulkOutcome(id: id, kind: .refused, refusal: DomainError.notFound("Good \(id.text)"))
            }
            guard good.status != .archived else {
                return BulkOutcome(
                    id: id, kind: .refused,
                    refusal: DomainError.invalidTransition("The good is already archived.", current: "archived"))
            }
            var archived = good
            archived.status = .archived
            return BulkOutcome(id: id, kind: .wouldDo, state: archived)
        }
    }
}
