import Foundation

/// Figure 18: what the monitor adds to a SwiftNIO server's requests on its event loops, counted in
/// instructions by callgrind. Figures 11a and 11e measure the CPU time per request under wrk, whose
/// rounds swing by ±10 % on a shared machine, more than the 1 % they judge; these counts repeat
/// within a few tenths of a percent (what varies is work done per unit of time, such as a token
/// the watchdog queues on a loop it finds busy). The monitor's own threads are not counted here: their share of the
/// process's CPU is 11a's. (valgrind 3.19 cannot run the Hummingbird 2 server: it stops with an
/// internal SIGSEGV, with or without a monitor, so figure 13 has no such row.)
enum ServerInstructionsFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        FigureResult(
            figure: .serverInstructions,
            rows: [
                try loopInstructions(
                    "18a", "NIO server: instructions per request on its event loops, blocking calls watched vs not",
                    variants: "monitored in both: --blocking-threshold-ms 10 vs none", context: context,
                    variant: { $0 ? ["--blocking-threshold-ms", "10"] : [] }),
                try loopInstructions(
                    "18b", "NIO server: instructions per request on its event loops, monitored vs not",
                    variants: "monitored (the loops and the pool) vs --no-monitor", context: context,
                    variant: { $0 ? [] : ["--no-monitor"] }),
            ])
    }

    /// A row of nio-stall-demo's instructions per request on its event loops, the server started
    /// with `variant(true)` against `variant(false)` as extra arguments.
    private static func loopInstructions(
        _ figure: String, _ name: String, variants: String, context: BenchContext,
        variant: @escaping (Bool) -> [String]
    ) throws -> ResultRow {
        try ServerInstructions.row(
            figure, name, goal: 1.01, binary: "nio-stall-demo", variants: variants, context: context,
            arguments: { isVariant, reports, portFile in
                ["--output", reports.path, "--port-file", portFile.path, "--threads", "2"] + variant(isVariant)
            },
            stop: { url, _ in
                _ = try? Subprocess.run(
                    "/usr/bin/curl", ["-s", "--max-time", "60", url + "/quit"], scratch: context.scratch)
            })
    }
}
