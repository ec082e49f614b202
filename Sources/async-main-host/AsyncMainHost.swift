import Foundation
import Logging
import StallMonitor

/// A host whose `main` is `async`: its main thread parks and its MainActor runs on Dispatch worker
/// threads, so no main RunLoop ever runs. It shows what StallMonitor does there (tests and the
/// README): started from a worker thread with `loop: .main` it refuses at once, pointing to
/// `.mainActor`; started on the main thread before the first `await`, it says within
/// `loopSilenceWarning` that the loop never ran; started with `loop: .mainActor`, it reports a
/// MainActor stall with the worker thread that ran it.
///
///     async-main-host refuse            # exit 3, the error on stderr
///     async-main-host silent            # exit 0; the warning on stderr, then `watchedLoops` on stdout
///     async-main-host cpu <dir> [<s>]   # a @MainActor function spins 400 ms (after <s> idle seconds); reports in <dir>
///     async-main-host block <dir> [<s>] # a @MainActor function sleeps 400 ms
///     async-main-host short <dir>       # 5000 short MainActor jobs, then 200 main-queue blocks
///     async-main-host expected <dir>    # 400 ms of MainActor work declared with expectLongWork
///     async-main-host idle <dir> <s>    # nothing runs for <s> seconds: the watchdog's cost
///     async-main-host idle-unwatched <dir> <s>  # the same idle period with no monitor (a baseline)
///
/// Both idle modes print `ready` (flushed) when the idle period begins, for a measurer outside.
@main
struct AsyncMainHost {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let mode = arguments.first ?? "refuse"
        let given = arguments.count > 1 ? URL(fileURLWithPath: arguments[1]) : nil
        let reports =
            given ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("async-main-host-\(getpid())")
        defer { if given == nil { try? FileManager.default.removeItem(at: reports) } }
        var configuration = StallMonitor.Configuration(
            threshold: .milliseconds(250), reportDirectory: reports,
            loopSilenceWarning: .milliseconds(500))
        configuration.logger = Logger(label: "async-main-host") { StreamLogHandler.standardError(label: $0) }
        switch mode {
        case "silent":
            // Still on the main thread: the monitor arms, but RunLoop.main never runs.
            let monitor: StallMonitor
            do { monitor = try StallMonitor.start(configuration, loop: .main) } catch {
                FileHandle.standardError.write(Data("async-main-host: \(error)\n".utf8))
                exit(2)
            }
            try? await Task.sleep(for: .milliseconds(1_500))
            print("hasRun \(monitor.watchedLoops.map(\.hasRun))")
            await monitor.stop()
        case "idle-unwatched":
            await idleUnwatched(seconds: arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2)
        case "cpu", "block", "short", "expected", "idle":
            await watchMainActor(
                mode: mode, configuration: configuration,
                idleSeconds: arguments.count > 2 ? Double(arguments[2]) ?? 0 : mode == "idle" ? 2 : 0)
        default:
            try? await Task.sleep(for: .milliseconds(50))  // now on a Dispatch worker thread
            do {
                let monitor = try StallMonitor.start(configuration, loop: .main)
                print("started (unexpected)")
                await monitor.stop()
            } catch {
                FileHandle.standardError.write(Data("async-main-host: \(error)\n".utf8))
                exit(3)
            }
        }
    }

    /// Watches the MainActor, runs the mode's MainActor work, and prints what happened.
    @MainActor
    static func watchMainActor(mode: String, configuration: StallMonitor.Configuration, idleSeconds: Double) async {
        let monitor: StallMonitor
        do { monitor = try StallMonitor.start(configuration, loop: .mainActor) } catch {
            FileHandle.standardError.write(Data("async-main-host: \(error)\n".utf8))
            exit(2)
        }
        try? await Task.sleep(for: .milliseconds(200))  // the main thread parks; workers drain the main queue
        if mode == "cpu" || mode == "block", idleSeconds > 0 {
            // Idle long enough and libdispatch retires its idle workers (after 5 s): the stall
            // then runs on a worker the monitor never armed.
            try? await Task.sleep(for: .seconds(idleSeconds))
        }
        switch mode {
        case "cpu":
            let (tid, ms) = MainActorWork.spinOnMainActorForTest(milliseconds: 400)
            print("stalled thread \(tid) for \(String(format: "%.1f", ms)) ms")
        case "block":
            let (tid, ms) = MainActorWork.sleepOnMainActorForTest(milliseconds: 400)
            print("stalled thread \(tid) for \(String(format: "%.1f", ms)) ms")
        case "short":
            let jobs = await MainActorWork.shortJobs(5_000)
            print("ran \(jobs) short MainActor jobs")
        case "expected":
            let (tid, ms) = monitor.expectLongWork { MainActorWork.spinOnMainActorForTest(milliseconds: 400) }
            print("expected long work on thread \(tid) for \(String(format: "%.1f", ms)) ms")
        default:
            print("ready")
            fflush(nil)  // every stream: `stdout` is a global var Swift 6 will not read
            // Measured off the MainActor: the main queue stays idle meanwhile.
            let line = await Task.detached { WatchdogCost.measure(seconds: idleSeconds) }.value
            print(line)
            print("main-queue enqueues wake the watchdog: \(Kernel.mainQueueEnqueuesWakeWatchdog)")
        }
        try? await Task.sleep(for: .milliseconds(300))
        await monitor.flush(timeout: .seconds(10))
        let statistics = monitor.statistics
        print(
            "spans \(statistics.spans) stalls \(statistics.stallsDetected) reports \(statistics.reportsWritten) "
                + "expected \(statistics.expectedLongWork)")
        print("watched \(monitor.watchedLoops.map { "\($0.kind) hasRun=\($0.hasRun)" })")
        let signal = monitor.signal
        await monitor.stop()
        var action = sigaction()
        sigaction(signal, nil, &action)
        let restored = action.__sigaction_handler.sa_handler == nil  // SIG_DFL
        print("sampling signal \(signal == SIGPROF ? "SIGPROF" : "\(signal)"), default again after stop: \(restored)")
    }
}

