import Foundation

/// Figure 17: what the blocking-call wrappers cost a call, in instructions counted by callgrind
/// (deterministic on a noisy machine): a call that does not block (a `read` that returns EAGAIN)
/// on a thread that may block and on a Swift task's thread (the one that reads the clock twice),
/// and a 1 ms `usleep` on a task's thread (the record: frames, task, scope and the task's async
/// callers, whose chain it walks in the pages it read). Each is the
/// difference between the workload with a detector running and without, over the calls, inside
/// the workload's own function only. Row 17d times a record on the calling thread with the
/// caller's own clock (its reads of the task's memory are system calls, which callgrind does not
/// count).
enum BlockingCallCostFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        let recordCost = try recordCostRow(context)
        if let reason = Callgrind.unavailableReason {
            return FigureResult(
                figure: .blockingCallCost, rows: [recordCost], notes: ["\(reason): instructions not measured"])
        }
        let calls = context.pick(20_000, quick: 2_000)
        let sleeps = context.pick(200, quick: 20)
        var rows: [ResultRow] = []
        let cases: [(String, String, [String], Int, Double)] = [
            ("17a", "read returning EAGAIN on a thread that may block", [], calls, 40),
            ("17b", "read returning EAGAIN in a Swift task (timed: two clock reads)", ["--in-task"], calls, 150),
            (
                "17c", "usleep(1000) in a Swift task, recorded (frames, task, scope, async callers)",
                ["--in-task", "--sleep"], sleeps, 2000
            ),
        ]
        let callgrind = try Callgrind(executable: context.executable, scratch: context.scratch)
        for (part, label, flags, count, goal) in cases {
            let with = try callgrind.instructions(
                in: ["*blockingCostLoop*"], ["blocking-call-loop"] + flags + ["--calls", "\(count)", "--detector"])
            let without = try callgrind.instructions(
                in: ["*blockingCostLoop*"], ["blocking-call-loop"] + flags + ["--calls", "\(count)", "--no-detector"])
            let added = (with - without) / Double(count)
            rows.append(
                .judged(
                    part, "Instructions a call gains from the wrappers: \(label)",
                    value: "\(Format.fixed(added, 1)) instructions per call",
                    goal: "≤ \(Int(goal)) instructions", ok: added <= goal,
                    method:
                        "valgrind --tool=callgrind --toggle-collect on the workload's function, \(count) calls with a BlockingCallDetector (threshold 500 µs) running and without; (with − without) ÷ calls",
                    data: [
                        "instructionsWith": with, "instructionsWithout": without, "calls": Double(count),
                        "addedPerCall": added,
                    ]))
        }
        return FigureResult(figure: .blockingCallCost, rows: rows + [recordCost])
    }

    /// 17d: the time a record takes on the calling thread after the call returned (frames, task,
    /// scope and the async callers read from the task's memory), from the caller's own clock.
    static func recordCostRow(_ context: BenchContext) throws -> ResultRow {
        let calls = context.pick(400, quick: 50)
        let run = try Subprocess.run(
            context.executable.path, ["blocking-record-cost", "--calls", "\(calls)"], scratch: context.scratch)
        guard run.status == 0,
            let line = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").last,
            let result = try? JSONDecoder().decode(BlockingRecordCost.Result.self, from: Data(line.utf8)),
            !result.excessMicroseconds.isEmpty
        else {
            throw BenchError("blocking-record-cost failed (\(run.status)): \(run.stderr)")
        }
        let median = Stats.median(result.excessMicroseconds)
        let p95 = Stats.percentile(result.excessMicroseconds, 95)
        return .judged(
            "17d", "Time a record takes on the calling thread, after a usleep(2 ms) three async functions deep",
            value: "median \(Format.fixed(median, 1)) µs, p95 \(Format.fixed(p95, 1)) µs",
            goal:
                "median ≤ 20 µs, p95 ≤ 100 µs (2 % and 10 % of the 1 ms test threshold, a tenth of that of the 10 ms default)",
            ok: median <= 20 && p95 <= 100,
            method:
                "stall-bench blocking-record-cost: \(calls) calls in one Swift task, each timed by the caller around usleep(2000) with a BlockingCallDetector (threshold 500 µs) running; per call, the caller's time minus the recorded duration; \(result.withAsyncCallers) of \(result.excessMicroseconds.count) records carried async callers",
            data: [
                "medianMicroseconds": median, "p95Microseconds": p95,
                "records": Double(result.excessMicroseconds.count),
                "recordsWithAsyncCallers": Double(result.withAsyncCallers),
            ])
    }
}
