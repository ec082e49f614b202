import Foundation

/// Figure 18: what the monitor adds to a SwiftNIO server's requests on its event loops, counted in
/// instructions by callgrind. Figures 11a and 11e measure the CPU time per request under wrk, whose
/// rounds swing by ±10 % on a shared machine, more than the 1 % they judge; these counts repeat
/// within a few tenths of a percent (what varies is work done per unit of time, such as a token
/// the watchdog queues on a loop it finds busy: counted at native pace, the poll interval
/// stretched by the slowdown ``ServerPace`` measures). The monitor's own threads are not counted here: their share of the
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
        let requests = context.pick(5_000, quick: 100)
        let warmUp = context.pick(500, quick: 20)
        var rows: [ResultRow] = []
        let nio = [
            ("18a", "NIO server: instructions per request on its event loops, blocking calls watched vs not"),
            ("18b", "NIO server: instructions per request on its event loops, monitored vs not"),
        ]
        if let reason = ServerInstructions.unavailableReason() {
            rows += nio.map { ServerInstructions.unmeasured($0.0, $0.1, goal: goal, reason: reason) }
        } else {
            let pace = try ServerPace.measure(
                binary: try context.binary("nio-stall-demo"),
                unmonitored: { nioArguments(reports: $0, portFile: $1) + ["--no-monitor"] }, path: "/fast",
                requests: requests, warmUp: warmUp, context: context, stop: stopNIO(context))
            rows.append(
                try loopInstructions(
                    nio[0].0, nio[0].1, variants: "monitored in both: --blocking-threshold-ms 10 vs none",
                    context: context, pace: pace, variant: { $0 ? ["--blocking-threshold-ms", "10"] : [] }))
            rows.append(
                try loopInstructions(
                    nio[1].0, nio[1].1, variants: "monitored (the loops and the pool) vs --no-monitor",
                    context: context, pace: pace, variant: { $0 ? [] : ["--no-monitor"] }))
        }
        let hummingbird = [
            (
                "18c",
                "Hummingbird 2 server: instructions per request on its event loops and pool workers, blocking calls watched vs not"
            ),
            (
                "18d",
                "Hummingbird 2 server: instructions per request on its event loops and pool workers, monitored vs not"
            ),
        ]
        let preload = context.binaries.appendingPathComponent(sigsuspendCopy)
        let unavailable = ServerInstructions.unavailableReason {
            if let reason = IdleLoopKind.hummingbird.unavailable(context) { return reason }
            guard FileManager.default.fileExists(atPath: preload.path) else {
                return "\(preload.path) not found: build it (Examples/HummingbirdServer, swift build -c release "
                    + "--product ValgrindSigsuspendCopy; Scripts/bench does)"
            }
            return nil
        }
        if let reason = unavailable {
            rows += hummingbird.map { ServerInstructions.unmeasured($0.0, $0.1, goal: goal, reason: reason) }
        } else {
            let pace = try ServerPace.measure(
                binary: try context.binary("hummingbird-stall-demo"),
                unmonitored: { HummingbirdServerProcess.Mode.unwatched.arguments(reports: $0, portFile: $1) },
                environment: ["LD_PRELOAD": preload.path], path: "/fast", requests: requests, warmUp: warmUp,
                context: context, stop: { _, process in process.terminate() })
            rows.append(
                try hummingbirdInstructions(
                    hummingbird[0].0, hummingbird[0].1,
                    variants: "watched in both (event loops and pool): blockingCalls on (10 ms) vs off",
                    context: context, pace: pace, preload: preload, baseline: .watchedWithoutBlockingCalls))
            rows.append(
                try hummingbirdInstructions(
                    hummingbird[1].0, hummingbird[1].1,
                    variants: "watched (event loops, pool, blocking calls) vs no monitor", context: context,
                    pace: pace, preload: preload, baseline: .unwatched))
        }
        return FigureResult(figure: .serverInstructions, rows: rows)
    }

    /// Every row's goal: at most 1 % more instructions per request.
    private static let goal = 1.01

    /// A row of hummingbird-stall-demo's instructions per request on the threads that serve it,
    /// watched with everything (its default) against `baseline`, looked at every `pace` interval.
    private static func hummingbirdInstructions(
        _ figure: String, _ name: String, variants: String, context: BenchContext, pace: ServerPace,
        preload: URL, baseline: HummingbirdServerProcess.Mode
    ) throws -> ResultRow {
        try ServerInstructions.row(
            figure, name, goal: goal, binary: "hummingbird-stall-demo", variants: variants, context: context,
            pace: pace,
            environment: { ["LD_PRELOAD": preload.path, "STALL_DEMO_POLL_INTERVAL_MS": "\($0)"] },
            arguments: { isVariant, _, reports, portFile in
                (isVariant ? .watched : baseline).arguments(reports: reports, portFile: portFile)
            },
            stop: { _, process in process.terminate() })  // SIGTERM: a graceful shutdown
    }

    /// A row of nio-stall-demo's instructions per request on its event loops, the server started
    /// with `variant(true)` against `variant(false)` as extra arguments, looked at every `pace` interval.
    private static func loopInstructions(
        _ figure: String, _ name: String, variants: String, context: BenchContext, pace: ServerPace,
        variant: @escaping (Bool) -> [String]
    ) throws -> ResultRow {
        try ServerInstructions.row(
            figure, name, goal: goal, binary: "nio-stall-demo", variants: variants, context: context, pace: pace,
            arguments: { isVariant, interval, reports, portFile in
                nioArguments(reports: reports, portFile: portFile) + ["--poll-interval-ms", "\(interval)"]
                    + variant(isVariant)
            },
            stop: stopNIO(context))
    }

    /// nio-stall-demo's command line: two event loops, reports and port file in the run's directory.
    private static func nioArguments(reports: URL, portFile: URL) -> [String] {
        ["--output", reports.path, "--port-file", portFile.path, "--threads", "2"]
    }

    /// Ends nio-stall-demo (GET /quit).
    private static func stopNIO(_ context: BenchContext) -> (_ url: String, _ process: Process) -> Void {
        { url, _ in
            _ = try? Subprocess.run(
                "/usr/bin/curl", ["-s", "--max-time", "60", url + "/quit"], scratch: context.scratch)
        }
    }
}
