import Foundation
import StallMonitor

/// Figure 14: what reading a sample's async callers costs the watchdog, against the stack
/// unwinding it accompanies. Nothing of it runs on the sampled thread (the handler's pause,
/// figure 3, is unchanged: the handler does nothing for it).
enum AsyncChainsFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let rounds = context.pick(400, quick: 20)
        let result = AsyncChainCost.measure(rounds: rounds)
        if let problem = result.problem { throw BenchError("async chains not measured: \(problem)") }
        let ratio = result.chainNanoseconds / max(result.unwindNanoseconds, 1)
        return FigureResult(
            figure: .asyncChains,
            rows: [
                ResultRow(
                    "14", "Async call chain read per sample vs the stack it accompanies",
                    value:
                        "\(Format.fixed(result.chainNanoseconds / 1e3, 1)) µs for \(result.callers) callers vs \(Format.fixed(result.unwindNanoseconds / 1e3, 1)) µs for \(result.frames) frames: ratio \(Format.ratio(ratio))",
                    goal:
                        "stated (issue 27: the ratio to the stack unwinding; the handler's pause, figure 3, is unchanged by construction)",
                    verdict: .info,
                    method:
                        "a pool task five async calls deep (\(result.callers) resume functions in its chain, thunks and the runtime's included) asleep in read(); \(rounds) rounds of: its stack copied and unwound with libdw (as for a blocked stall sample), then its chain read with process_vm_readv (the top 64 KiB of the stack searched for the running async frame, each context checked; about 8 process_vm_readv calls, which dominate); medians",
                    data: [
                        "chainNanoseconds": result.chainNanoseconds, "unwindNanoseconds": result.unwindNanoseconds,
                        "ratio": ratio,
                        "callers": Double(result.callers), "frames": Double(result.frames),
                    ])
            ])
    }
}
