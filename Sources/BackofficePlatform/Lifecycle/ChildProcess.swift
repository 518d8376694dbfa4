import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starting and reaping child processes with posix_spawn and waitpid (Foundation's `Process`
/// can hang waiting for exit inside async code on Linux).
package enum ChildProcess {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts `argv[0]` with stdin from /dev/null and stdout and stderr into `outputPath`, and no
    /// other descriptor of this process: a child that outlives a database connection or a
    /// listening socket of ours never holds it open.
    /// - Parameter environment: the child's whole environment; nil inherits this process's.
    package static func spawn(_ argv: [String], environment: [String: String]? = nil, outputPath: String) throws
        -> pid_t
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard closeFrom(&actions, 3) == 0 else { throw Failure(description: "cannot keep descriptors from \(argv[0])") }
        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnvironment: [UnsafeMutablePointer<CChar>?]? = environment.map {
            $0.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer {
            cArguments.forEach { free($0) }
            cEnvironment?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result =
            if var cEnvironment {
                posix_spawn(&pid, argv[0], &actions, nil, cArguments, &cEnvironment)
            } else {
                posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
            }
        guard result == 0 else {
            throw Failure(description: "cannot start \(argv[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare: found at run time.
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else {
            fatalError("this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later is needed)")
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Waits for `pid` to end: its exit status, or 128 + the signal that ended it.
    package static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs to completion; returns the exit status and the combined output.
    package static func run(_ argv: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, output: String
    ) {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
            "backoffice-\(UUID().uuidString).log"
        ).path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let status = wait(try spawn(argv, environment: environment, outputPath: outputPath))
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }
}
