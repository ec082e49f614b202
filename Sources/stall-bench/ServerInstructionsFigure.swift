import Foundation

/// Figure 18: what the monitor adds to a SwiftNIO server's requests on its event loops, counted in
/// instructions by callgrind. Figures 11a and 11e measure the CPU time per request under wrk, whose
/// rounds swing by ±10 % on a shared machine, more than the 1 % they judge; these counts repeat
/// within a few tenths of a percent (what varies is work done per unit of time, such as a token
/// the watchdog queues on a loop it finds busy). The monitor's own threads are not counted here: their share of the
/// process's CPU is 11a's. Rows 18c and 18d count the Hummingbird 2 server the same way (its event
/// loops and the pool workers that run its handlers), beside figure 13's CPU times, whose rounds
/// swing by ±20 %. valgrind 3.19 cannot run an `async main` program by itself (it faults on the
/// read-only mask `dispatch_main` hands `sigsuspend`): the server runs with `ValgrindSigsuspendCopy`
/// preloaded, which passes the same mask from a copy.
enum ServerInstructionsFigure {
    /// The library preloaded into the Hummingbird server under valgrind (Examples/HummingbirdServer;
    /// `Scripts/bench` links it beside the binaries).
    static let sigsuspendCopy = "libValgrindSigsuspendCopy.so"

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
                try hummingbirdInstructions(
                    "18c",
                    "Hummingbird 2 server: instructions per request on its event loops and pool workers, blocking calls watched vs not",
                    variants: "watched in both (event loops and pool): blockingCalls on (10 ms) vs off",
                    context: context, baseline: .watchedWithoutBlockingCalls),
                try hummingbirdInstructions(
                    "18d",
                    "Hummingbird 2 server: instructions per request on its event loops and pool workers, monitored vs not",
                    variants: "watched (event loops, pool, blocking calls) vs no monitor", context: context,
                    baseline: .unwatched),
            ])
    }

    /// A row of hummingbird-stall-demo's instructions per request on the threads that serve it,
    /// watched with everything (its default) against `baseline`; unjudged when the server or the
    /// preloaded library is not built.
    private static func hummingbirdInstructions(
        _ figure: String, _ name: String, variants: String, context: BenchContext,
        baseline: HummingbirdServerProcess.Mode
    ) throws -> ResultRow {
        let preload = context.binaries.appendingPathComponent(sigsuspendCopy)
        return try ServerInstructions.row(
            figure, name, goal: 1.01, binary: "hummingbird-stall-demo", variants: variants, context: context,
            environment: ["LD_PRELOAD": preload.path],
            unavailable: {
                if let reason = IdleLoopKind.hummingbird.unavailable(context) { return reason }
                guard FileManager.default.fileExists(atPath: preload.path) else {
                    return "\(preload.path) not found: build it (Examples/HummingbirdServer, swift build -c release "
                        + "--product ValgrindSigsuspendCopy; Scripts/bench does)"
                }
                return nil
            },
            arguments: { isVariant, reports, portFile in
                (isVariant ? .watched : baseline).arguments(reports: reports, portFile: portFile)
            },
            stop: { _, process in process.terminate() })  // SIGTERM: a graceful shutdown
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
