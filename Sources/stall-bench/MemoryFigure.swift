import Foundation

/// Figure 7: resident memory of a host process with the monitor against the same host without
/// it: idle, during a long stall being sampled, and after the stall's report was written.
enum MemoryFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let pairs = context.pick(3, quick: 1)
        let stallMs = context.pick(3_000, quick: 500)
        var with: [MemoryHost.Phases] = []
        var without: [MemoryHost.Phases] = []
        for pair in 0..<pairs {
            for monitored in pair % 2 == 0 ? [false, true] : [true, false] {
                let directory = context.freshDirectory("memory")
                let run = try Subprocess.run(context.executable.path, [
                    "memory-host", monitored ? "--monitor" : "--no-monitor", "--stall-ms", "\(stallMs)", "--reports", directory.path,
                ], scratch: context.scratch)
                guard run.status == 0, let line = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").last else {
                    throw BenchError("memory-host failed (\(run.status)): \(run.stderr)")
                }
                let phases = try JSONDecoder().decode(MemoryHost.Phases.self, from: Data(line.utf8))
                if monitored { with.append(phases) } else { without.append(phases) }
            }
        }
        func extra(_ phase: KeyPath<MemoryHost.Phases, Double>) -> Double {
            Stats.median(with.map { $0[keyPath: phase] }) - Stats.median(without.map { $0[keyPath: phase] })
        }
        func base(_ phase: KeyPath<MemoryHost.Phases, Double>) -> Double { Stats.median(without.map { $0[keyPath: phase] }) }
        let limit = 2.0 * 1_048_576
        let method = "\(pairs) alternating pairs of child processes (stall-bench memory-host, the same binary with and without StallMonitor.start); VmRSS from /proc/self/status; medians, with minus without"
        let stallSeconds = Double(stallMs) / 1_000
        var rows: [ResultRow] = []
        for (part, name, phase, anon) in [
            ("7a", "Extra RSS, monitor running, loop idle", \MemoryHost.Phases.idle, \MemoryHost.Phases.idleAnon),
            ("7b", "Extra RSS during a \(Format.fixed(stallSeconds, 1)) s stall being sampled (100-frame stack)", \MemoryHost.Phases.stall, \MemoryHost.Phases.stallAnon),
            ("7c", "Extra RSS after the stall's report was written (symbolication loaded)", \MemoryHost.Phases.afterReport, \MemoryHost.Phases.afterReportAnon),
            ("7d", "Extra peak RSS (VmHWM) over the whole run", \MemoryHost.Phases.peak, nil),
        ] as [(String, String, KeyPath<MemoryHost.Phases, Double>, KeyPath<MemoryHost.Phases, Double>?)] {
            let value = extra(phase)
            var data = ["extraBytes": value, "withoutBytes": base(phase), "withBytes": base(phase) + value]
            var split = ""
            if let anon {
                data["extraAnonBytes"] = extra(anon)
                data["extraFileBytes"] = value - extra(anon)
                split = "; anonymous \(Format.mib(extra(anon))), mapped files \(Format.mib(value - extra(anon)))"
            }
            rows.append(.judged(part, name, value: "\(Format.mib(value)) (\(Format.mib(base(phase) + value)) vs \(Format.mib(base(phase)))\(split))",
                                goal: "≤ 2 MiB extra", ok: value <= limit, method: method, data: data))
        }
        return FigureResult(figure: .memory, rows: rows)
    }
}
