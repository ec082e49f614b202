import Foundation
import StallReportModel
import Testing
import ToolSupport

/// Blocking calls on SwiftNIO event loops, end to end: `nio-stall-demo --blocking-threshold-ms 1`
/// answers `/wait?ms=N` after a DispatchSemaphore wait on the loop and `/later?ms=N` after a timer
/// on the loop (the loop stays free). Each wait is one call of its call site, on the kind
/// `nioEventLoop`, no longer than the handler's own clock; the timers, fast requests and NIO's own
/// work (its `epoll_wait`, reads and writes on non-blocking sockets) give none.
@Suite("blocking calls on SwiftNIO event loops", .serialized)
struct NIOBlockingCallTests {
    static var underThreadSanitizer: Bool { dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil }

    @Test(
        "semaphore waits of 2, 5, 20 and 100 ms on an event loop: each counted once with the handler's duration; timers and fast requests give none"
    )
    func waitsOnTheLoop() throws {
        try withScratchFolder("nio-blocking") { directory in
            let reports = directory.appendingPathComponent("reports")
            let server = try NIOStallDemoServer.start(
                reports: reports, portFile: directory.appendingPathComponent("port"),
                options: ["--blocking-threshold-ms", "1"])
            var took: [(requested: Double, measured: CallerClock)] = []
            for ms in [2, 5, 20, 100] {
                let answer = try server.curl(["/wait?ms=\(ms)"])
                // "wait 5 ms, took 5.012 ms", then " (preempted)" or " (slept 2 times)" when disturbed.
                let words = answer.split(separator: " ")
                let measured = try #require(
                    words.firstIndex(of: "took").flatMap {
                        words.index(after: $0) < words.count ? Double(words[$0 + 1]) : nil
                    },
                    "\(answer)")
                took.append(
                    (
                        Double(ms),
                        CallerClock(
                            milliseconds: measured,
                            disturbance: answer.split(separator: "(").dropFirst().first.map { String($0.dropLast(2)) })
                    ))
                #expect(try server.curl(["/later?ms=\(ms)"]) == "later \(ms) ms\n")
            }
            #expect(try server.curl(Array(repeating: "/fast", count: 200)) == String(repeating: "ok\n", count: 200))
            let run = try server.stop()
            #expect(run.status == 0, "\(run)")
            let names = try blockingCallsReportNames(in: reports)
            let sites = try blockingCallSites(names, in: reports)
            // A ThreadSanitizer build cannot watch blocking calls (its monitor says so at start, to a
            // logger this demo keeps quiet): it writes no blocking-calls report.
            if Self.underThreadSanitizer {
                #expect(names.isEmpty)
                return
            }
            // The handler's frames name the call (the frame-pointer walk loses the function that
            // calls a frameless library function, here HandlerStalls.waitOnSemaphore, not its caller).
            let waits = sites.filter { site in
                site.call == "sem_timedwait" && site.stack.contains { $0.symbol?.contains("StallRouteHandler") == true }
            }
            #expect(
                waits.count == sites.count,
                "only the waits are blocking calls: \(sites.map { "\($0.call) \($0.callSite ?? "?")" })")
            #expect(waits.allSatisfy { $0.loopKind == "nioEventLoop" }, "\(waits.map(\.loopKind))")
            #expect(Set(waits.map(\.fingerprint)).count == 1, "one call site")
            let recorded = waits.flatMap(\.durationsMs).sorted()
            try #require(recorded.count == took.count, "recorded \(recorded) for the handler's \(took)")
            for (duration, call) in zip(recorded, took.sorted { $0.measured.milliseconds < $1.measured.milliseconds }) {
                // Within the handler's clock around the wait (not the wait's timeout: the semaphore's
                // deadline is on the wall clock, which a time daemon may step meanwhile).
                #expect(call.measured.admits(duration), "recorded \(duration) ms for \(call)")
            }
        }
    }
}
