import Foundation
import Glibc
import StallReportKit

/// Figure 10: stacks of stalls spent asleep in the kernel, and what a stack costs the watchdog.
/// The main loop blocks in five kinds of call (usleep, nanosleep, poll, read on a pipe, a
/// semaphore wait); the monitor never signals a sleeping thread but copies its frozen stack and
/// unwinds the copy. A sample counts when its stack reaches the app function that made the call
/// and the run loop below it. Then a CPU-bound stall, 100 frames deep, for the cost of a running
/// thread's snapshot (signal round trip and unwinding on the watchdog).
enum BlockingStacksFigure {
    /// Stalls blocked in each kind of call, after one warm-up stall of each kind (it opens the
    /// unwinder's session and loads the CFI of the code on the way: not counted in the cost per
    /// stack; figure 5d is the cold report).
    private struct BlockedRun {
        var arrivals: [MonitorSession.Arrival]
        var stacks: Int
        var meanNanoseconds: Double
    }

    /// A CPU-bound stall 80 recursions deep, after a warm-up spin.
    private struct RunningRun {
        var stacks: Int
        var meanNanoseconds: Double
        var frames: Double
        var unwinders: Set<String>
    }

    private static let milliseconds = 320

    private static func blocked(_ context: BenchContext, rounds: Int, symbolicateInProcess: Bool) throws -> BlockedRun {
        let session = try MonitorSession(context, symbolicateInProcess: symbolicateInProcess)
        MainLoop.run(
            steps: BlockingCall.allCases.map { call in .init(gap: 0.1) { call.block(milliseconds: milliseconds) } })
        session.settle()
        let warm = session.monitor.statistics
        let warmReports = session.arrivals.count
        var steps: [MainLoop.Step] = []
        for _ in 0..<rounds {
            for call in BlockingCall.allCases {
                steps.append(.init(gap: 0.1) { call.block(milliseconds: milliseconds) })
            }
        }
        MainLoop.run(steps: steps)
        session.stop()
        let statistics = session.monitor.statistics
        let stacks = statistics.watchdogStacks - warm.watchdogStacks
        let arrivals = Array(session.arrivals.dropFirst(warmReports))
        guard warmReports == BlockingCall.allCases.count, arrivals.count == steps.count else {
            throw BenchError(
                "\(BlockingCall.allCases.count + steps.count) blocking stalls gave \(warmReports + arrivals.count) reports"
            )
        }
        let nanoseconds = Double(statistics.watchdogStackNanoseconds - warm.watchdogStackNanoseconds)
        return BlockedRun(arrivals: arrivals, stacks: stacks, meanNanoseconds: nanoseconds / Double(max(stacks, 1)))
    }

    private static func running(_ context: BenchContext, symbolicateInProcess: Bool) throws -> RunningRun {
        let session = try MonitorSession(context, symbolicateInProcess: symbolicateInProcess)
        let spin = context.pick(1.5, quick: 0.4)
        let deepSpin: @Sendable (Double) -> Void = { seconds in
            _ = Workloads.recurse(80) { Workloads.spin(until: CStallClock.now() + UInt64(seconds * 1e9)) }
        }
        MainLoop.run(steps: [.init(gap: 0.1) { deepSpin(0.4) }])
        session.settle()
        let warm = session.monitor.statistics
        MainLoop.run(steps: [.init(gap: 0.1) { deepSpin(spin) }])
        session.stop()
        let statistics = session.monitor.statistics
        let stacks = statistics.watchdogStacks - warm.watchdogStacks
        let samples = session.arrivals.last?.report.samples.filter { !$0.frames.isEmpty } ?? []
        return RunningRun(
            stacks: stacks,
            meanNanoseconds: Double(statistics.watchdogStackNanoseconds - warm.watchdogStackNanoseconds)
                / Double(max(stacks, 1)),
            frames: Stats.median(samples.map { Double($0.frames.count) }),
            unwinders: Set(samples.compactMap(\.unwinder)))
    }

