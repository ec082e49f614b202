import Foundation
import StallReportKit
import StallReportModel
import Testing
import ToolSupport

/// Blocking calls in production, end to end: pool-stall-host `blocking` (a monitor with
/// `blockingCalls`) makes three 30 ms DispatchSemaphore waits in pool tasks and three awaiting
/// controls; its `blocking-*.json` report names the host function with the host's own durations,
/// and the real `stallreport` binary shows it, summarizes the call site (text, Markdown, JSON) and gates on
/// it (`--max-blocking-ms`, `--max-total-blocking-ms`).
@Suite("blocking-call reports end to end", .serialized)
struct BlockingCallReportEndToEndTests {
    /// Whether the host said at start that no blocking call can be watched in its build
    /// (ThreadSanitizer): then it must have written no blocking-calls report, and there is
    /// nothing more to check.
    static func unwatchable(_ host: StallReportCLI.Run) -> Bool {
        guard host.stderr.contains("cannot be watched in a build with ThreadSanitizer") else { return false }
        #expect(host.stdout.contains("blockingCallsUnwatched=1"), "\(host)")
        return true
    }

    /// Runs pool-stall-host in `mode` with a scratch folder of its own (named after `label`) as its
    /// report directory; `body` gets the folder and the run, and the folder is removed after.
    static func withHostRun<T>(
        _ mode: String, label: String, _ body: (URL, StallReportCLI.Run) throws -> T
    ) throws -> T {
        try withScratchFolder(label) { directory in
            let host = try StallReportCLI.run([mode, directory.path], timeout: 120, executable: "pool-stall-host")
            return try body(directory, host)
        }
    }

