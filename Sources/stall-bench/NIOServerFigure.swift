import Foundation
import StallReportModel

/// Figure 11: the SwiftNIO pull probe on a real server (`nio-stall-demo`, two event loops):
/// throughput under wrk with and without the monitor, the watchdog's wake-ups while every loop
/// idles, and how soon and how exactly it reports stalls in handlers.
enum NIOServerFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        try ServerFigureTools.requireWrkAndCurl()
        var rows = [try throughput(context)]
        rows.append(try idle(context))
        rows += try stalls(context)
        rows.append(try blockingCallsCost(context))
        return FigureResult(figure: .nioServer, rows: rows)
    }

    /// 11a: the server's CPU per request under wrk, monitored vs not (req/s beside it), and the
    /// monitor's own threads' share of the process's CPU.
    private static func throughput(_ context: BenchContext) throws -> ResultRow {
        try CPUPerRequest.row(
            "11a", "Server CPU per request with vs without the monitor", goal: 1.01, shareGoal: 0.005, rounds: 9,
            context: context,
            method: { rounds, seconds in
                "wrk -t2 -c32 -d\(seconds)s on GET /fast of nio-stall-demo (2 event loops, release), monitored vs not; process CPU (utime+stime, /proc/<pid>/stat) over the run ÷ requests; the monitor's threads (named stall-…) against all the process's threads, schedstat over the run; \(rounds) rounds alternating which goes first, a fresh server each run; medians, and the lowest and highest ratio of a round's pair"
            },
            start: { try NIOServerProcess(context, monitored: $0) },
            stop: { $0.stop(scratch: context.scratch) })
    }

    /// 11e: what watching blocking calls adds to the CPU per request of a monitored server.
    private static func blockingCallsCost(_ context: BenchContext) throws -> ResultRow {
        try CPUPerRequest.row(
            "11e", "Server CPU per request, blocking calls watched vs the loops watched only", goal: 1.01, rounds: 9,
            context: context,
            method: { rounds, seconds in
                "wrk -t2 -c32 -d\(seconds)s on GET /fast of nio-stall-demo (2 event loops, release), monitored in both: --blocking-threshold-ms 10 vs none; process CPU (utime+stime, /proc/<pid>/stat) over the run ÷ requests; \(rounds) rounds alternating which goes first, a fresh server each run; medians, and the lowest and highest ratio of a round's pair"
            },
            start: {
                try NIOServerProcess(context, monitored: true, extra: $0 ? ["--blocking-threshold-ms", "10"] : [])
            },
            stop: { $0.stop(scratch: context.scratch) })
    }

    /// 11b: the watchdog's wake-ups and CPU while both loops idle.
    private static func idle(_ context: BenchContext) throws -> ResultRow {
        let seconds = context.pick(10.0, quick: 1.0)
        let server = try NIOServerProcess(context, monitored: true)
        defer { server.stop(scratch: context.scratch) }
        let (perSecond, cpuPerSecond, _) = try server.watchdogRates(over: seconds)
        return ResultRow(
            "11b", "Idle server: watchdog wake-ups",
            value: "\(Format.fixed(perSecond, 1))/s, \(Format.micro(cpuPerSecond)) of CPU per second (both loops idle)",
            goal:
                "stated (asleep while the loops idle; the pool looked at every 2 s; each wake-up the server itself has)",
            verdict: .info,
            method:
                "the watchdog thread's voluntary context switches and CPU time (/proc) over \(Int(seconds)) s of an idle monitored server; NIO calls nobody when a loop wakes, so the probe looks every pollInterval (one or two /proc reads per loop); a run-loop monitor parks instead (figure 2)",
            data: ["wakeupsPerSecond": perSecond, "cpuNanosecondsPerSecond": cpuPerSecond, "seconds": seconds])
    }

    /// 11c and 11d: stalls in handlers (CPU spins and sleeps of 300–800 ms): reported duration
    /// against the handler's own clock, and sampling due → first sample.
    private static func stalls(_ context: BenchContext) throws -> [ResultRow] {
        let count = context.pick(40, quick: 4)
        let server = try NIOServerProcess(context, monitored: true)
        // "cpu 400 ms, took 400.3 ms\n"
        let measured = try ServerFigureTools.requestStalls(count: count, seed: 11, suffix: " ms\n") { index, ms in
            try server.get("/\(index % 2 == 0 ? "cpu" : "sleep")?ms=\(ms)", scratch: context.scratch)
        }
        server.stop(scratch: context.scratch)
        let reports = try ServerFigureTools.reports(in: server.reports)
        let errors = zip(reports, measured).map { $0.durationMs - $1 }
        let absolute = errors.map(abs)
        let cpu = stride(from: 0, to: errors.count, by: 2).map { abs(errors[$0]) }
        let blocked = stride(from: 1, to: errors.count, by: 2).map { abs(errors[$0]) }
        let series =
            "\(count) requests to /cpu and /sleep in turn, 300–800 ms each, threshold 250 ms, pollInterval 20 ms"
        return [
            .judged(
                "11c", "Handler stall: reported − measured duration",
                value:
                    "|error| p99 \(Format.milli(Stats.percentile(absolute, 99))) (CPU p99 \(Format.milli(Stats.percentile(cpu, 99))), sleep p99 \(Format.milli(Stats.percentile(blocked, 99))); signed median \(Format.milli(Stats.median(errors))); \(reports.count) of \(count) reported)",
                goal: "every stall reported; |error| p99 ≤ 15 ms (half a poll interval and a tick)",
                ok: reports.count == count && Stats.percentile(absolute, 99) <= 15,
                method: "report.durationMs vs the handler's own clock (in the response body); \(series)",
                data: [
                    "absP99Ms": Stats.percentile(absolute, 99), "cpuAbsP99Ms": Stats.percentile(cpu, 99),
                    "blockedAbsP99Ms": Stats.percentile(blocked, 99), "signedMedianMs": Stats.median(errors),
                    "stalls": Double(count), "reports": Double(reports.count),
                ]),
            ServerFigureTools.firstSampleRow(
                "11d", "Handler stall: sampling due → first sample", reports: reports,
                which:
                    "the demo keeps samples in the first 10 reports per fingerprint and hour, the default rate limit",
                series: series),
        ]
    }
}
