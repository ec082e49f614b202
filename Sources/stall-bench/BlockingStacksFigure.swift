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
    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(4, quick: 1)
        let milliseconds = 320
        let session = try MonitorSession(context)
        // A first stall of each kind opens libdw's session and loads the CFI of the code on the
        // way: not counted in the cost per stack (figure 5d is the cold report).
        MainLoop.run(steps: BlockingCall.allCases.map { call in .init(gap: 0.1) { call.block(milliseconds: milliseconds) } })
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
        let blocked = session.monitor.statistics
        let blockedStacks = blocked.watchdogStacks - warm.watchdogStacks
        let arrivals = Array(session.arrivals.dropFirst(warmReports))
        guard warmReports == BlockingCall.allCases.count, arrivals.count == steps.count else {
            throw BenchError("\(BlockingCall.allCases.count + steps.count) blocking stalls gave \(warmReports + arrivals.count) reports")
        }

        var sleeping = 0
        var reachApp = 0
        var reachLoop = 0
        var callers = Set<String>()
        for (index, arrival) in arrivals.enumerated() {
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
        let blockedCost = Double(blocked.watchdogStackNanoseconds - warm.watchdogStackNanoseconds) / Double(max(blockedStacks, 1))

        let spinning = try MonitorSession(context)
        let spin = context.pick(1.5, quick: 0.4)
        let deepSpin: @Sendable (Double) -> Void = { seconds in
            _ = Workloads.recurse(80) { Workloads.spin(until: CStallClock.now() + UInt64(seconds * 1e9)) }
        }
        MainLoop.run(steps: [.init(gap: 0.1) { deepSpin(0.4) }])
        spinning.settle()
        let warmSpin = spinning.monitor.statistics
        MainLoop.run(steps: [.init(gap: 0.1) { deepSpin(spin) }])
        spinning.stop()
        let running = spinning.monitor.statistics
        let runningStacks = running.watchdogStacks - warmSpin.watchdogStacks
        let runningCost = Double(running.watchdogStackNanoseconds - warmSpin.watchdogStackNanoseconds) / Double(max(runningStacks, 1))
        let frames = spinning.arrivals.last.map { report in
            Stats.median(report.report.samples.filter { !$0.frames.isEmpty }.map { Double($0.frames.count) })
        } ?? 0

        let kinds = BlockingCall.allCases.map(\.rawValue).joined(separator: ", ")
        let method = "\(rounds) × \(BlockingCall.allCases.count) stalls of \(milliseconds) ms on the main RunLoop blocked in \(kinds); threshold 250 ms, sampling every 10 ms from 125 ms; release build; a sample counts when one of its frames is the app function that made the call"
        return FigureResult(figure: .blockingStacks, rows: [
            .judged("10a", "Blocking-syscall samples whose stack reaches the app frame that blocked",
                    value: "\(Format.percent(appShare)) (\(reachApp) of \(sleeping) samples; all \(BlockingCall.allCases.count) callers seen: \(callers.count == BlockingCall.allCases.count ? "yes" : "no, \(callers.sorted())"))",
                    goal: "100 %", ok: sleeping > 0 && reachApp == sleeping, method: method,
                    data: ["share": appShare, "samples": Double(sleeping), "reachingApp": Double(reachApp)]),
            ResultRow("10b", "… and also the run loop below it", value: "\(Format.percent(loopShare)) (\(reachLoop) of \(sleeping))",
                      goal: "stated", verdict: .info, method: method + "; and a frame in CFRunLoopRun",
                      data: ["share": loopShare, "reachingLoop": Double(reachLoop)]),
            ResultRow("10c", "Watchdog time per stack of a thread asleep in a syscall",
                      value: "mean \(Format.micro(blockedCost)) (\(blockedStacks) stacks)",
                      goal: "stated", verdict: .info,
                      method: "statistics.watchdogStackNanoseconds / watchdogStacks over the blocking stalls after one warm-up stall of each kind: reading the syscall file, copying the frozen stack (process_vm_readv, up to 64 KiB), checking the thread did not move, unwinding the copy with libdw",
                      data: ["meanNanoseconds": blockedCost, "stacks": Double(blockedStacks)]),
            ResultRow("10d", "Watchdog time per stack of a running thread (~\(Int(frames)) frames)",
                      value: "mean \(Format.micro(runningCost)) (\(runningStacks) stacks)",
                      goal: "stated", verdict: .info,
                      method: "as 10c for a \(spin) s CPU spin 80 recursions deep after a warm-up spin: signal round trip (the thread's own pause is figure 3) and unwinding the snapshot with libdw",
                      data: ["meanNanoseconds": runningCost, "stacks": Double(runningStacks), "frames": frames]),
        ])
    }
}

/// The calls figure 10 blocks the main loop in, each made from its own function.
enum BlockingCall: String, CaseIterable {
    case usleep, nanosleep, poll, pipeRead = "read (pipe)", semaphore = "semaphore wait"

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
