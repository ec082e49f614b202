import Foundation
import StallReportKit
import Testing

/// The real `nio-stall-demo` binary (a SwiftNIO HTTP server watched by StallMonitor) driven by
/// curl, its reports summarized by the real `stallreport`.
@Suite("nio-stall-demo end to end", .serialized)
struct NIOStallDemoTests {
    @Test(
        "curl requests to stalling routes give one report each, grouped by handler function and by loop; fast requests give none"
    )
    func serverStallsAreReported() throws {
        let directory = try ReportDirectory()
        let reports = directory.url.appendingPathComponent("reports")
        let portFile = directory.url.appendingPathComponent("port")
        let server = try NIOStallDemoServer.start(reports: reports, portFile: portFile)
        func curl(_ paths: [String]) throws -> String { try server.curl(paths) }
        #expect(try curl(["/cpu?ms=400"]).hasPrefix("cpu 400 ms, took 4"))
        usleep(300_000)
        #expect(try curl(["/sleep?ms=400"]).hasPrefix("sleep 400 ms, took 4"))
        usleep(300_000)
        #expect(try curl(["/task?ms=400"]).hasPrefix("scheduled"))
        usleep(700_000)
        // 400 fast requests over a few kept-alive connections: no stall.
        #expect(try curl(Array(repeating: "/fast", count: 400)) == String(repeating: "ok\n", count: 400))
        let run = try server.stop()
        #expect(run.status == 0, "\(run)")
        let counts = try #require(run.stdout.split(separator: "\n").last { $0.hasPrefix("{") })
        #expect(counts.contains("\"stallsDetected\":3"), "\(run.stdout)")

        let summary = try StallReportCLI.run(["summarize", "--format", "json", reports.path])
        #expect(summary.status == 0, "\(summary)")
        let json = try ReportCoding.makeDecoder().decode(SummaryJSON.self, from: Data(summary.stdout.utf8))
        #expect(json.totals.stalls == 3)
        // Each group's stack names its handler function (under a sanitizer a runtime interceptor,
        // `___interceptor_usleep`, may sit above it).
        let stacks = json.fingerprints.map { $0.stack.map(\.symbol) }
        #expect(stacks.count { $0.contains { $0.contains("HandlerStalls.spinOnCPU") } } == 2, "\(stacks)")
        #expect(stacks.count { $0.contains { $0.contains("HandlerStalls.sleepOnLoop") } } == 1, "\(stacks)")
        // The scheduled task's stack runs through the function that scheduled it.
        let task = json.fingerprints.first { $0.stack.contains { $0.symbol.contains("spinInScheduledTask") } }
        #expect(task != nil)

        let byLoop = try StallReportCLI.run(["summarize", "--group-by", "loop", "--format", "json", reports.path])
        #expect(byLoop.status == 0, "\(byLoop)")
        let loops = try #require(
            try ReportCoding.makeDecoder().decode(SummaryJSON.self, from: Data(byLoop.stdout.utf8)).loops)
        #expect(!loops.isEmpty && loops.reduce(0) { $0 + $1.numbers.count } == 3)
        #expect(loops.allSatisfy { $0.kind == "nioEventLoop" && $0.thread?.hasPrefix("NIO-ELT-") == true }, "\(loops)")
        let text = try StallReportCLI.run(["summarize", "--group-by", "loop", reports.path])
        #expect(text.stdout.contains("LOOP") && text.stdout.contains("nioEventLoop NIO-ELT-"), "\(text.stdout)")
    }
}
