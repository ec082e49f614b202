import ArgumentParser
import CoreFoundation
import Dispatch
import Foundation
import Glibc
import StallMonitor
import Synchronization

/// `stall-bench instruction-loop`: the workloads `stall-bench instruction-counts` runs under
/// callgrind. Each makes `--count` operations inside one function callgrind collects in
/// (`measured…`), with StallMonitor watching (`--monitored`) or with the baseline the
/// cost is judged against (`--no-monitored`); everything else (start, warm-up, stop) is outside.
struct InstructionLoop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instruction-loop", abstract: "Workloads of stall-bench instruction-counts.", shouldDisplay: false)

    /// What is counted.
    enum Workload: String, ExpressibleByArgument, CaseIterable {
        /// One pass of the main RunLoop: a monitor's observers vs bare observers of the same activities.
        case runLoopPass = "runloop-pass"
        /// One `epoll_wait` return on a watched loop's thread through the shim's `epoll_wait` vs
        /// the C library's `epoll_pwait` called directly.
        case epollWait = "epoll-wait"
        /// One job enqueued on the concurrency pool (a `Task.detached`) while a monitor watches
        /// the pool: the enqueue hook's own work (no baseline: without a monitor it does not run).
        case poolJob = "pool-job"
    }

    @Option(help: "The workload: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workload: Workload

    @Option(help: "How many operations are counted.")
    var count = 10_000

    @Flag(inversion: .prefixedNo, help: "Run with StallMonitor watching (else the baseline).")
    var monitored = true

    func run() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "stall-bench-icount-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A threshold nothing reaches: only the probes' own paths run, never a sample.
        var configuration = StallMonitor.Configuration(threshold: .seconds(3600), reportDirectory: directory)
        configuration.logger.logLevel = .critical
        switch workload {
        case .runLoopPass: try runLoopPasses(configuration)
        case .epollWait: try epollWaits(configuration)
        case .poolJob: try poolJobs(configuration)
        }
    }

    private func runLoopPasses(_ configuration: StallMonitor.Configuration) throws {
        let monitor = monitored ? try StallMonitor.start(configuration) : nil
        let bare = monitored ? nil : BareObserver()
        let parked = monitored ? nil : ParkedThread()
        // A timer that never fires keeps the mode from being empty (CoreFoundation runs no pass
        // of an empty mode, and calls no observer).
        let timer = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
        RunLoop.main.add(timer, forMode: .common)
        // No warm-up: a function that runs the same passes would be folded into this one by the
        // optimizer and counted with it. What the first pass sets up (the mode's name) is spread
        // over the passes, the same in every run.
        measuredRunLoopPasses(count)
        timer.invalidate()
        bare?.remove()
        parked?.stop()
        monitor?.stop()
    }

    private func epollWaits(_ configuration: StallMonitor.Configuration) throws {
        let epfd = Kernel.epollCreate()
        guard epfd >= 0 else { throw ValidationError("epoll_create1 failed: errno \(errno)") }
        defer { close(epfd) }
        let loop = CountingLoop(epfd: epfd)
        let thread = Thread { loop.run() }
        thread.start()
        let monitor =
            monitored
            ? try StallMonitor.start(
                configuration, loops: [], polling: [loop.polledLoop], pollInterval: .milliseconds(10)) : nil
        // The monitor queued its registration on the loop (start returned after attaching):
        // the loop runs it, then counts.
        loop.count(count, throughShim: monitored)
        monitor?.stop()
        loop.stop()
    }

    private func poolJobs(_ configuration: StallMonitor.Configuration) throws {
        let monitor = monitored ? try StallMonitor.start(configuration, loops: [.concurrencyPool]) : nil
        // The watchdog watches the enqueues from its first sleep on (slow under valgrind).
        let deadline = Kernel.monotonicNanoseconds() + 60_000_000_000
        while monitored, !Kernel.poolEnqueuesWatched {
            guard Kernel.monotonicNanoseconds() < deadline else {
                throw ValidationError("the pool's enqueues were not watched within 60 s")
            }
            usleep(1_000)
        }
        let finished = JobCounter()
        // Callgrind counts the hook's own functions on every thread, so these 100 are counted too.
        measuredPoolJobs(100, finished)
        while finished.value.load(ordering: .acquiring) < 100 { usleep(1_000) }
        measuredPoolJobs(count, finished)
        while finished.value.load(ordering: .acquiring) < 100 + count { usleep(1_000) }
        monitor?.stop()
    }
}

/// `count` passes of the main RunLoop (one `CFRunLoopRunInMode` with a zero timeout each).
@inline(never)
func measuredRunLoopPasses(_ count: Int) {
    for _ in 0..<count { _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true) }
}

/// `count` detached tasks that each add one to `finished`.
@inline(never)
func measuredPoolJobs(_ count: Int, _ finished: JobCounter) {
    for _ in 0..<count { Task.detached { finished.value.add(1, ordering: .releasing) } }
}

/// How many of the workload's tasks have run.
final class JobCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// `count` returns of `epoll_wait(…, 0)` on an epoll descriptor with nothing ready: through
/// the shim's `epoll_wait` (the thread is a watched loop's), or the C library's `epoll_pwait`.
@inline(never)
func measuredEpollWaits(_ count: Int, epfd: Int32, throughShim: Bool) {
    for _ in 0..<count { _ = Kernel.epollWaitOnce(epfd, timeoutMs: 0, throughShim: throughShim) }
}

/// A loop of the benchmark's own that the monitor watches as it watches a SwiftNIO loop: its
/// thread runs the closures queued on it and waits in `epoll_wait`; told to count, it runs what
/// is queued (the monitor's registration) and then makes the counted calls.
final class CountingLoop: Sendable {
    private let epfd: Int32
    private let queued = Mutex<[@Sendable () -> Void]>([])
    private let request = Mutex<(count: Int, throughShim: Bool)?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let counted = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    init(epfd: Int32) { self.epfd = epfd }

    var polledLoop: PolledLoop {
        PolledLoop(
            kind: "benchLoop", idleSyscalls: SyscallTable.numbers(["epoll_wait", "epoll_pwait"]),
            execute: { [self] task in
                queued.withLock { $0.append(task) }
                return true
            })
    }

    /// The loop's thread.
    func run() {
        while !stopping.load(ordering: .acquiring) {
            for task in queued.withLock({ tasks in
                defer { tasks = [] }
                return tasks
            }) { task() }
            if let (count, throughShim) = request.withLock({ value in
                defer { value = nil }
                return value
            }) {
                measuredEpollWaits(count, epfd: epfd, throughShim: throughShim)
                counted.signal()
            }
            _ = Kernel.epollWaitOnce(epfd, timeoutMs: 1, throughShim: false)
        }
        exited.signal()
    }

    /// Makes the loop count `count` calls (after what is queued now) and waits until it has.
    func count(_ count: Int, throughShim: Bool) {
        request.withLock { $0 = (count, throughShim) }
        counted.wait()
    }

    /// Ends the loop's thread and waits for it.
    func stop() {
        stopping.store(true, ordering: .releasing)
        exited.wait()
    }
}
