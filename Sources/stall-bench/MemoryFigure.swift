import Foundation

/// Figure 7: resident memory of a host process with the monitor against the same host without
/// it: idle, during a long stall being sampled, and after the stall's report was written; with
/// the default in-process symbolication (libdw) and with symbolication left to `stallreport`;
/// and once the monitor released its caches after a quiet period (`releaseCachesAfter`, 2 s here).
enum MemoryFigure {
    enum Variant: CaseIterable {
        case none, monitor, offlineSymbols

        var arguments: [String] {
            switch self {
            case .none: return ["--no-monitor"]
            case .monitor: return ["--monitor"]
            case .offlineSymbols: return ["--monitor", "--offline-symbols"]
            }
        }
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(3, quick: 1)
        let stallMs = context.pick(2_000, quick: 500)
        var phases: [Variant: [MemoryHost.Phases]] = [:]
        for round in 0..<rounds {
            // Rotate the order, so a trend in the machine's state does not favour any variant.
            let order = Variant.allCases.indices.map { Variant.allCases[($0 + round) % Variant.allCases.count] }
            for variant in order {
                let directory = context.freshDirectory("memory")
                let run = try Subprocess.run(
                    context.executable.path,
                    ["memory-host"] + variant.arguments + [
                        "--stall-ms", "\(stallMs)", "--reports", directory.path,
                    ], scratch: context.scratch)
                guard run.status == 0,
                    let line = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").last
                else {
                    throw BenchError("memory-host failed (\(run.status)): \(run.stderr)")
                }
                phases[variant, default: []].append(
                    try JSONDecoder().decode(MemoryHost.Phases.self, from: Data(line.utf8)))
            }
        }
        func median(_ variant: Variant, _ phase: KeyPath<MemoryHost.Phases, Double>) -> Double {
            Stats.median((phases[variant] ?? []).map { $0[keyPath: phase] })
        }
        let mib = 1_048_576.0
        let method =
            "\(rounds) rounds of child processes (stall-bench memory-host: the same binary without a monitor, with one, and with one that leaves symbolication to stallreport; releaseCachesAfter 2 s), order rotated; VmRSS and RssAnon from /proc/self/status; medians, monitor minus none"
        let stallSeconds = Format.fixed(Double(stallMs) / 1_000, 1)
        var rows: [ResultRow] = []
        for (part, name, variant, phase, anon, limit) in [
            (
                "7a", "Extra RSS, monitor running, loop idle", .monitor, \MemoryHost.Phases.idle,
                \MemoryHost.Phases.idleAnon, 1.0
            ),
            (
                "7b", "Extra RSS during a \(stallSeconds) s stall being sampled (100-frame stack)", .monitor, \.stall,
                \.stallAnon, 16
            ),
            ("7c", "Extra RSS after the stall's report was written", .monitor, \.afterReport, \.afterReportAnon, 16),
            ("7d", "Extra RSS during the stall, symbolicateInProcess off", .offlineSymbols, \.stall, \.stallAnon, 4),
            (
                "7e", "Extra RSS after the report, symbolicateInProcess off", .offlineSymbols, \.afterReport,
                \.afterReportAnon, 4
            ),
            ("7g", "Extra RSS after the quiet period (caches released)", .monitor, \.afterQuiet, \.afterQuietAnon, nil),
            (
                "7h", "Extra RSS after the quiet period, symbolicateInProcess off", .offlineSymbols, \.afterQuiet,
                \.afterQuietAnon, nil
            ),
        ]
            as [(
                String, String, Variant, KeyPath<MemoryHost.Phases, Double>, KeyPath<MemoryHost.Phases, Double>, Double?
            )]
        {
            let base = median(.none, phase)
            let extra = median(variant, phase) - base
            let extraAnon = median(variant, anon) - median(.none, anon)
            let value =
                "\(Format.mib(extra)) (\(Format.mib(base + extra)) vs \(Format.mib(base)); anonymous \(Format.mib(extraAnon)), mapped files \(Format.mib(extra - extraAnon)))"
            let data = [
                "extraBytes": extra, "extraAnonBytes": extraAnon, "extraFileBytes": extra - extraAnon,
                "withoutBytes": base, "withBytes": base + extra,
            ]
            if let limit {
                rows.append(
                    .judged(
                        part, name, value: value, goal: "≤ \(Format.fixed(limit, 0)) MiB extra",
                        ok: extra <= limit * mib,
                        method: method, data: data))
            } else {
                rows.append(
                    ResultRow(part, name, value: value, goal: "stated", verdict: .info, method: method, data: data))
            }
        }
        let idleLibraries = Set(
            (phases[.monitor] ?? []).flatMap(\.librariesIdle) + (phases[.offlineSymbols] ?? []).flatMap(\.librariesIdle)
        )
        rows.append(
            .judged(
                "7i", "Unwinding libraries mapped by the idle monitor (before the first stall)",
                value: idleLibraries.isEmpty ? "none" : idleLibraries.sorted().joined(separator: ", "),
                goal: "none", ok: idleLibraries.isEmpty,
                method: "/proc/self/maps of the memory hosts read while the loop idles, before the first stall",
                data: ["libraries": Double(idleLibraries.count)]))
        let peak = median(.monitor, \.peak) - median(.none, \.peak)
        rows.append(
            ResultRow(
                "7f", "Extra peak RSS (VmHWM) over the whole run", value: Format.mib(peak), goal: "stated",
                verdict: .info,
                method: method, data: ["extraBytes": peak]))
        return FigureResult(figure: .memory, rows: rows)
    }
}
