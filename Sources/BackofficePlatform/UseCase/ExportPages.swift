import Foundation

/// A long answer (an export) read page by page as the client takes it.
///
/// Guarantees:
/// - back-pressure: a page is read only when the server's writer asks for the next bytes, which it
///   does once the client has taken the ones before; memory holds about one page, however slowly
///   the client reads;
/// - every page after the first is read in a read session of its own that authenticates the
///   request's token again (`Database.readPage`): a token revoked or expired, or an operator
///   disabled, during the export ends it at the next page, the client's answer cut short (never a
///   complete-looking file);
/// - each page is read under the same principal, policy and tenant as the request.
package struct ExportPages<Position: Sendable>: AsyncSequence, Sendable {
    package typealias Element = ArraySlice<UInt8>
    /// One page after `Position`: its bytes, and where the next one starts (nil: the last page).
    package typealias Page = @Sendable (Position, OperationContext) async throws -> (bytes: [UInt8], next: Position?)

    package let database: Database
    package let context: OperationContext
    /// What the request read itself (a refusal answers before any byte): the header and first page.
    package let start: [UInt8]
    package let after: Position?
    package let page: Page

    /// `start` is sent first; then pages from `after` until one says it is the last.
    package init(database: Database, context: OperationContext, start: [UInt8], after: Position?, page: @escaping Page)
    {
        (self.database, self.context, self.start, self.after, self.page) = (database, context, start, after, page)
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        package let pages: ExportPages
        package var start: [UInt8]?
        package var position: Position?

        package mutating func next() async throws -> ArraySlice<UInt8>? {
            if let start {
                self.start = nil
                if !start.isEmpty { return ArraySlice(start) }
            }
            while let position {
                let page = pages.page
                let (bytes, next) = try await pages.database.readPage(for: pages.context) { context in
                    try await page(position, context)
                }
                self.position = next
                if !bytes.isEmpty { return ArraySlice(bytes) }
            }
            return nil
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self, start: start, position: after) }
}

extension Database {
    /// Runs `body` in a read session that authenticates `context`'s token again (the same
    /// statement as the edge's) and refuses (`unauthenticated`) unless it is still the same
    /// principal: one page of a long answer. Without a token (system work, tools) it acts for the
    /// principal in a transaction of its own.
    package func readPage<T: Sendable>(for context: OperationContext, _ body: (OperationContext) async throws -> T)
        async throws
        -> T
    {
        guard let tokenHash = context.tokenHash else {
            return try await transaction(for: context.principal) { connection in
                try await body(context.with(RequestTransaction(connection: connection, isReadOnly: true)))
            }
        }
        return try await readSession(tokenHash: tokenHash) { principal, transaction in
            guard principal == context.principal else { throw DomainError.unauthenticated }
            return try await body(context.with(transaction))
        }
    }
}
