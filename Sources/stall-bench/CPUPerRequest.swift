import Foundation

/// A server's CPU time per request under wrk, measured for two variants of it in alternating rounds
/// (which variant goes first alternates; a fresh server each run): the process's utime+stime over
/// the run (/proc/<pid>/stat) ÷ the requests wrk completed. Req/s swings more between rounds on a
/// shared machine than CPU per request does.
struct CPUPerRequest {
    /// Medians of the variant measured and of its baseline, in nanoseconds per request and req/s.
    var cpu: Double
    var baselineCPU: Double
    var rate: Double
    var baselineRate: Double
    /// The spread of the per-round ratios (variant ÷ the baseline of the same round): lowest, highest.
    var roundRatios: [Double]
    /// Median over the variant's runs of StallMonitor's own threads' share of the process's CPU
    /// time during the run (schedstat of the threads named `stall-…` ÷ all threads').
    var monitorShare: Double
    /// The median of the per-round ratios and its distribution-free interval (the k-th lowest and
    /// highest round for the widest k that keeps 95 % coverage; nil with fewer than 6 rounds).
    var roundMedian: Double
    var roundInterval: (low: Double, high: Double, coverage: Double)?

    /// Variant CPU per request ÷ the baseline's.
    var ratio: Double { cpu / max(baselineCPU, 1) }
    /// Variant req/s ÷ the baseline's.
    var rateRatio: Double { rate / max(baselineRate, 1) }

    /// Measures `rounds` rounds of `seconds` of wrk on `path`; `start(true)` starts the variant,
    /// `start(false)` the baseline, `stop` stops either.
    static func measure<Server: PortFileServer>(
        rounds: Int, seconds: Int, path: String, scratch: URL, start: (_ variant: Bool) throws -> Server,
        stop: (Server) -> Void
    ) throws -> CPUPerRequest {
        var cpu: [Bool: [Double]] = [:]
        var rate: [Bool: [Double]] = [:]
        var shares: [Double] = []
        for round in 0..<rounds {
            for variant in round % 2 == 0 ? [false, true] : [true, false] {
                let server = try start(variant)
                defer { stop(server) }
                let before = server.processCPUNanos()
                let threadsBefore = server.monitorAndProcessCPUNanos()
                let run = try ServerFigureTools.wrk(server.url + path, seconds: seconds, scratch: scratch)
                let used = server.processCPUNanos() - before
                let threadsAfter = server.monitorAndProcessCPUNanos()
                if variant {
                    let process = threadsAfter.process - threadsBefore.process
                    shares.append(process > 0 ? (threadsAfter.monitor - threadsBefore.monitor) / process : 0)
                }
                let text = String(decoding: run.stdout, as: UTF8.self)
                guard let perSecond = value(after: "Requests/sec:", in: text), let requests = requests(in: text),
                    requests > 0
                else {
                    throw BenchError("wrk printed no rate: \(text)")
                }
                cpu[variant, default: []].append(used / requests)
                rate[variant, default: []].append(perSecond)
            }
        }
        let pairs = zip(cpu[true] ?? [], cpu[false] ?? []).map { $0 / max($1, 1) }
        return CPUPerRequest(
            cpu: Stats.median(cpu[true] ?? []), baselineCPU: Stats.median(cpu[false] ?? []),
            rate: Stats.median(rate[true] ?? []), baselineRate: Stats.median(rate[false] ?? []),
            roundRatios: [pairs.min() ?? 0, pairs.max() ?? 0], monitorShare: Stats.median(shares),
            roundMedian: Stats.median(pairs), roundInterval: Stats.medianInterval(pairs))
    }

    /// A judged row: `rounds` rounds (1 when quick; `stall-bench run --server-rounds` overrides it) of 5 s of wrk on `/fast`, passing when the
    /// variant's CPU per request is at most `goal` times the baseline's and, where `shareGoal` is
    /// given, StallMonitor's own threads take at most that share of the process's CPU;
    /// `method(rounds, seconds)` says how it was measured.
    static func row<Server: PortFileServer>(
        _ figure: String, _ name: String, goal: Double, shareGoal: Double? = nil, rounds: Int, context: BenchContext,
        method: (_ rounds: Int, _ seconds: Int) -> String, start: (_ variant: Bool) throws -> Server,
        stop: (Server) -> Void
    ) throws -> ResultRow {
        let rounds = context.pick(context.serverRounds ?? rounds, quick: 1)
        let seconds = context.pick(5, quick: 1)
        let measured = try measure(
            rounds: rounds, seconds: seconds, path: "/fast", scratch: context.scratch, start: start, stop: stop)
        let goalText =
            "≤ \(goal)"
            + (shareGoal.map { "; the monitor's threads ≤ \(Format.fixed($0 * 100, 1)) % of the process CPU" } ?? "")
        return .judged(
            figure, name, value: measured.summary, goal: goalText,
            ok: measured.ratio <= goal && shareGoal.map { measured.monitorShare <= $0 } ?? true,
            method: method(rounds, seconds), data: measured.data(rounds: rounds))
    }

    /// "1.004 (median 41.2 µs vs 41.0 µs per request, rounds 0.98–1.03; req/s 9000 vs 9100, ratio 0.989;
    /// the monitor's threads 0.12 % of the process CPU)"
    var summary: String {
        Format.ratio(ratio) + " (median \(Format.micro(cpu)) vs \(Format.micro(baselineCPU)) per request, rounds "
            + "\(Format.ratio(roundRatios[0]))–\(Format.ratio(roundRatios[1])), their median \(Format.ratio(roundMedian))"
            + (roundInterval.map {
                " in \(Format.ratio($0.low))–\(Format.ratio($0.high)) (\(Format.fixed($0.coverage * 100, 0)) % interval)"
            } ?? "") + "; req/s \(Int(rate)) vs "
            + "\(Int(baselineRate)), ratio \(Format.ratio(rateRatio)); the monitor's threads "
            + "\(Format.fixed(monitorShare * 100, 2)) % of the process CPU)"
    }

    /// The figures as row data.
    func data(rounds: Int) -> [String: Double] {
        [
            "ratio": ratio, "cpuPerRequestNs": cpu, "baselineCPUPerRequestNs": baselineCPU,
            "requestsPerSecondRatio": rateRatio, "lowestRoundRatio": roundRatios[0],
            "highestRoundRatio": roundRatios[1], "rounds": Double(rounds), "monitorThreadsShare": monitorShare,
            "roundMedian": roundMedian, "roundIntervalLow": roundInterval?.low ?? 0,
            "roundIntervalHigh": roundInterval?.high ?? 0, "roundIntervalCoverage": roundInterval?.coverage ?? 0,
        ]
    }

    /// The number after `key` on wrk's line that starts with it.
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
