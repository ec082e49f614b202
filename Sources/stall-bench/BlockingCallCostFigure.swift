import Foundation

/// Figure 17: what the blocking-call wrappers cost a call, in instructions counted by callgrind
/// (deterministic on a noisy machine): a call that does not block (a `read` that returns EAGAIN)
/// on a thread that may block and on a Swift task's thread (the one that reads the clock twice),
/// and a 1 ms `usleep` on a task's thread (the record: frames, task, scope). Each is the
/// difference between the workload with a detector running and without, over the calls, inside
/// the workload's own function only.
enum BlockingCallCostFigure {
    static func run(_ context: BenchContext) throws -> FigureResult {
        if let reason = Callgrind.unavailableReason {
            return FigureResult(figure: .blockingCallCost, rows: [], notes: ["\(reason): not measured"])
        }
        let calls = context.pick(20_000, quick: 2_000)
        let sleeps = context.pick(200, quick: 20)
        var rows: [ResultRow] = []
        let cases: [(String, String, [String], Int, Double)] = [
            ("17a", "read returning EAGAIN on a thread that may block", [], calls, 40),
            ("17b", "read returning EAGAIN in a Swift task (timed: two clock reads)", ["--in-task"], calls, 150),
            (
                "17c", "usleep(1000) in a Swift task, recorded (frames, task, scope)", ["--in-task", "--sleep"], sleeps,
                1000
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
        return FigureResult(figure: .blockingCallCost, rows: rows)
    }
}