    /// A row of the watchdog's mean time per stack with names left to `stallreport` (`mean` over
    /// `stacks`), against row `inProcessRow`'s mean with names made in process; `data` adds to the
    /// row's numbers.
    private static func deferredNamesRow(
        _ figure: String, _ name: String, mean: Double, stacks: Int, of inProcessRow: String, inProcessMean: Double,
        method: String, data: [String: Double] = [:]
    ) -> ResultRow {
        let ratio = mean / max(inProcessMean, 1)
        return ResultRow(
            figure, name,
            value: "mean \(Format.micro(mean)) (\(stacks) stacks; \(Format.fixed(ratio, 2))× \(inProcessRow))",
            goal: "stated", verdict: .info, method: method + ", names left to stallreport",
            data: data.merging(
                ["meanNanoseconds": mean, "stacks": Double(stacks), "ratioTo\(inProcessRow)": ratio]
            ) { _, new in new })
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(4, quick: 1)
        let blocked = try Self.blocked(context, rounds: rounds, symbolicateInProcess: true)
        var sleeping = 0
        var reachApp = 0
        var reachLoop = 0
        var callers = Set<String>()
        for (index, arrival) in blocked.arrivals.enumerated() {
            let report = arrival.report
            let call = BlockingCall.allCases[index % BlockingCall.allCases.count]
            for sample in report.samples where sample.syscall != nil {
                sleeping += 1
                let symbols = sample.frames.map { report.frames[$0].symbol ?? "" }
                if symbols.contains(where: { $0.contains(call.function) }) {
                    reachApp += 1
                    callers.insert(call.function)
                    if symbols.contains(where: { $0.contains("CFRunLoopRun") }) { reachLoop += 1 }
                }
            }
        }
        let appShare = Double(reachApp) / Double(max(sleeping, 1))
        let loopShare = Double(reachLoop) / Double(max(sleeping, 1))
        let running = try Self.running(context, symbolicateInProcess: true)
        // Names left to `stallreport`: the stacks come from libunwind's remote unwinder (x86_64).
        let deferredBlocked = try Self.blocked(context, rounds: rounds, symbolicateInProcess: false)
        let deferredRunning = try Self.running(context, symbolicateInProcess: false)
        let deferredUnwinders = Set(deferredBlocked.arrivals.flatMap { $0.report.samples.compactMap(\.unwinder) })
            .sorted().joined(separator: ", ")

        let kinds = BlockingCall.allCases.map(\.rawValue).joined(separator: ", ")
        let method =
            "\(rounds) × \(BlockingCall.allCases.count) stalls of \(milliseconds) ms on the main RunLoop blocked in \(kinds); threshold 250 ms, sampling every 10 ms from 125 ms; release build; a sample counts when one of its frames is the app function that made the call"
        let blockedMethod =
            "statistics.watchdogStackNanoseconds / watchdogStacks over the blocking stalls after one warm-up stall of each kind: reading the syscall file, copying the frozen stack (process_vm_readv, up to 64 KiB), checking the thread did not move, unwinding the copy"
        let runningMethod =
            "as 10c for a \(context.pick(1.5, quick: 0.4)) s CPU spin 80 recursions deep after a warm-up spin: signal round trip (the thread's own pause is figure 3) and unwinding the snapshot"
        return FigureResult(
            figure: .blockingStacks,
            rows: [
                .judged(
                    "10a", "Blocking-syscall samples whose stack reaches the app frame that blocked",
                    value:
                        "\(Format.percent(appShare)) (\(reachApp) of \(sleeping) samples; all \(BlockingCall.allCases.count) callers seen: \(callers.count == BlockingCall.allCases.count ? "yes" : "no, \(callers.sorted())"))",
                    goal: "100 %", ok: sleeping > 0 && reachApp == sleeping, method: method,
                    data: ["share": appShare, "samples": Double(sleeping), "reachingApp": Double(reachApp)]),
                ResultRow(
                    "10b", "… and also the run loop below it",
                    value: "\(Format.percent(loopShare)) (\(reachLoop) of \(sleeping))",
                    goal: "stated", verdict: .info, method: method + "; and a frame in CFRunLoopRun",
                    data: ["share": loopShare, "reachingLoop": Double(reachLoop)]),
                ResultRow(
                    "10c", "Watchdog time per stack of a thread asleep in a syscall",
                    value: "mean \(Format.micro(blocked.meanNanoseconds)) (\(blocked.stacks) stacks)",
                    goal: "stated", verdict: .info, method: blockedMethod + " with libdw",
                    data: ["meanNanoseconds": blocked.meanNanoseconds, "stacks": Double(blocked.stacks)]),
                ResultRow(
                    "10d", "Watchdog time per stack of a running thread (~\(Int(running.frames)) frames)",
                    value: "mean \(Format.micro(running.meanNanoseconds)) (\(running.stacks) stacks)",
                    goal: "stated", verdict: .info, method: runningMethod + " with libdw",
                    data: [
                        "meanNanoseconds": running.meanNanoseconds, "stacks": Double(running.stacks),
                        "frames": running.frames,
                    ]),
                deferredNamesRow(
                    "10e", "As 10c with names deferred (symbolicateInProcess off: \(deferredUnwinders))",
                    mean: deferredBlocked.meanNanoseconds, stacks: deferredBlocked.stacks, of: "10c",
                    inProcessMean: blocked.meanNanoseconds, method: blockedMethod),
                deferredNamesRow(
                    "10f",
                    "As 10d with names deferred (\(deferredRunning.unwinders.sorted().joined(separator: ", ")), ~\(Int(deferredRunning.frames)) frames)",
                    mean: deferredRunning.meanNanoseconds, stacks: deferredRunning.stacks, of: "10d",
                    inProcessMean: running.meanNanoseconds, method: runningMethod,
                    data: ["frames": deferredRunning.frames]),
            ])
    }
}

