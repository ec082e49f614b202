import Foundation

extension StallMonitor {
    /// ``stop()`` for async code: the blocking part (ending the watchdog thread, writing the
    /// queued reports, at most 5 s for the disk) runs on a thread of its own while the caller is
    /// suspended, so no cooperative thread is blocked. Calling it again does nothing.
    public func stop() async {
        await Self.onOwnThread(named: "StallMonitor.stop") { self.stop() }
    }

    /// ``flush(timeout:)`` for async code: waits, suspended, until reports of stalls already
    /// detected are on disk, at most `timeout`; false on timeout. No cooperative thread is blocked.
    @discardableResult
    public func flush(timeout: Duration = .seconds(5)) async -> Bool {
        await Self.onOwnThread(named: "StallMonitor.flush") { self.flush(timeout: timeout) }
    }

    /// Runs blocking `body` on a new thread and resumes the caller with its result.
    private static func onOwnThread<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            thread.start()
        }
    }
}
