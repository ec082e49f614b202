import StallMonitor

extension StallBudget.Watch {
    /// What a Swift Testing budget watches when the test names nothing: the concurrency pool,
    /// where Swift Testing runs test bodies (`async` and synchronous ones) and the tasks they
    /// start, and the MainActor, where `@MainActor` tests run. When the MainActor cannot be
    /// watched (its queue is drained by a main thread that runs `RunLoop.main`, or this
    /// libdispatch is unknown), the pool alone; when the pool cannot, the MainActor alone.
    package static let swiftTestingTask = Self(name: "the concurrency pool and the MainActor, where the test body runs")
    {
        try startFirst($0, of: [[.concurrencyPool, .mainActor], [.concurrencyPool], [.mainActor]])
    }

    /// What an `async` XCTest body's budget watches when it names nothing: the main run loop (which
    /// runs while XCTest waits for the async test, and drains the MainActor there) and the
    /// concurrency pool, where the body runs.
    package static let asyncXCTestTask = Self(
        name: "the main run loop and the concurrency pool, where the test body runs"
    ) {
        try startFirst($0, of: [[.main, .concurrencyPool], [.concurrencyPool], [.main]])
    }

    /// What a synchronous XCTest body's budget watches when it names nothing: the calling thread's
    /// run loop (the main one under XCTest), which runs while the test waits for expectations.
    package static let callingThreadRunLoop = Self(
        name: "the test thread's run loop (it runs only while the test waits)"
    ) {
        try StallMonitor.start($0, loop: .current)
    }

    /// Starts a monitor for the first of `choices` that can be watched; throws the first choice's
    /// error when none can.
    private static func startFirst(
        _ configuration: StallMonitor.Configuration, of choices: [[StallMonitor.Loop]]
    ) throws -> StallMonitor {
        var first: (any Error)?
        for loops in choices {
            do {
                return try StallMonitor.start(configuration, loops: loops)
            } catch {
                first = first ?? error
            }
        }
        throw first!
    }
}