/// The calls figure 10 blocks the main loop in, each made from its own function.
enum BlockingCall: String, CaseIterable {
    case usleep, nanosleep, poll
    case pipeRead = "read (pipe)"
    case semaphore = "semaphore wait"

    /// The app function that makes the call (a substring of its demangled name).
    var function: String {
        switch self {
        case .usleep: "sleepInUsleep"
        case .nanosleep: "sleepInNanosleep"
        case .poll: "sleepInPoll"
        case .pipeRead: "readFromPipe"
        case .semaphore: "waitOnSemaphore"
        }
    }

    func block(milliseconds: Int) {
        switch self {
        case .usleep: BlockingLeaves.sleepInUsleep(milliseconds)
        case .nanosleep: BlockingLeaves.sleepInNanosleep(milliseconds)
        case .poll: BlockingLeaves.sleepInPoll(milliseconds)
        case .pipeRead: BlockingLeaves.readFromPipe(milliseconds)
        case .semaphore: BlockingLeaves.waitOnSemaphore(milliseconds)
        }
    }
}

/// One function per blocking call, kept out of line so that each is a frame of its own.
enum BlockingLeaves {
    // Each checks the call's result afterwards: a call in tail position would be a jump in a
    // release build, and the function would have no frame of its own while the call sleeps.

    @inline(never)
    static func sleepInUsleep(_ milliseconds: Int) {
        if usleep(UInt32(milliseconds * 1_000)) != 0 { failed("usleep") }
    }

    @inline(never)
    static func sleepInNanosleep(_ milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    @inline(never)
    static func sleepInPoll(_ milliseconds: Int) {
        if poll(nil, 0, Int32(milliseconds)) != 0 { failed("poll") }
    }

    @inline(never)
    static func readFromPipe(_ milliseconds: Int) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        let (reading, writing) = (ends[0], ends[1])
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            var byte: UInt8 = 1
            _ = write(writing, &byte, 1)
        }
        var byte: UInt8 = 0
        if read(reading, &byte, 1) != 1 { failed("read") }
        close(reading)
        close(writing)
    }

    @inline(never)
    static func waitOnSemaphore(_ milliseconds: Int) {
        let semaphore = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { semaphore.signal() }
        semaphore.wait()
        blackHole(semaphore)
    }

    @inline(never)
    static func blackHole(_ value: AnyObject) {
        withExtendedLifetime(value) {}
    }

    static func failed(_ call: String) {
        FileHandle.standardError.write(Data("stall-bench: \(call) failed: errno \(errno)\n".utf8))
    }
}
