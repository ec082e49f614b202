import ArgumentParser
import Dispatch
import Foundation
import Glibc
import StallMonitor

/// `stall-bench blocking-call-loop`: the workload of figure 17, run under callgrind. It makes
/// `--calls` calls in `blockingCostLoop` (a `read` of an empty non-blocking pipe, which returns
/// EAGAIN at once, or a 1 ms `usleep`), on the main thread (one that may block) or in a Swift task
/// (one that must not), with a `BlockingCallDetector` running or not.
struct BlockingCallLoop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocking-call-loop", abstract: "Workload of the blocking-call cost figure.", shouldDisplay: false)

    @Option(help: "How many calls.")
    var calls = 100_000

    @Flag(inversion: .prefixedNo, help: "Run a BlockingCallDetector (threshold 500 µs).")
    var detector = true

    @Flag(help: "Make the calls in a Swift task (else on the main thread).")
    var inTask = false

    @Flag(help: "Call usleep(1000) instead of reading an empty non-blocking pipe.")
    var sleep = false

    func run() throws {
        // A second thread in both runs: the C library's calls take their multi-threaded path
        // (cancellation points) in either, as they do once the detector's thread runs.
        let idle = DispatchSemaphore(value: 0)
        Thread { idle.wait() }.start()
        defer { idle.signal() }
        let running = detector ? try BlockingCallDetector.start(.init(threshold: .microseconds(500))) : nil
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0, fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) == 0 else {
            throw ValidationError("cannot make a non-blocking pipe")
        }
        let (reader, calls, sleep) = (fds[0], calls, sleep)
        if inTask {
            let done = DispatchSemaphore(value: 0)
            Task {
                blockingCostLoop(calls: calls, reader: reader, sleep: sleep)
                done.signal()
            }
            done.wait()
        } else {
            blockingCostLoop(calls: calls, reader: reader, sleep: sleep)
        }
        running?.stop()
        close(fds[0])
        close(fds[1])
    }
}

/// The calls counted (callgrind collects inside this function only).
@inline(never)
func blockingCostLoop(calls: Int, reader: Int32, sleep: Bool) {
    var byte: UInt8 = 0
    for _ in 0..<calls {
        if sleep {
            usleep(1000)
        } else {
            _ = read(reader, &byte, 1)
        }
    }
}