    @Test("the host's blocking calls: one call site in its report, summarized and gated by the CLI")
    func hostReportSummarizeGate() throws {
        try Self.withHostRun("blocking", label: "blocking-calls") { directory, host in
            try #require(host.status == 0, "\(host)")
            // "stalled thread <tid> (<name>) for <ms> ms in <function>[ (<disturbance>)]"
            let measured = host.stdout.split(separator: "\n").filter { $0.hasPrefix("stalled thread") }.compactMap {
                line -> CallerClock? in
                let words = line.split(separator: " ", maxSplits: 9)
                guard words.count >= 9, let ms = Double(words[5]) else { return nil }
                let disturbance = words.count > 9 ? String(words[9].dropFirst().dropLast()) : nil
                return CallerClock(milliseconds: ms, disturbance: disturbance)
            }
            try #require(measured.count == 3, "\(host.stdout)")
            if Self.unwatchable(host) { return }
            // A sanitizer build's executable defines usleep and the like itself (said at start);
            // the semaphore waits are libdispatch's, seen in every build.
            #expect(
                !host.stderr.contains("blockingCallsUnwatched") || host.stderr.contains("defines"), "\(host.stderr)")

            let names = try blockingCallsReportNames(in: directory).sorted()
            try #require(
                !names.isEmpty,
                "no blocking-calls report: \((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])"
            )
            let reports = try names.map { name in
                try BlockingCallsReport.read(path: directory.appendingPathComponent(name).path).get()
            }
            let sites = reports.flatMap(\.callSites).filter { site in
                site.stack.contains { $0.symbol?.contains("waitBrieflyOnSemaphoreForTest") == true }
            }
            try #require(!sites.isEmpty, "\(reports)")
            #expect(Set(sites.map(\.fingerprint)).count == 1 && sites.allSatisfy { $0.loopKind == "concurrencyPool" })
            let durations = sites.flatMap(\.durationsMs)
            try #require(durations.count == measured.count, "\(durations) for the host's \(measured)")
            for (recorded, ownClock) in zip(durations, measured) {
                #expect(
                    ownClock.admits(recorded, slack: max(1, CallerClock.defaultSlack)),
                    "recorded \(recorded) ms, the host's clock \(ownClock)")
            }
            let fingerprint = sites[0].fingerprint
            // In a detached task: the first call's async callers end at the task's root, and
            // `show` lists them after the stack.
            #expect(
                sites.allSatisfy { $0.asyncCallers?.last?.symbol?.contains("completeTask") == true },
                "\(sites.map(\.asyncCallers))")
            let withSite = try #require(
                names.first { name in
                    (try? BlockingCallsReport.read(path: directory.appendingPathComponent(name).path).get())?.callSites
                        .contains { $0.fingerprint == fingerprint } == true
                })
            let shown = try StallReportCLI.run(["show", directory.appendingPathComponent(withSite).path])
            #expect(shown.status == 0 && shown.stdout.contains("awaited by"), "\(shown)")
            // Exported as folded stacks: the task's root first, the call last, the blocked time in µs.
            let folded = try StallReportCLI.run(
                [
                    "export", "--format", "folded", "--blocking-calls", "--fingerprint", fingerprint, directory.path,
                    "-o", "-",
                ])
            try #require(folded.status == 0, "\(folded)")
            let lines = folded.stdout.split(separator: "\n")
            let blockedUs = lines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
            #expect(
                lines.allSatisfy {
                    $0.hasPrefix("completeTask") && $0.contains("waitBrieflyOnSemaphoreForTest")
                        && $0.contains(";[blocking ")
                }, "\(folded.stdout)")
            #expect(abs(blockedUs / 1000 - sites.map(\.totalMs).reduce(0, +)) < 1, "\(folded.stdout)")
            try checkFlameGraph(of: directory, fingerprint: fingerprint)
            try checkPprof(of: directory, fingerprint: fingerprint, sites: sites)

            let json = try StallReportCLI.run(["summarize", "--format", "json", directory.path])
            try #require(json.status == 0, "\(json)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let blocking = try #require(object["blockingCalls"] as? [String: Any], "\(json.stdout)")
            let listed = try #require(blocking["callSites"] as? [[String: Any]])
            let site = try #require(listed.first { $0["fingerprint"] as? String == fingerprint }, "\(listed)")
            #expect(site["count"] as? Int == 3)
            #expect(abs((site["totalMs"] as? Double ?? 0) - durations.reduce(0, +)) < 0.01)
            #expect(site["maxMs"] as? Double == durations.max())
            #expect(site["p95Ms"] as? Double == durations.max(), "nearest rank of three values is the largest")
            #expect((site["callSite"] as? String)?.contains("PoolWork") == true, "\(site)")
            #expect(blocking["reports"] as? Int == reports.count)

            let text = try StallReportCLI.run(["summarize", directory.path])
            #expect(
                text.status == 0 && text.stdout.contains("Blocking calls") && text.stdout.contains(fingerprint),
                "\(text)")
            let markdown = try StallReportCLI.run(["summarize", "--format", "markdown", directory.path])
            #expect(
                markdown.stdout.contains("### Blocking calls") && markdown.stdout.contains(fingerprint), "\(markdown)")

            let show = try StallReportCLI.run(["show", directory.appendingPathComponent(names[0]).path])
            #expect(
                show.status == 0 && show.stdout.contains(fingerprint)
                    && show.stdout.contains("waitBrieflyOnSemaphoreForTest"), "\(show)")

            let total = durations.reduce(0, +)
            let passing = try StallReportCLI.run(["gate", "--max-blocking-ms", "\(Int(total) + 50)", directory.path])
            #expect(passing.status == 0, "\(passing)")
            let failing = try StallReportCLI.run([
                "gate", "--max-blocking-ms", "50", "--max-total-blocking-ms", "10000", directory.path,
            ])
            #expect(failing.status == 1, "\(failing)")
            #expect(
                failing.stdout.contains("FAIL blocked time per call site") && failing.stdout.contains(fingerprint),
                "\(failing.stdout)")
            #expect(failing.stdout.contains("PASS blocked time in total"), "\(failing.stdout)")

            // A baseline of this run knows the call site; one of a run without it finds it new.
            let baselineFile = directory.appendingPathComponent("baseline.out").path
            let recorded = try StallReportCLI.run(["baseline", directory.path, "-o", baselineFile])
            try #require(recorded.status == 0, "\(recorded)")
            let baseline = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: baselineFile)))
                    as? [String: Any])
            let known = (baseline["blockingCallSites"] as? [[String: Any]] ?? []).compactMap {
                $0["fingerprint"] as? String
            }
            #expect(known.contains("\(fingerprint)@concurrencyPool"), "\(baseline)")
            let same = try StallReportCLI.run(["gate", "--baseline", baselineFile, directory.path])
            #expect(same.status == 0, "\(same)")
            var emptied = baseline
            emptied["blockingCallSites"] = [[String: Any]]()
            try JSONSerialization.data(withJSONObject: emptied).write(to: URL(fileURLWithPath: baselineFile))
            let new = try StallReportCLI.run(["gate", "--baseline", baselineFile, directory.path])
            #expect(new.status == 1 && new.stdout.contains("new blocking call site"), "\(new)")
        }
    }

    /// One blocking call the host made: "blocked <place> <requested ms> <measured ms> <disturbed> <thread> <function>".
    struct HostCall {
        var place: String
        var requested: Double
        var measured: CallerClock
        var function: String
    }

    @Test(
        "blocking calls of 2, 5, 20 and 100 ms in a Task, a group child, an async let, an actor and on the MainActor: each counted once with the caller's duration; awaiting gives none"
    )
    func everyPlaceATaskRuns() throws {
        try Self.withHostRun("blocking-places", label: "blocking-places") { directory, host in
            try #require(host.status == 0, "\(host)")
            let calls = host.stdout.split(separator: "\n").filter { $0.hasPrefix("blocked ") }.compactMap {
                line -> HostCall? in
                let words = line.split(separator: " ")
                guard words.count == 7, let requested = Double(words[2]), let measured = Double(words[3]) else {
                    return nil
                }
                return HostCall(
                    place: String(words[1]), requested: requested,
                    measured: CallerClock(milliseconds: measured, disturbance: words[4] == "1" ? "disturbed" : nil),
                    function: String(words[6].prefix { $0 != "(" }))
            }
            try #require(calls.count == 20, "\(host.stdout)")
            if Self.unwatchable(host) { return }
            let sites = try blockingCallSites(blockingCallsReportNames(in: directory), in: directory)
            #expect(
                !sites.contains { site in site.stack.contains { $0.symbol?.contains("ForControl") == true } },
                "an awaiting control was recorded: \(sites.map(\.callSite))")
            for (function, made) in Dictionary(grouping: calls, by: \.function) {
                let own = sites.filter { site in site.stack.contains { $0.symbol?.contains(function) == true } }
                let expectedKind = made[0].place == "mainActor" ? "mainActor" : "concurrencyPool"
                #expect(own.allSatisfy { $0.loopKind == expectedKind }, "\(function): \(own.map(\.loopKind))")
                #expect(Set(own.map(\.fingerprint)).count == 1, "one call site for \(function)")
                let recorded = own.flatMap(\.durationsMs).sorted()
                let measured = made.sorted { $0.measured.milliseconds < $1.measured.milliseconds }
                try #require(
                    recorded.count == measured.count,
                    "\(function): recorded \(recorded) for the host's \(measured.map(\.measured))")
                for (duration, call) in zip(recorded, measured) {
                    // Within the caller's clock around the wait (not its timeout: the semaphore's
                    // deadline is on the wall clock, which a time daemon may step meanwhile).
                    #expect(
                        call.measured.admits(duration),
                        "\(function): recorded \(duration) ms, the caller's clock \(call.measured) for \(call.requested) ms"
                    )
                }
            }
        }
    }

    @Test(
        "a damaged blocking-calls report is named with what is wrong (exit 2 with --strict); the other reports still count"
    )
    func damagedReport() throws {
        try Self.withHostRun("blocking", label: "blocking-damaged") { directory, host in
            try #require(host.status == 0, "\(host)")
            if Self.unwatchable(host) { return }
            let damaged = directory.appendingPathComponent("blocking-20260101T000000.000Z-p1-0001.json")
            try Data(#"{"schemaVersion":1,"kind":"blockingCalls","id":"x"}"#.utf8).write(to: damaged)
            let run = try StallReportCLI.run(["summarize", "--format", "json", "--strict", directory.path])
            #expect(run.status == 2, "\(run)")
            #expect(
                run.stderr.contains(damaged.lastPathComponent) && run.stderr.contains("not a blocking-calls report"),
                "\(run.stderr)")
            let show = try StallReportCLI.run(["show", damaged.path])
            #expect(
                show.status == 2 && show.stderr.contains(damaged.lastPathComponent)
                    && show.stderr.contains("not a blocking-calls report"), "\(show)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run)")
            let blocking = try #require(object["blockingCalls"] as? [String: Any])
            #expect((blocking["calls"] as? Int ?? 0) >= 3, "\(blocking)")
        }
    }
}

