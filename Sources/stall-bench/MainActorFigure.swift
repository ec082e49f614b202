import Foundation

/// Figure 12: the MainActor of an `async main` program (`async-main-host`, release): what the
/// watchdog costs while the MainActor idles, and how exactly its stalls are timed.
enum MainActorFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        FigureResult(figure: .mainActor, rows: [try idle(context), try stalls(context)])
    }

    /// 12a: the watchdog's wake-ups and CPU while the MainActor idles (measured by the host
    /// itself from /proc: the watchdog thread's voluntary switches and schedstat CPU time).
    private static func idle(_ context: BenchContext) throws -> ResultRow {
        let seconds = context.pick(10.0, quick: 1.0)
        let run = try host(context, ["idle", reports(context).path, "\(seconds)"])
        // "idle 10.0 s: 49.3 watchdog wake-ups/s, 1234 µs of watchdog CPU per second"
        guard let line = run.split(separator: "\n").first(where: { $0.hasPrefix("idle ") }) else {
            throw BenchError("async-main-host idle printed no measurement: \(run)")
        }
        let numbers = line.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
        guard numbers.count >= 3 else { throw BenchError("unexpected async-main-host output: \(line)") }
        let (perSecond, cpuMicros) = (numbers[1], numbers[2])
        return ResultRow(
            "12a", "Idle MainActor: watchdog wake-ups",
            value: "\(Format.fixed(perSecond, 1))/s, \(Format.fixed(cpuMicros, 0)) µs of CPU per second",
            goal: "stated (asleep while idle: a look every 2 s)", verdict: .info,
            method:
                "the watchdog thread's voluntary context switches and CPU time (/proc) over \(Int(seconds)) s of an async-main program whose MainActor is idle; the probe reads libdispatch's main queue state once per look (no syscall)",
            data: ["wakeupsPerSecond": perSecond, "cpuMicrosecondsPerSecond": cpuMicros, "seconds": seconds])
    }

    /// 12b: MainActor stalls of 400 ms (CPU spins and sleeps): reported duration against the
    /// stalled function's own clock, one fresh program per stall.
    private static func stalls(_ context: BenchContext) throws -> ResultRow {
        let count = context.pick(10, quick: 2)
        var errors: [Double] = []
        for index in 0..<count {
            let directory = reports(context)
            let output = try host(context, [index % 2 == 0 ? "cpu" : "block", directory.path])
            // "stalled thread <tid> for <ms> ms"
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("stalled thread") }),
                let measured = Double(line.split(separator: " ")[4])
            else {
                throw BenchError("async-main-host printed no stall: \(output)")
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            let reports = names.filter { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }
            guard reports.count == 1,
                let data = FileManager.default.contents(atPath: directory.appendingPathComponent(reports[0]).path),
                let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let reported = object["durationMs"] as? Double
            else {
                throw BenchError("expected one report of the MainActor stall, found \(reports.count)")
            }
            errors.append(reported - measured)
        }
        let absolute = errors.map(abs)
        return ResultRow(
            "12b", "MainActor stalls: reported − measured duration",
            value:
                "median \(Format.fixed(Stats.median(errors), 1)) ms, max |error| \(Format.fixed(absolute.max() ?? 0, 1)) ms",
            goal: "start within half a poll interval (10 ms), end exact", verdict: .info,
            method:
                "\(count) async-main-host runs alternating a 400 ms CPU spin and a 400 ms sleep in a @MainActor function (one report each); the function's own clock against the report's durationMs",
            data: ["medianErrorMs": Stats.median(errors), "maxAbsErrorMs": absolute.max() ?? 0, "runs": Double(count)])
    }

    private static func reports(_ context: BenchContext) -> URL {
        context.scratch.appendingPathComponent("mainactor-\(UUID().uuidString)", isDirectory: true)
    }

    private static func host(_ context: BenchContext, _ arguments: [String]) throws -> String {
        let run = try Subprocess.run(try context.binary("async-main-host").path, arguments, scratch: context.scratch)
        let output = String(decoding: run.stdout, as: UTF8.self)
        guard run.status == 0 else {
            throw BenchError("async-main-host \(arguments.joined(separator: " ")) failed: \(run.stderr)")
        }
        return output
    }
}
