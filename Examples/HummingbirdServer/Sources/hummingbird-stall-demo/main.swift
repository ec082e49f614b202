import Foundation
import Hummingbird
import Logging
import NIOPosix
import StallMonitor
import StallMonitorNIO

// A Hummingbird 2 server whose async routes stall in known ways. Hummingbird runs every route
// handler in a task on the Swift concurrency pool (not on an event loop), so the one call that
// watches a NIO server, `StallMonitor.start(_:eventLoopGroup:)`, watches the pool too.
//
//   hummingbird-stall-demo <report-directory> <port-file> [unwatched | without-blocking-calls]
//
// Routes (GET): /fast, /users/<id>?ms=N (a blocking lookup), /report?ms=N (CPU-bound rendering),
// /cache?ms=N (a DispatchSemaphore wait), /await?ms=N (awaits Task.sleep: never blocks); each
// timed route answers how long it took by its own clock ("… took 400.2 ms"). The monitor also
// reports blocking calls (`blockingCalls`, 10 ms and longer). `unwatched` runs without a
// monitor (the benchmark's baseline); `without-blocking-calls` watches the loops and the pool but
// not blocking calls (the baseline of the blocking-call detection's cost).
// STALL_DEMO_POLL_INTERVAL_MS in the environment sets how often the loops and the pool are looked
// at (default 20 ms; the benchmark stretches it under valgrind as valgrind stretches time).
// SIGTERM or SIGINT stops it gracefully.
let arguments = CommandLine.arguments
let mode = arguments.count == 4 ? arguments[3] : "watched"
guard arguments.count == 3 || (arguments.count == 4 && ["unwatched", "without-blocking-calls"].contains(mode)) else {
    FileHandle.standardError.write(
        Data("usage: hummingbird-stall-demo <report-directory> <port-file> [unwatched | without-blocking-calls]\n".utf8)
    )
    exit(64)
}
let reports = URL(fileURLWithPath: arguments[1], isDirectory: true)
let portFile = arguments[2]

var configuration = StallMonitor.Configuration(threshold: .milliseconds(250), reportDirectory: reports)
// The pool's delay for new work (the `stallmonitor.pool.delay` timer), printed at the end.
let poolDelay = PoolDelayRecorder()
configuration.metrics = .init(factory: poolDelay)
// Blocking calls in the routes (a pool worker put to sleep in the kernel for 10 ms or more) are
// written as blocking-calls reports beside the stall reports, aggregated by call site.
configuration.blockingCalls = mode == "without-blocking-calls" ? nil : .init()
configuration.onReport = { report, url in
    print(
        "wrote \(url.lastPathComponent)  \(Int(report.durationMs.rounded())) ms  \(report.loop.kind)  \(report.representativeFunction)"
    )
    fflush(nil)
}
let pollIntervalText = ProcessInfo.processInfo.environment["STALL_DEMO_POLL_INTERVAL_MS"]
let pollInterval = pollIntervalText.map { Int($0) ?? 0 } ?? 20
guard pollInterval >= 1 else {
    FileHandle.standardError.write(
        Data(
            "STALL_DEMO_POLL_INTERVAL_MS must be a whole number of milliseconds, at least 1 (is \"\(pollIntervalText ?? "")\")\n"
                .utf8))
    exit(64)
}
let monitor =
    mode == "unwatched"
    ? nil
    : try StallMonitor.start(
        configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        pollInterval: .milliseconds(pollInterval))

let router = Router()
router.get("fast") { _, _ in "ok" }
router.get("users/:id") { request, context -> String in
    let id = try context.parameters.require("id")
    return await RouteClock.timed { await UserController.show(id: id, milliseconds: request.milliseconds) }
}
router.get("report") { request, _ -> String in
    await RouteClock.timed { await ReportController.render(milliseconds: request.milliseconds) }
}
router.get("cache") { request, _ -> String in
    await RouteClock.timed { await CacheController.lookup(milliseconds: request.milliseconds) }
}
router.get("await") { request, _ -> String in
    await RouteClock.timed { await Pause.awaitBriefly(milliseconds: request.milliseconds) }
}

enum RouteClock {
    /// The route's answer and how long it took by its own clock.
    static func timed(_ body: () async -> String) async -> String {
        let start = DispatchTime.now().uptimeNanoseconds
        let answer = await body()
        return answer + " took " + String(format: "%.1f", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            + " ms"
    }
}

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { channel in
        try? "\(channel.localAddress?.port ?? 0)".write(toFile: portFile, atomically: true, encoding: .utf8)
    },
    logger: Logger(label: "hummingbird-stall-demo") { _ in SwiftLogNoOpLogHandler() })
try await app.runService()
if let monitor {
    monitor.stop()
    let statistics = monitor.statistics
    print(
        "stalls \(statistics.stallsDetected), reports \(statistics.reportsWritten), pool starvations \(statistics.poolStarvations)"
    )
    print(poolDelay.summary())
}

extension Request {
    /// The `ms` query parameter (how long a route stalls).
    var milliseconds: Int { uri.queryParameters.get("ms", as: Int.self) ?? 400 }
}

/// Route handlers, each stalling in a function of its own so reports name it.
enum UserController {
    static func show(id: String, milliseconds: Int) async -> String {
        await Database.fetchUser(id: id, milliseconds: milliseconds)
    }
}

enum Database {
    /// A blocking call in async code: holds a pool worker while it sleeps.
    @inline(never)
    static func fetchUser(id: String, milliseconds: Int) async -> String {
        usleep(UInt32(milliseconds) * 1_000)
        return "user \(id)"
    }
}

enum ReportController {
    /// CPU-bound work in async code: holds a pool worker while it spins.
    @inline(never)
    static func render(milliseconds: Int) async -> String {
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<500 { sink = sink &* 31 &+ UInt64(value) }
        }
        return "rendered \(sink % 10)"
    }
}

enum CacheController {
    /// Waiting on a semaphore in async code: holds a pool worker while it waits.
    @inline(never)
    static func lookup(milliseconds: Int) async -> String {
        let filled = DispatchSemaphore(value: 0)
        _ = filled.wait(timeout: .now() + .milliseconds(milliseconds))
        return "cache miss"
    }
}

enum Pause {
    /// Waiting the way async code should: the worker is free meanwhile.
    @inline(never)
    static func awaitBriefly(milliseconds: Int) async -> String {
        try? await Task.sleep(for: .milliseconds(milliseconds))
        return "awaited"
    }
}
