import Foundation
import Glibc
import StallReportKit

/// Figure 16: the share of a stall's samples that have a stack on a loaded machine, against the
/// same stalls on the machine as it is. Two CPU-bound processes per core compete with the stuck
/// thread, which then waits for a CPU most of the time: a signal reaches it only when it runs
/// again. CPU stalls (a spin) and blocked stalls (usleep, unwound from /proc without a signal).
enum SamplesUnderLoadFigure {
    /// Shares of samples with a stack, for the CPU and the blocked stalls of one run.
    private struct Shares {
        var cpu: Double
        var cpuSamples: Int
        var blocked: Double
        var blockedSamples: Int
    }

    private static func measure(_ context: BenchContext, rounds: Int) throws -> Shares {
        let session = try MonitorSession(context)
        let spin = context.pick(1.2, quick: 0.4)
        var steps: [MainLoop.Step] = []
        for _ in 0..<rounds {
            steps.append(.init(gap: 0.1) { Workloads.spin(until: CStallClock.now() + UInt64(spin * 1e9)) })
            steps.append(.init(gap: 0.1) { usleep(400_000) })
        }
        MainLoop.run(steps: steps)
        session.stop()
        let reports = session.arrivals.map(\.report)
        guard reports.count == steps.count else {
            throw BenchError("\(steps.count) stalls gave \(reports.count) reports")
        }
        func share(_ parity: Int) -> (Double, Int) {
            let samples = reports.enumerated().filter { $0.offset % 2 == parity }.flatMap(\.element.samples)
            let withStack = samples.filter { !$0.frames.isEmpty }.count
            return (Double(withStack) / Double(max(samples.count, 1)), samples.count)
        }
        let (cpu, cpuSamples) = share(0)
        let (blocked, blockedSamples) = share(1)
        return Shares(cpu: cpu, cpuSamples: cpuSamples, blocked: blocked, blockedSamples: blockedSamples)
    }

    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(3, quick: 1)
        let quiet = try measure(context, rounds: rounds)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let loaded = try CPUHogProcesses.running(2 * cores) { try measure(context, rounds: rounds) }
        let method =
            "\(rounds) CPU spins of \(context.pick(1.2, quick: 0.4)) s and \(rounds) usleep(400 ms) stalls on the main RunLoop, sampled every 10 ms (threshold 250 ms), first on the machine as it is, then with \(2 * cores) CPU-bound processes (two per core) competing; a sample counts when it has a stack"
        let cpuRatio = loaded.cpu / max(quiet.cpu, 1e-9)
        return FigureResult(
            figure: .samplesUnderLoad,
            rows: [
                .judged(
                    "16a", "CPU stall samples with a stack, two CPU-bound processes per core",
                    value:
                        "\(Format.percent(loaded.cpu)) of \(loaded.cpuSamples) (quiet \(Format.percent(quiet.cpu)) of \(quiet.cpuSamples); ratio \(Format.fixed(cpuRatio, 3)))",
                    goal: "≥ 90 %", ok: loaded.cpu >= 0.9, method: method,
                    data: [
                        "loadedShare": loaded.cpu, "quietShare": quiet.cpu, "ratio": cpuRatio,
                        "loadedSamples": Double(loaded.cpuSamples), "quietSamples": Double(quiet.cpuSamples),
                    ]),
                .judged(
                    "16b", "Blocked stall samples with a stack, two CPU-bound processes per core",
                    value:
                        "\(Format.percent(loaded.blocked)) of \(loaded.blockedSamples) (quiet \(Format.percent(quiet.blocked)) of \(quiet.blockedSamples))",
                    goal: "100 %", ok: loaded.blockedSamples > 0 && loaded.blocked == 1, method: method,
                    data: [
                        "loadedShare": loaded.blocked, "quietShare": quiet.blocked,
                        "loadedSamples": Double(loaded.blockedSamples), "quietSamples": Double(quiet.blockedSamples),
                    ]),
            ])
    }
}
