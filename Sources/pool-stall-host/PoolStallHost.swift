import Foundation
import Logging
import StallMonitor

/// A host with `async main` whose tasks stall the Swift concurrency pool in known ways, watched
/// with `loops: [.concurrencyPool]` (tests and the README). Each mode prints one line per stall it
/// caused (`stalled thread <tid> (<name>) for <ms> ms in <function>`, then ` (preempted)` or
/// ` (slept <n> times)` where one call was timed and its thread disturbed: ``CallerClock``),
/// measured by the stalling code itself, then the monitor's statistics.
///
///     pool-stall-host <mode> <dir>
///
/// Modes: `detached` (Task.detached sleeps 400 ms in usleep), `task` (Task {} spins 400 ms),
/// `group` (a task-group child waits 400 ms on a DispatchSemaphore), `asynclet` (an `async let`
/// child blocks 400 ms in read() on a pipe), `actor` (an actor method spins 400 ms), `starve`
/// (as many tasks as the pool has threads each sleep 600 ms at once), `short` (20,000 short jobs
/// over about 2 s: no stall), `expected` (400 ms of CPU in a task, declared with `expectLongWork`:
/// no report), `both` (watched with `loops: [.mainActor, .concurrencyPool]`: a MainActor function
/// spins 400 ms, then a detached task sleeps 400 ms), `chains` (one stall in each shape of async
/// call, with the ground truth of its async callers: see `ChainWork`; `chains <dir> <shape>` runs
/// one shape, and with `POOL_STALL_HOST_CRASH=1` its leaf crashes instead, for the Swift runtime's
/// backtracer), `after-idle` (the pool idles 2 s and the watchdog's wake-ups in it are printed
/// as `idle wake-ups <n> in 2 s`; then a detached task spins 400 ms; after another idle second a
/// task that slept 300 ms in `Task.sleep` blocks 400 ms in usleep), `blocking` (watched with
/// `blockingCalls`, threshold 5 ms, a report a second: three detached tasks each wait 30 ms on a
/// DispatchSemaphore, each printed as a stall line, and three tasks await 30 ms in `Task.sleep`),
/// `blocking-places` (watched with `loops: [.mainActor, .concurrencyPool]` and `blockingCalls`,
/// threshold 1 ms: semaphore waits of 2, 5, 20 and 100 ms in a `Task`, a task-group child, an
/// `async let`, an actor method and a `@MainActor` function, each with an awaiting control; see
/// `BlockingPlaces`), `idle` (nothing for 2 s; `idle <dir> <s>`: for <s> seconds), `idle-unwatched`
/// (the same idle period with no monitor, a baseline). Both idle modes print `ready` (flushed)
/// when the idle period begins, for a measurer outside. `hook` prints whether the runtime's
/// `swift_task_enqueueGlobal_hook` is set before a monitor of the pool starts, while it runs, and
/// after it stopped (`hook before <nil|set> watching <nil|set> stopped <nil|set>`).
@main
struct PoolStallHost {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: pool-stall-host <mode> <report-directory>\n".utf8))
            exit(64)
        }
        let mode = arguments[0]
        let idleSeconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2
        if mode == "hook" {
            await printHookLifetime(directory: arguments[1])
            return
        }
        if mode == "idle-unwatched" {
            try? await Task.sleep(for: .milliseconds(100))
            await idle(seconds: idleSeconds)
            return
        }
        var configuration = StallMonitor.Configuration(
            threshold: .milliseconds(250), reportDirectory: URL(fileURLWithPath: arguments[1]))
        configuration.logger = Logger(label: "pool-stall-host") { StreamLogHandler.standardError(label: $0) }
        if mode == "blocking" {
            configuration.blockingCalls = .init(threshold: .milliseconds(5), reportInterval: .seconds(1))
        }
        if mode == "blocking-places" {
            configuration.blockingCalls = .init(threshold: .milliseconds(1), reportInterval: .seconds(1))
        }
        let monitor: StallMonitor
        do {
            monitor =
                mode == "both" || mode == "blocking-places"
                ? try StallMonitor.start(configuration, loops: [.mainActor, .concurrencyPool])
                : try StallMonitor.start(configuration, loop: .concurrencyPool)
        } catch {
            FileHandle.standardError.write(Data("pool-stall-host: \(error)\n".utf8))
            exit(2)
        }
        try? await Task.sleep(for: .milliseconds(100))
        await run(mode, monitor: monitor, shape: arguments.count > 2 ? arguments[2] : nil)
        try? await Task.sleep(for: .milliseconds(300))
        await monitor.flush(timeout: .seconds(10))
        let statistics = monitor.statistics
        print(
            "spans \(statistics.spans) stalls \(statistics.stallsDetected) reports \(statistics.reportsWritten) "
                + "starvations \(statistics.poolStarvations) errors \(statistics.errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
        )
        await monitor.stop()
    }

    /// Runs a mode's work off the MainActor (`main` is MainActor code: a `Task {}` made there
    /// would run on the main queue, not on the pool).
    nonisolated static func run(_ mode: String, monitor: StallMonitor, shape: String?) async {
        switch mode {
        case "detached":
            await Task.detached { PoolWork.sleepInDetachedTaskForTest(milliseconds: 400).print() }.value
        case "task":
            await Task { PoolWork.spinInUnstructuredTaskForTest(milliseconds: 400).print() }.value
        case "group":
            await withTaskGroup(of: Void.self) { group in
                group.addTask { PoolWork.waitOnSemaphoreInGroupChildForTest(milliseconds: 400).print() }
            }
        case "asynclet":
            async let child = PoolWork.readPipeInAsyncLetForTest(milliseconds: 400)
            await child.print()
        case "actor":
            await SpinningActor().spinInActorMethodForTest(milliseconds: 400).print()
        case "starve":
            let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<width {
                    group.addTask { PoolWork.sleepWhileStarvingPoolForTest(milliseconds: 600).print() }
                }
            }
        case "chains":
            await ChainWork.run(only: shape)
        case "both":
            await MainActorWork.spinOnMainActorForTest(milliseconds: 400).print()
            try? await Task.sleep(for: .milliseconds(200))
            await Task.detached { PoolWork.sleepInDetachedTaskForTest(milliseconds: 400).print() }.value
        case "expected":
            await Task.detached {
                monitor.expectLongWork { PoolWork.spinInUnstructuredTaskForTest(milliseconds: 400) }.print()
            }.value
        case "after-idle":
            try? await Task.sleep(for: .milliseconds(1_500))  // new workers are looked at for a second
            let before = monitor.statistics.watchdogWakeups
            try? await Task.sleep(for: .seconds(2))
            print("idle wake-ups \(monitor.statistics.watchdogWakeups - before) in 2 s")
            await Task.detached { PoolWork.spinInUnstructuredTaskForTest(milliseconds: 400).print() }.value
            try? await Task.sleep(for: .milliseconds(1_000))
            await Task.detached {
                try? await Task.sleep(for: .milliseconds(300))
                PoolWork.sleepInDetachedTaskForTest(milliseconds: 400).print()
            }.value
        case "blocking":
            for _ in 0..<3 {
                await Task.detached { PoolWork.waitBrieflyOnSemaphoreForTest(milliseconds: 30).print() }.value
                try? await Task.sleep(for: .milliseconds(30))
            }
        case "blocking-places":
            await BlockingPlaces.run()
        case "short":
            let jobs = await PoolWork.shortJobs(seconds: 2)
            print("ran \(jobs) short jobs")
        default:
            await idle(seconds: shape.flatMap { Double($0) } ?? 2)
        }
    }

    /// The `hook` mode: the runtime's enqueue hook around a monitor's life.
    static func printHookLifetime(directory: String) async {
        func hook() -> String {
            guard let variable = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_task_enqueueGlobal_hook") else {
                return "absent"
            }
            return variable.load(as: UnsafeRawPointer?.self) == nil ? "nil" : "set"
        }
        let before = hook()
        guard
            let monitor = try? StallMonitor.start(
                .init(reportDirectory: URL(fileURLWithPath: directory)), loop: .concurrencyPool)
        else {
            print("start failed")
            return
        }
        try? await Task.sleep(for: .milliseconds(200))
        let watching = hook()
        await monitor.stop()
        print("hook before \(before) watching \(watching) stopped \(hook())")
    }

    /// The idle modes' period: `ready`, then a sleeping task on the pool for `seconds`.
    nonisolated static func idle(seconds: Double) async {
        print("ready")
        fflush(nil)  // every stream: `stdout` is a global var Swift 6 will not read
        try? await Task.sleep(for: .seconds(seconds))
    }
}

/// MainActor work (on the main queue's worker, not the pool).
@MainActor
enum MainActorWork {
    @inline(never)
    static func spinOnMainActorForTest(milliseconds: Int) -> StallFacts {
        PoolWork.measure(#function) { PoolWork.spin(milliseconds: milliseconds) }
    }
}

/// What a stalling function measured about itself.
struct StallFacts: Sendable {
    var thread: Int32
    var milliseconds: Double
    var function: String
    /// How the thread was disturbed around a call timed with ``CallerClock`` (then printed after
    /// the function, in parentheses), nil when it was not or the stall was not one call.
    var disturbance: String? = nil

    func print() {
        Swift.print(
            "stalled thread \(thread) (\((try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?")) for \(String(format: "%.3f", milliseconds)) ms in \(function)"
                + (disturbance.map { " (\($0))" } ?? "")
        )
    }
}
