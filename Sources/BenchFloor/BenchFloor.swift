import ArgumentParser
import BackofficePlatform
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The floor of the chosen stack for a read endpoint, for the benchmarks (`ops/bench`): a bare
/// Hummingbird server on a PostgresNIO pool that answers one GET path with the rows of a pgbench
/// script's statements — the same SQL pgbench runs as the ceiling — and nothing else: no contract,
/// policy, logging, request ids, deadlines or lease timeouts. Per request: one pooled connection,
/// the statements in order as prepared statements (`decode(:tokhash, 'hex')` is bound to the
/// SHA-256 of the request's bearer token; no row from the first of several statements is 401),
/// every cell of the last statement's rows decoded and written as JSON. What the service costs
/// beyond this is what its own layers cost; this is as far as the stack goes on the machine.
@main
struct BenchFloor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-floor",
        abstract: "A bare Hummingbird + PostgresNIO server running a pgbench script per request (a benchmark floor).")

    @Option(help: "Port to listen on (127.0.0.1).") var port: Int
    @Option(help: "PostgreSQL URL (postgres://user@host:port/database).") var databaseURL: String
    @Option(help: "The GET path to answer.") var path: String
    @Option(help: "The pgbench script to run per request (1 to 4 statements, each ending with ';' at a line's end).")
    var sql: String
    @Option(help: "Connections the pool may open (default: the service's own default).") var connections = PoolLimits
        .suggestedConnections

    func run() async throws {
        let script = try String(contentsOfFile: sql, encoding: .utf8)
        let statements = script.components(separatedBy: ";\n").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        .filter { !$0.isEmpty }.map { $0.replacingOccurrences(of: "decode(:tokhash, 'hex')", with: "$1::bytea") }
        guard (1...4).contains(statements.count) else { throw ValidationError("--sql: 1 to 4 statements") }
        FloorStatements.sql.withLock { $0 = statements }
        guard let url = URLComponents(string: databaseURL), let host = url.host, let user = url.user else {
            throw ValidationError("--database-url: expected postgres://user@host:port/database")
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: String(url.path.dropFirst()), tls: .disable)
        configuration.options.maximumConnections = connections
        let client = PostgresClient(configuration: configuration)
        let router = Router()
        router.get(RouterPath(path)) { request, _ -> Response in
            let token = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) } ?? ""
            let hash = Array(SHA256.hash(data: Array(token.utf8)))
            let body = try await client.withConnection { connection in
                try await FloorStatements.run(count: statements.count, hash: hash, on: connection)
            }
            guard let body else { return Response(status: .unauthorized) }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
        }
        // The pool runs as one of the application's services: SIGTERM ends both.
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), services: [client])
        try await app.runService()
    }
}

/// The script's statements. A prepared statement's SQL is a static property of its type, so each
/// position has its own type (`Statement<First>` …), whose SQL is read from here.
enum FloorStatements {
    static let sql = Mutex<[String]>([])

    static let logger = Logger(label: "bench-floor")

    /// Runs the statements on `connection`: the last one's rows as JSON, nil when the first of
    /// several (the authentication) gave no row.
    static func run(count: Int, hash: [UInt8], on connection: PostgresConnection) async throws -> ByteBuffer? {
        var body = JSONBytes(capacity: 32_768)
        for position in 0..<count {
            let last = position == count - 1
            let rows: Int
            switch position {
            case 0: rows = try await Statement<First>(hash: hash).run(on: connection, into: &body, writing: last)
            case 1: rows = try await Statement<Second>(hash: hash).run(on: connection, into: &body, writing: last)
            case 2: rows = try await Statement<Third>(hash: hash).run(on: connection, into: &body, writing: last)
            default: rows = try await Statement<Fourth>(hash: hash).run(on: connection, into: &body, writing: last)
            }
            if position == 0 && !last && rows == 0 { return nil }
        }
        return ByteBuffer(bytes: body.bytes)
    }
}

protocol Position { static var index: Int { get } }
enum First: Position { static let index = 0 }
enum Second: Position { static let index = 1 }
enum Third: Position { static let index = 2 }
enum Fourth: Position { static let index = 3 }

/// The script's statement at `P`; binds the token hash when its SQL has `$1`.
struct Statement<P: Position>: PostgresPreparedStatement {
    static var name: String { "floor_\(P.index)" }
    static var sql: String { FloorStatements.sql.withLock { $0[P.index] } }
    typealias Row = PostgresRow
    let hash: [UInt8]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        if Self.sql.contains("$1") { bindings.append(ByteBuffer(bytes: hash)) }
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }

    /// Runs the statement; when `writing`, writes its rows into `body` as a JSON array of objects.
    /// The number of rows.
    func run(on connection: PostgresConnection, into body: inout JSONBytes, writing: Bool) async throws -> Int {
        var rows = 0
        for try await row in try await connection.execute(self, logger: FloorStatements.logger) {
            rows += 1
            guard writing else { continue }
            body.raw(rows == 1 ? "[{" : ",{")
            for (index, cell) in row.enumerated() {
                if index > 0 { body.raw(",") }
                body.string(cell.columnName)
                body.raw(":")
                try JSONCell.write(cell, into: &body)
            }
            body.raw("}")
        }
        if writing { body.raw(rows == 0 ? "[]" : "]") }
        return rows
    }
}

/// A cell as JSON, decoded to its Swift value as the service decodes it and written by the
/// service's own writer.
enum JSONCell {
    static func write(_ cell: PostgresCell, into body: inout JSONBytes) throws {
        guard cell.bytes != nil else { return body.raw("null") }
        switch cell.dataType {
        case .bool: body.bool(try cell.decode(Bool.self))
        case .int2, .int4, .int8: body.integer(try cell.decode(Int64.self))
        case .uuid: body.uuid(try cell.decode(UUID.self))
        case .timestamptz, .timestamp: body.date(try cell.decode(Date.self))
        default: body.string(try cell.decode(String.self))
        }
    }
}