extension BlockingCallReportEndToEndTests {
    /// `stallreport flamegraph --blocking-calls` of the host's reports: the page's data holds the
    /// `export --format pprof --blocking-calls` of the site, read back by `go tool pprof -raw` (where
    /// installed): the calls and the nanoseconds blocked add up to the reports', the stack names
    /// the blocking function under the `[blocking …]` leaf, and the labels name the site.
    func checkPprof(of directory: URL, fingerprint: String, sites: [BlockingCallsReport.CallSite]) throws {
        let file = directory.appendingPathComponent("blocking.pb.gz")
        let run = try StallReportCLI.run(
            [
                "export", "--format", "pprof", "--blocking-calls", "--fingerprint", fingerprint, directory.path, "-o",
                file.path,
            ])
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("wrote pprof export"), "\(run)")
        guard StallReportVizPprofTests.go != nil else { return }
        let raw = try StallReportVizPprofTests.pprof(["-raw", file.path], scratch: directory)
        try #require(raw.status == 0, "\(raw)")
        let lines = raw.stdoutLines
        #expect(lines.contains("calls/count blocked/nanoseconds[dflt]"), "\(raw)")
        let samples = lines.drop { $0 != "Samples:" }.dropFirst(2).prefix { !$0.hasPrefix("Locations") }
            .compactMap { $0.firstMatch(of: /^ +(\d+) +(\d+): [\d ]*$/) }
        let calls = samples.reduce(0) { $0 + Int($1.output.1)! }
        let blocked = samples.reduce(Int64(0)) { $0 + Int64($1.output.2)! }
        #expect(calls == sites.reduce(0) { $0 + $1.count }, "\(raw)")
        let expectedBlocked = sites.reduce(Int64(0)) { $0 + Int64(($1.totalMs * 1_000_000).rounded()) }
        #expect(abs(blocked - expectedBlocked) <= Int64(sites.count), "\(blocked) vs \(expectedBlocked)")
        #expect(raw.stdout.contains("fingerprint:[\(fingerprint)]") && raw.stdout.contains("call:["), "\(raw)")
        #expect(raw.stdout.contains("waitBrieflyOnSemaphoreForTest") && raw.stdout.contains("[blocking "), "\(raw)")
    }

    /// call site as wide as its blocked time, and headless Chromium (where installed) draws it and
    /// the blocking header.
    func checkFlameGraph(of directory: URL, fingerprint: String) throws {
        let output = directory.appendingPathComponent("blocking.html")
        let run = try StallReportCLI.run(["flamegraph", "--blocking-calls", directory.path, "-o", output.path])
        try #require(run.status == 0, "\(run)")
        let html = try String(contentsOf: output, encoding: .utf8)
        let start = try #require(html.range(of: "id=\"flame-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let data = try JSONDecoder().decode(
            FlameGraphData.self, from: Data(html[start.upperBound..<end.lowerBound].utf8))
        let summary = try #require(data.summary.blockingCalls)
        #expect(abs(data.root.w - summary.blockedMs) < 0.01 && summary.calls >= 3, "\(summary)")
        #expect(data.frames.contains { $0.name.contains("waitBrieflyOnSemaphoreForTest") })
        #expect(data.frames.contains { $0.name.hasPrefix("[blocking ") && $0.synthetic })
        guard let chromium = StallReportVizFlameGraphTests.chromium else { return }
        let dom = try ToolRunner.run(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=\(directory.appendingPathComponent("chromium-profile").path)",
                "--window-size=1400,900", "--dump-dom", output.absoluteString,
            ], input: "")
        let rendered = try #require(
            dom.range(of: #"data-rendered="(\d+)""#, options: .regularExpression), "the script did not run")
        #expect((Int(dom[rendered].filter(\.isNumber)) ?? 0) >= 3, "frame boxes drawn")
        #expect(dom.contains("Blocked time"), "the blocking header")
    }
}
