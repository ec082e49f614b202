import ArgumentParser
import Foundation

/// Benchmarks of StallMonitor's cost and accuracy and of `stallreport summarize`'s speed
/// (issue 6). `Scripts/bench` runs every figure in a release build.
@main
struct StallBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stall-bench",
        abstract: "Measures StallMonitor's overhead, latency, accuracy and memory, and stallreport's speed.",
        discussion: """
            Every figure that depends on machine speed is a ratio against a baseline measured in the \
            same run (with and without runs alternate; medians of several repetitions). Absolute \
            times are shown but are never the verdict.
            """,
        subcommands: [
            RunFigures.self, ListFigures.self, GenerateReports.self, MemoryHost.self, IdleHost.self, WakeReference.self,
            BlockingCallLoop.self, BlockingRecordCost.self,
            InstructionCounts.self, InstructionLoop.self,
        ],
        defaultSubcommand: RunFigures.self)
}

/// `stall-bench list`: the figures and their names.
struct ListFigures: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the figures.")

    func run() {
        for figure in FigureKind.allCases {
            print("\(figure.number)\t\(figure.rawValue)\t\(figure.title)")
        }
    }
}
