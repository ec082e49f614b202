import CoreFoundation
import Foundation
import StallMonitor

/// One scheduled stall of the demo.
struct DemoScenario: Sendable {
    let name: String
    let summary: String
    let run: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    static let all: [DemoScenario] = [
        .init(name: "short-work", summary: "100 ms of work, below the threshold: no report") { done in
            Scenarios.shortWorkBelowThreshold(milliseconds: 100)
            done()
        },
        .init(name: "cpu-spin-300", summary: "CPU spin, 300 ms") { done in
            Scenarios.spinOnCPU(milliseconds: 300)
            done()
        },
        .init(name: "mutex-wait", summary: "waits 500 ms for a mutex held by another thread") { done in
            Scenarios.waitForLockHeldByWorker(milliseconds: 500)
            done()
        },
        .init(name: "usleep", summary: "usleep(400 ms), not interrupted by sampling") { done in
            Scenarios.sleepWithUsleep(milliseconds: 400)
            done()
        },
        .init(name: "deep-recursion", summary: "200-frame recursion that spins 400 ms") { done in
            _ = Scenarios.recurseThenSpin(depth: 200, milliseconds: 400)
            done()
        },
        // Tasks of 1 ms: the loop's own overhead between tasks (much larger in a sanitizer build)
        // stays small beside the work, so most samples, and the fingerprint, are in the task.
        .init(name: "congestion", summary: "600 queued tasks of 1 ms each, none long on its own") { done in
            Scenarios.runCongestedTask(remaining: 600, microseconds: 1_000, done: done)
        },
        .init(name: "cpu-spin-1200", summary: "CPU spin, 1.2 s") { done in
            Scenarios.spinOnCPU(milliseconds: 1_200)
            done()
        },
    ]

    /// Scenarios run only when named with `--only`.
    static let extras: [DemoScenario] = [
        .init(name: "cpu-spin-3000", summary: "CPU spin, 3 s (for killing the demo during a stall)") { done in
            Scenarios.spinOnCPU(milliseconds: 3_000)
            done()
        },
        .init(
            name: "short-work-loop",
            summary: "40 × (80 ms of work, 20 ms idle): no stall, even if the process is stopped meanwhile"
        ) { done in
            DemoScenario.repeatShortWork(remaining: 40, done: done)
        },
        .init(
            name: "park-spin",
            summary:
                "announces the thread id, then spins --park-seconds in one function (for a debugger's reference stack)"
        ) { done in
            let release = ParkRelease()
            announcePark("spin")
            DispatchQueue.global().asyncAfter(deadline: .now() + parkSeconds) {
                release.flag.store(true, ordering: .relaxed)
            }
            Scenarios.parkSpinning(until: release)
            done()
        },
        .init(
            name: "park-sleep",
            summary: "announces the thread id, then sleeps --park-seconds in poll (for a debugger's reference stack)"
        ) { done in
            announcePark("sleep")
            Scenarios.parkSleeping(milliseconds: Int32(parkSeconds * 1_000))
            done()
        },
        .init(name: "idle", summary: "the loop idles --park-seconds, no stall (for a session record's heartbeats)") {
            done in
            afterDelay(parkSeconds, done)
        },
        .init(name: "epoll-wait-400", summary: "sleeps 400 ms in epoll_wait, called from the demo's own code") { done in
            InterposedCallScenarios.waitInEpoll(milliseconds: 400)
            done()
        },
        .init(name: "dispatch-async-400", summary: "queues empty blocks with dispatch_async for 400 ms") { done in
            InterposedCallScenarios.enqueueForMilliseconds(400)
            done()
        },
        .init(name: "expected-long-work", summary: "600 ms of work declared with expectLongWork: no report") { done in
            DemoScenario.monitor?.expectLongWork { Scenarios.spinOnCPU(milliseconds: 600) }
            done()
        },
    ]

    /// Runs 80 ms of work, then again 20 ms later, `remaining` times.
    static func repeatShortWork(remaining: Int, done: @escaping @Sendable () -> Void) {
        Scenarios.shortWorkBelowThreshold(milliseconds: 80)
        guard remaining > 1 else { return done() }
        afterDelay(0.02) { repeatShortWork(remaining: remaining - 1, done: done) }
    }

    /// How long the park scenarios park the main thread (`--park-seconds`).
    nonisolated(unsafe) static var parkSeconds: Double = 2

    /// Says on stdout, flushed, that the main thread (whose thread id is the process id) is about
    /// to park.
    static func announcePark(_ kind: String) {
        print("stall-demo: parking (\(kind)) main thread \(getpid()) for \(parkSeconds) s")
        fflush(nil)
    }

    /// The running monitor, for scenarios that use its API.
    nonisolated(unsafe) static var monitor: StallMonitor?

    static func select(_ names: String?) throws -> [DemoScenario] {
        guard let names else { return all }
        let known = all + extras
        return try names.split(separator: ",").map { name in
            guard let scenario = known.first(where: { $0.name == name }) else {
                throw DemoError("unknown scenario '\(name)'; known: \(known.map(\.name).joined(separator: ", "))")
            }
            return scenario
        }
    }

    /// Runs the scenarios one after another from main-RunLoop timers, `gap` seconds apart (the
    /// loop sleeps in between), then calls `finished`.
    static func schedule(_ scenarios: [DemoScenario], gap: TimeInterval, finished: @escaping @Sendable () -> Void) {
        guard let first = scenarios.first else { return afterDelay(gap, finished) }
        afterDelay(gap) {
            first.run {
                schedule(Array(scenarios.dropFirst()), gap: gap, finished: finished)
            }
        }
    }

    /// Runs `body` once on the main run loop (default mode) after `seconds`.
    ///
    /// A one-shot CF timer with an explicit fire date, not Foundation's block `Timer`:
    /// swift-corelibs-foundation never frees a block `Timer`, so LeakSanitizer reports every one
    /// (`Scripts/sanitize address`), and a CF timer is released by the run loop once it has fired.
    static func afterDelay(_ seconds: TimeInterval, _ body: @escaping @Sendable () -> Void) {
        let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + seconds, 0, 0, 0) { _ in body() }
        CFRunLoopAddTimer(CFRunLoopGetMain(), timer, kCFRunLoopDefaultMode)
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
