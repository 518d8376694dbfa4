import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL cluster run from the system's PostgreSQL binaries, for `backoffice dev`
/// and the test suite.
///
/// Guarantees: the data folder is created and initialised on first use and reused afterwards; the
/// server listens on 127.0.0.1 only, on a free port, with no Unix socket, and asks every
/// connection for a password (scram-sha-256; the superuser's is generated at initialisation and
/// kept in `passwordFile`, mode 0600); when the process runs as root, the cluster runs as the
/// `postgres` system user (PostgreSQL refuses root) in a folder it owns.
package final class EmbeddedPostgres: Sendable {
    package let dataDirectory: URL
    package let port: Int
    /// The superuser's password (hex, so it needs no escaping in URLs or SQL).
    package let superuserPassword: String
    private let runAs: String?

    /// The superuser's connection URL.
    package var superuserURL: String { url(database: "postgres", user: "postgres") }

    /// The URL of `database` for `user` (the superuser's password when `user` is `postgres` and none is given).
    package func url(database: String, user: String, password: String? = nil) -> String {
        let secret = password ?? (user == "postgres" ? superuserPassword : nil)
        return "postgres://\(user)\(secret.map { ":" + $0 } ?? "")@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    private init(dataDirectory: URL, port: Int, superuserPassword: String, runAs: String?) {
        (self.dataDirectory, self.port, self.superuserPassword, self.runAs) = (
            dataDirectory, port, superuserPassword, runAs
        )
    }

    /// A new random password: 32 hex digits from the system's cryptographic source.
    package static func generatePassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Initialises (first time) and starts the cluster in `dataDirectory`; the superuser's password
    /// is written to (first time) or read from `passwordFile`.
    package static func start(dataDirectory: URL, passwordFile: URL, log: (String) -> Void = { _ in }) throws
        -> EmbeddedPostgres
    {
        let runAs: String? = geteuid() == 0 ? "postgres" : nil
        let path = dataDirectory.path
        let fm = FileManager.default
        try fm.createDirectory(at: dataDirectory.deletingLastPathComponent(), withIntermediateDirectories: true)
        let password: String
        if !fm.fileExists(atPath: path + "/PG_VERSION") {
            log("initialising a PostgreSQL cluster in \(path)")
            try fm.createDirectory(
                at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            if let runAs {
                try run("/bin/chown", [runAs + ":" + runAs, path])
                guard (try? run("/usr/bin/test", ["-w", path], as: runAs)) != nil else {
                    throw EmbeddedPostgresError(
                        command: "initdb",
                        output: "the \(runAs) system user cannot reach \(path) (a parent folder is private to root); "
                            + "put the data folder somewhere \(runAs) can traverse")
                }
            }
            password = generatePassword()
            try PrivateFile.replace(passwordFile.path, contents: Data(password.utf8))
            // initdb (running as the cluster's user) reads the password from a file of its own, removed at once.
            let initialPassword = path + ".pwfile"
            try PrivateFile.replace(initialPassword, contents: Data(password.utf8))
            defer { try? fm.removeItem(atPath: initialPassword) }
            if let runAs { try run("/bin/chown", [runAs + ":" + runAs, initialPassword]) }
            try run(
                tool("initdb"),
                [
                    "-D", path, "-U", "postgres", "--pwfile=" + initialPassword, "--auth-host=scram-sha-256",
                    "--auth-local=peer",
                    "-E", "UTF8", "--locale=C.UTF-8", "--no-sync",
                ],
                as: runAs)
        } else {
            guard let kept = fm.contents(atPath: passwordFile.path).map({ String(decoding: $0, as: UTF8.self) }),
                !kept.isEmpty
            else {
                throw EmbeddedPostgresError(
                    command: "start",
                    output:
                        "the cluster in \(path) has no password file at \(passwordFile.path) "
                        + "(an older version or another clone made it): `backoffice dev --reset` "
                        + "removes it and makes a new one with fresh demo data")
            }
            password = kept.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let pid = path + "/postmaster.pid"
        if fm.fileExists(atPath: pid) {
            // A server left running (or a stale pid file after a crash): stop it and start afresh.
            _ = try? run(tool("pg_ctl"), ["-D", path, "-m", "fast", "-w", "stop"], as: runAs)
            if fm.fileExists(atPath: pid), (try? run(tool("pg_ctl"), ["-D", path, "status"], as: runAs)) == nil {
                try? fm.removeItem(atPath: pid)
            }
        }
        let port = try freePort()
        let options =
            "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off -c max_connections=200"
        try run(
            tool("pg_ctl"), ["-D", path, "-l", path + "/server.log", "-w", "-t", "60", "-o", options, "start"],
            as: runAs)
        return EmbeddedPostgres(dataDirectory: dataDirectory, port: port, superuserPassword: password, runAs: runAs)
    }

    /// Stops the cluster (fast shutdown: open sessions are ended, data is kept).
    package func stop() {
        _ = try? Self.run(Self.tool("pg_ctl"), ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"], as: runAs)
    }

    /// Removes a cluster and its data, stopping its server first if one is left running (`dev
    /// --reset`). Nothing to remove is fine.
    /// A folder that is not a cluster (no `PG_VERSION`) is refused, and so is a server that will
    /// not stop.
    package static func remove(dataDirectory: URL) throws {
        let path = dataDirectory.path
        let fm = FileManager.default
        guard fm.fileExists(atPath: path) else { return }
        guard fm.fileExists(atPath: path + "/PG_VERSION") else {
            throw EmbeddedPostgresError(command: "remove", output: "\(path) is not a PostgreSQL cluster: left as it is")
        }
        if fm.fileExists(atPath: path + "/postmaster.pid") {
            let runAs = geteuid() == 0 ? "postgres" : nil
            _ = try? run(tool("pg_ctl"), ["-D", path, "-m", "fast", "-w", "stop"], as: runAs)
            if (try? run(tool("pg_ctl"), ["-D", path, "status"], as: runAs)) != nil {
                throw EmbeddedPostgresError(
                    command: "remove", output: "the server on \(path) did not stop: nothing removed")
            }
        }
        try fm.removeItem(at: dataDirectory)
    }

    /// The shell command that stops this cluster, for watchdogs that outlive a crashed process.
    package var stopCommand: [String] {
        let command = [Self.tool("pg_ctl"), "-D", dataDirectory.path, "-m", "immediate", "-w", "stop"]
        return runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] + command } ?? command
    }

    /// Where a cluster keyed by `key` (e.g. a project's path) lives when the process runs as root:
    /// in the `postgres` user's home, which it can always reach (a clone in root's private home
    /// cannot be traversed by it). Nil when not root: the caller's own folder is fine then.
    package static func rootSafeDirectory(key: String) -> URL? {
        guard geteuid() == 0, let entry = getpwnam("postgres"), let home = entry.pointee.pw_dir else { return nil }
        let digest = key.utf8.reduce(into: UInt64(14_695_981_039_346_656_037)) { hash, byte in
            hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
        }
        return URL(fileURLWithPath: String(cString: home)).appendingPathComponent("backoffice-dev")
            .appendingPathComponent(
                String(format: "%016llx", digest))
    }

    package static func tool(_ name: String) -> String {
        let env = ProcessInfo.processInfo.environment
        var dirs = (env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        if let pgBin = env["BACKOFFICE_PG_BIN"] { dirs.insert(pgBin, at: 0) }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted(
            by: >)
        dirs += versions.map { "/usr/lib/postgresql/\($0)/bin" }
        for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        return name
    }

    /// Runs a tool to completion and returns its combined output.
    @discardableResult
    package static func run(_ executable: String, _ arguments: [String], as user: String? = nil) throws -> String {
        let argv = (user.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []) + [executable] + arguments
        let (status, output) = try ChildProcess.run(argv)
        guard status == 0 else { throw EmbeddedPostgresError(command: argv.joined(separator: " "), output: output) }
        return output
    }

    /// A TCP port on 127.0.0.1 that is free right now.
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EmbeddedPostgresError(command: "socket", output: "cannot open a socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw EmbeddedPostgresError(command: "bind", output: "cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A PostgreSQL tool failed; carries its output.
package struct EmbeddedPostgresError: Error, CustomStringConvertible {
    package let command: String
    package let output: String
    package var description: String { "\(command) failed:\n\(output)" }
}
