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
        var rows = [try throughput(context)]
        rows.append(try idle(context))
        rows += try stalls(context)
        rows.append(try delay(context))
        return FigureResult(figure: .poolServer, rows: rows)
    }

    /// 13a: CPU time of the whole server process per request under wrk, watched vs not, in
    /// alternating rounds (req/s swings more between rounds on a shared machine than CPU per request).
    private static func throughput(_ context: BenchContext) throws -> ResultRow {
        let rounds = context.pick(5, quick: 1)
        let seconds = context.pick(5, quick: 1)
        var cpuOn: [Double] = []
        var cpuOff: [Double] = []
        var rateOn: [Double] = []
        var rateOff: [Double] = []
        for round in 0..<rounds {
            for watched in round % 2 == 0 ? [false, true] : [true, false] {
                let server = try HummingbirdServerProcess(context, watched: watched)
                defer { server.stop() }
                let before = server.processCPUNanos()
                let run = try ServerFigureTools.wrk(server.url + "/fast", seconds: seconds, scratch: context.scratch)
                let cpu = server.processCPUNanos() - before
                let text = String(decoding: run.stdout, as: UTF8.self)
                guard let rate = Self.value(after: "Requests/sec:", in: text), let requests = Self.requests(in: text),
                    requests > 0
                else {
                    throw BenchError("wrk printed no rate: \(text)")
                }
                if watched {
                    cpuOn.append(cpu / requests)
                    rateOn.append(rate)
                } else {
                    cpuOff.append(cpu / requests)
                    rateOff.append(rate)
                }
            }
        }
        let ratio = Stats.median(cpuOn) / max(Stats.median(cpuOff), 1)
        let rates = Stats.median(rateOn) / max(Stats.median(rateOff), 1)
        return .judged(
            "13a", "Hummingbird 2 server: CPU per request, loops and pool watched vs nothing",
            value: Format.ratio(ratio)
                + " (median \(Format.micro(Stats.median(cpuOn))) vs \(Format.micro(Stats.median(cpuOff))) per request; "
                + "req/s \(Int(Stats.median(rateOn))) vs \(Int(Stats.median(rateOff))), ratio \(Format.ratio(rates)))",
            goal: "≤ 1.02", ok: ratio <= 1.02,
            method:
                "wrk -t2 -c32 -d\(seconds)s on GET /fast of hummingbird-stall-demo (release; handlers on the concurrency pool), process CPU (utime+stime, /proc/<pid>/stat) over the run ÷ requests; \(rounds) rounds alternating which goes first, a fresh server each run; medians",
            data: [
                "ratio": ratio, "cpuPerRequestWatchedNs": Stats.median(cpuOn),
                "cpuPerRequestUnwatchedNs": Stats.median(cpuOff),
                "requestsPerSecondRatio": rates, "rounds": Double(rounds),
            ])
    }

    /// 13b: the watchdog's wake-ups and CPU while the server idles.
    private static func idle(_ context: BenchContext) throws -> ResultRow {
        let seconds = context.pick(10.0, quick: 1.0)
        let server = try HummingbirdServerProcess(context, watched: true)
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
        let server = try HummingbirdServerProcess(context, watched: true)
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
        let server = try HummingbirdServerProcess(context, watched: true)
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
        let due = reports.compactMap { report in report.samples.first.map { $0.offsetMs - report.thresholdMs * 0.5 } }
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
            ResultRow(
                "13d", "Async handler stall: sampling due → first sample", value: DetectionLatencyFigure.summary(due),
                goal: "stated (a look every pollInterval, then one sampling interval)", verdict: .info,
                method:
                    "samples[0].offsetMs − threshold × samplingLead over the reports with samples (quiet series); \(series)",
                data: DetectionLatencyFigure.stats(due)),
        ]
    }

    private static func value(after key: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(key) }
            .flatMap { Double($0.dropFirst(key.count).trimmingCharacters(in: .whitespaces)) }
    }

    /// "41545 requests in 5.01s, …"
    private static func requests(in text: String) -> Double? {
        text.split(separator: "\n").first { $0.contains(" requests in ") }
            .flatMap { Double($0.trimmingCharacters(in: .whitespaces).split(separator: " ")[0]) }
    }
}