extension AsyncMainHost {
    /// The `idle` mode's idle period without a monitor: the same settling sleep on the MainActor,
    /// then a pool thread blocked for `seconds` while the MainActor awaits it.
    @MainActor
    static func idleUnwatched(seconds: Double) async {
        try? await Task.sleep(for: .milliseconds(200))
        print("ready")
        fflush(nil)  // every stream: `stdout` is a global var Swift 6 will not read
        await Task.detached { _ = usleep(UInt32(seconds * 1e6)) }.value
        print("unwatched idle period over (\(seconds) s)")
    }
}

/// The MainActor work of the modes, each in a function of its own so a stack names it.
@MainActor
enum MainActorWork {
    /// Spins `milliseconds` on the CPU; returns the thread that ran it and how long it took.
    @inline(never)
    static func spinOnMainActorForTest(milliseconds: Int) -> (thread: String, ms: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(milliseconds) * 1_000_000
        var sink: UInt64 = 1
        while DispatchTime.now().uptimeNanoseconds < end {
            for value in 0..<500 { sink = sink &* 31 &+ UInt64(value) }
        }
        if sink == 42 { print("") }
        return (currentThreadID(), Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }

    /// Sleeps `milliseconds`; returns the thread that ran it and how long it took.
    @inline(never)
    static func sleepOnMainActorForTest(milliseconds: Int) -> (thread: String, ms: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        usleep(UInt32(milliseconds) * 1000)
        return (currentThreadID(), Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }

    /// Runs `count` short MainActor jobs, each a hop from a task off the MainActor, then a burst
    /// of 200 blocks queued on the main queue at once; returns how many jobs ran.
    nonisolated static func shortJobs(_ count: Int) async -> Int {
        var ran = 0
        for index in 0..<count {
            ran += await MainActor.run { index % 7 == 8 ? 0 : 1 }
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for _ in 0..<200 {
                group.enter()
                DispatchQueue.main.async {
                    usleep(100)
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        return ran + 200
    }

    /// The kernel id of the calling thread (from /proc/thread-self).
    nonisolated static func currentThreadID() -> String {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
        return String(link.split(separator: "/").last ?? "?")
    }
}

/// The watchdog thread's wake-ups and CPU time over an idle period, from `/proc`.
enum WatchdogCost {
    static func measure(seconds: Double) -> String {
        guard let tid = thread(named: "stall-watchdog"), let before = counts(tid) else {
            return "no stall-watchdog thread"
        }
        usleep(UInt32(seconds * 1e6))
        guard let after = counts(tid) else { return "the watchdog thread went away" }
        let wakeups = Double(after.switches - before.switches) / seconds
        let cpu = Double(after.cpuNanos - before.cpuNanos) / seconds / 1e3
        return String(
            format: "idle %.1f s: %.1f watchdog wake-ups/s, %.0f µs of watchdog CPU per second", seconds, wakeups, cpu)
    }

    /// The kernel id of this process's thread named `name`.
    static func thread(named name: String) -> String? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.first { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// The thread's voluntary context switches and time on a CPU (schedstat, ns).
    static func counts(_ tid: String) -> (switches: UInt64, cpuNanos: UInt64)? {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8),
            let schedstat = try? String(contentsOfFile: "/proc/self/task/\(tid)/schedstat", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
            let switches = UInt64(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? ""),
            let cpu = schedstat.split(separator: " ").first.flatMap({ UInt64($0) })
        else { return nil }
        return (switches, cpu)
    }
}
