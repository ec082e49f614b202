import Foundation
import StallReportModel

/// Figure 13: the concurrency-pool probe on a real Hummingbird 2 server (Examples/HummingbirdServer,
/// whose route handlers all run as tasks on the pool): CPU time per request under wrk with the
/// event loops and the pool watched vs nothing watched, the watchdog's wake-ups while the server
/// idles, how exactly stalls in async route handlers are reported, and the pool's delay for new
/// work under load.
enum PoolServerFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        try ServerFigureTools.requireWrkAndCurl()
        var rows = [try throughput(context), try blockingCallsCost(context)]
        rows.append(try idle(context))
        rows += try stalls(context)
        rows.append(try delay(context))
        return FigureResult(figure: .poolServer, rows: rows)
    }

    /// 13a: CPU time of the whole server process per request under wrk, watched vs not.
    private static func throughput(_ context: BenchContext) throws -> ResultRow {
        try watchedCPU(
            "13a", "Hummingbird 2 server: CPU per request, loops and pool watched vs nothing", against: .unwatched,
            goal: 1.01, shareGoal: 0.005, rounds: 9, context
        ) { rounds, seconds in
            "wrk -t2 -c32 -d\(seconds)s on GET /fast of hummingbird-stall-demo (release; handlers on the concurrency pool), process CPU (utime+stime, /proc/<pid>/stat) over the run ÷ requests; the monitor's threads (named stall-…) against all the process's threads, schedstat over the run; \(rounds) rounds alternating which goes first, a fresh server each run; medians, and the lowest and highest ratio of a round's pair"
        }
    }

    /// 13f: what watching blocking calls adds to the CPU per request of a watched server.
    private static func blockingCallsCost(_ context: BenchContext) throws -> ResultRow {
        try watchedCPU(
            "13f", "Hummingbird 2 server: CPU per request, blocking calls watched vs loops and pool watched only",
            against: .watchedWithoutBlockingCalls, goal: 1.01, rounds: 9, context
        ) { rounds, _ in
            "as 13a, the monitor running in both: blockingCalls on (threshold 10 ms) vs off; \(rounds) rounds"
        }
    }

    /// A row of the server's CPU per request, everything watched against `baseline`.
    private static func watchedCPU(
        _ figure: String, _ name: String, against baseline: HummingbirdServerProcess.Mode, goal: Double,
        shareGoal: Double? = nil, rounds: Int, _ context: BenchContext,
        method: (_ rounds: Int, _ seconds: Int) -> String
    ) throws -> ResultRow {
        try CPUPerRequest.row(
            figure, name, goal: goal, shareGoal: shareGoal, rounds: rounds, context: context, method: method,
            start: { try HummingbirdServerProcess(context, mode: $0 ? .watched : baseline) }, stop: { $0.stop() })
    }

    /// 13b: the watchdog's wake-ups and CPU while the server idles.
    private static func idle(_ context: BenchContext) throws -> ResultRow {
        let seconds = context.pick(10.0, quick: 1.0)
        let server = try HummingbirdServerProcess(context, mode: .watched)
        defer { server.stop() }
        let (perSecond, cpuPerSecond, processPerSecond) = try server.watchdogRates(over: seconds)
        return ResultRow(
            "13b", "Idle Hummingbird server: watchdog wake-ups",
            value:
                "\(Format.fixed(perSecond, 1))/s, \(Format.micro(cpuPerSecond)) of CPU per second (whole process \(Format.micro(processPerSecond))/s)",
            goal: "stated (asleep while idle: a look every 2 s, and each wake-up the server itself has)",
            verdict: .info,
            method:
                "the watchdog thread's voluntary context switches and CPU time (/proc) over \(Int(seconds)) s of an idle watched server; neither NIO nor the pool tells anyone when work starts, so the probes look every pollInterval (a /proc read per event loop, an 8-byte process_vm_readv per pool worker)",
            data: [
                "wakeupsPerSecond": perSecond, "cpuNanosecondsPerSecond": cpuPerSecond,
                "processCPUNanosecondsPerSecond": processPerSecond,
                "seconds": seconds,
            ])
    }

    /// 13e: the pool's delay for new work (the `stallmonitor.pool.delay` timer) under wrk, as the
    /// server's own metrics factory recorded it.
    private static func delay(_ context: BenchContext) throws -> ResultRow {
        let seconds = context.pick(5, quick: 1)
        let server = try HummingbirdServerProcess(context, mode: .watched)
        _ = try ServerFigureTools.wrk(server.url + "/fast", seconds: seconds, scratch: context.scratch)
        server.stop()
        // "pool delay: <n> values, p50 <µs> µs, p99 <µs> µs, max <µs> µs"
        guard let line = server.printed().split(separator: "\n").first(where: { $0.hasPrefix("pool delay:") }) else {
            throw BenchError("hummingbird-stall-demo printed no pool delay: \(server.printed())")
        }
        let words = line.split(separator: " ")
        func number(after key: String) -> Double? {
            words.firstIndex { $0 == key }.flatMap { words.indices.contains($0 + 1) ? Double(words[$0 + 1]) : nil }
        }
        let values = Double(words[2]) ?? 0
        let p50 = number(after: "p50") ?? 0
        let p99 = number(after: "p99") ?? 0
        let maximum = number(after: "max") ?? 0
        return ResultRow(
            "13e", "Pool delay under load (the stallmonitor.pool.delay timer)",
            value:
                "p50 \(Format.micro(p50 * 1_000)), p99 \(Format.micro(p99 * 1_000)), max \(Format.micro(maximum * 1_000)) (\(Int(values)) values)",
            goal: "stated", verdict: .info,
            method:
                "wrk -t2 -c32 -d\(seconds)s on GET /fast of hummingbird-stall-demo (watched); each value is how long a no-op block the probe queued on the pool (one per poll interval while a worker is busy) waited for a worker, recorded by the server's own MetricsFactory",
            data: ["values": values, "p50Microseconds": p50, "p99Microseconds": p99, "maxMicroseconds": maximum])
    }

    /// Stalls in async route handlers (sleeps and CPU spins of 300–800 ms) on a fresh watched
    /// server: its reports and each handler's own clock, in request order.
    private static func measureStalls(
        _ context: BenchContext, count: Int
    ) throws -> (reports: [StallReport], measured: [Double]) {
        let server = try HummingbirdServerProcess(context, mode: .watched)
        let measured = try ServerFigureTools.requestStalls(count: count, seed: 13, suffix: " ms") { index, ms in
            try server.get(index % 2 == 0 ? "/report?ms=\(ms)" : "/users/\(index)?ms=\(ms)")
        }
        server.stop()
        return (try ServerFigureTools.reports(in: server.reports), measured)
    }

    /// 13c and 13d: stalls in async route handlers: reported duration against the handler's own
    /// clock, on the machine as it is and with four CPU-bound processes running (jobs that follow
    /// one another on a worker must not be merged, nor a job's start be dated late when the
    /// watchdog waits for a CPU), and sampling due → first sample.
    private static func stalls(_ context: BenchContext) throws -> [ResultRow] {
        let count = context.pick(40, quick: 4)
        let hogs = 4
        let (reports, measured) = try measureStalls(context, count: count)
        let (loadedReports, loadedMeasured) = try CPUHogProcesses.running(hogs) {
            try measureStalls(context, count: count)
        }
        let errors = zip(reports, measured).map { $0.durationMs - $1 }
        let absolute = errors.map(abs)
        let loadedErrors = zip(loadedReports, loadedMeasured).map { $0.durationMs - $1 }
        let loadedAbsolute = loadedErrors.map(abs)
        let series =
            "\(count) requests to /report (CPU) and /users (usleep) in turn, 300–800 ms each, threshold 250 ms, pollInterval 20 ms"
        let allReported =
            reports.count == count && loadedReports.count == count
            && (reports + loadedReports).allSatisfy { $0.loop.kind == "concurrencyPool" }
        let p99 = Stats.percentile(absolute, 99)
        let loadedP99 = Stats.percentile(loadedAbsolute, 99)
        return [
            .judged(
                "13c", "Async handler stall: reported − measured duration, quiet and under load",
                value:
                    "|error| p99 \(Format.milli(p99)); signed median \(Format.milli(Stats.median(errors))); \(reports.count) of \(count) reported; "
                    + "with \(hogs) CPU-bound processes: |error| p99 \(Format.milli(loadedP99)), signed median \(Format.milli(Stats.median(loadedErrors))), "
                    + "\(loadedReports.count) of \(count) reported",
                goal:
                    "every stall reported, on the pool; |error| p99 ≤ 25 ms quiet and under load (half a poll interval at each end and a tick)",
                ok: allReported && p99 <= 25 && loadedP99 <= 25,
                method:
                    "report.durationMs vs the handler's own clock (in the response body); \(series); the same series again on a fresh server "
                    + "with \(hogs) `sh -c 'while :; do :; done'` processes running",
                data: [
                    "absP99Ms": p99, "signedMedianMs": Stats.median(errors),
                    "stalls": Double(count), "reports": Double(reports.count),
                    "mostShortMs": errors.min() ?? 0, "mostLongMs": errors.max() ?? 0,
                    "loadedAbsP99Ms": loadedP99, "loadedSignedMedianMs": Stats.median(loadedErrors),
                    "loadedReports": Double(loadedReports.count), "loadedMostShortMs": loadedErrors.min() ?? 0,
                    "loadedMostLongMs": loadedErrors.max() ?? 0, "cpuBoundProcesses": Double(hogs),
                ]),
            ServerFigureTools.firstSampleRow(
                "13d", "Async handler stall: sampling due → first sample", reports: reports, which: "quiet series",
                series: series),
        ]
    }

}
