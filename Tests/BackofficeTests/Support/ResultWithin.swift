/// The result of `task` if it ends within `seconds`; nil if it has not by then, so that a test of
/// something that must answer records the hang instead of hanging itself.
func result<T: Sendable>(of task: Task<T, any Error>, within seconds: Int) async -> Result<T, any Error>? {
    let (first, give) = AsyncStream<Result<T, any Error>?>.makeStream()
    Task { give.yield(await task.result) }
    Task {
        try? await Task.sleep(for: .seconds(seconds))
        give.yield(nil)
    }
    for await result in first { return result }
    return nil
}
