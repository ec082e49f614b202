import StallMonitor

/// A report directory of the test's own and a loop thread named `name`, not monitored yet. When
/// `body` returns or throws, the thread is stopped and the directory is removed.
func withLoopThread<T>(
    _ name: String,
    label: String = #function,
    _ body: (ReportDirectory, MonitoredLoopThread) throws -> T
) throws -> T {
    let directory = ReportDirectory(label)
    defer { directory.remove() }
    let loop = try MonitoredLoopThread(name: name)
    defer { loop.stop() }
    return try body(directory, loop)
}

/// `withLoopThread` for an async test.
func withLoopThread<T>(
    _ name: String,
    label: String = #function,
    _ body: (ReportDirectory, MonitoredLoopThread) async throws -> T
) async throws -> T {
    let directory = ReportDirectory(label)
    defer { directory.remove() }
    let loop = try MonitoredLoopThread(name: name)
    defer { loop.stop() }
    return try await body(directory, loop)
}

/// The arrange step most loop tests share: a report directory of the test's own, a loop thread
/// named `name`, and a monitor of that loop writing into the directory, with the tests' default
/// configuration (threshold 250 ms) changed by `configure`. When `body` returns or throws, the
/// monitor and then the thread are stopped and the directory is removed.
func withMonitoredLoop<T>(
    _ name: String,
    label: String = #function,
    configure: (inout StallMonitor.Configuration) -> Void = { _ in },
    _ body: (ReportDirectory, MonitoredLoopThread, StallMonitor) throws -> T
) throws -> T {
    try withLoopThread(name, label: label) { directory, loop in
        var configuration = directory.configuration()
        configure(&configuration)
        let monitor = try loop.startMonitor(configuration)
        defer { monitor.stop() }
        return try body(directory, loop, monitor)
    }
}
