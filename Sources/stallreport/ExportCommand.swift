import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport export`: stall samples in formats other profilers and viewers read.
struct ExportCommand: ParsableCommand {
    /// The export formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case folded, speedscope
        case chromeTrace = "chrome-trace"
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export stall samples as folded stacks, a speedscope profile or a Chrome trace.",
        discussion: """
        The samples of all given reports are merged. Each sample weighs its
        report's effective sampling interval, so the weights add up to the sampled
        time (samples x interval). Samples without a full stack appear as
        '[no stack]' or '[syscall NAME, not unwound]' frames. Details and
        examples: Reports/stallreport-export-formats.md.

        FORMATS
          folded        Brendan Gregg's collapsed stacks, one line per stack:
                        'root;...;leaf COUNT', COUNT in microseconds. A ';' in a
                        name becomes U+FF1B '；'. For flamegraph.pl, inferno,
                        speedscope.
          speedscope    speedscope's file format: one merged 'sampled' profile,
                        weights in milliseconds, stalls in time order.
          chrome-trace  Trace Event JSON for Perfetto (ui.perfetto.dev) and
                        chrome://tracing: one complete ('X') event per stall on
                        the stuck thread's track (pid, tid) at its real time;
                        the stack and key facts in 'args'.

        EXAMPLES
          stallreport export --format folded .stall-reports -o stalls.folded
          flamegraph.pl stalls.folded > stalls.svg
          stallreport export --format speedscope .stall-reports -o stalls.speedscope.json
          stallreport export --format chrome-trace --since 2026-03-01 reports/ -o trace.json
          stallreport export --format folded --fingerprint 6c1f0b3e9a27d4f1 reports/ -o -
        """
    )

    @Option(help: "Output format.")
    var format: Format

    @Argument(help: ArgumentHelp("Report files and/or directories (searched recursively for *.json).", valueName: "path"))
    var paths: [String] = []

    @Option(name: [.short, .long], help: ArgumentHelp("Where to write ('-' for stdout).", valueName: "file"))
    var output: String

    @OptionGroup(title: "Filters")
    var filters: ProfileFilterOptions

    @OptionGroup(title: "Time window")
    var window: TimeWindowOptions

    @OptionGroup(title: "Names")
    var names: NameOptions

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    func validate() throws {
        try requirePaths(paths)
    }

    func run() throws {
        let outcome = try ProfileReading.read(paths, options: reading, filter: window.filter(minDurationMs: filters.minDuration),
                                              fingerprints: filters.fingerprints)
        let data: Data
        switch format {
        case .folded: data = Data(FoldedExport.render(outcome.profiles, names: names.style).utf8)
        case .speedscope: data = try SpeedscopeExport.render(outcome.profiles, name: "stalls", exporter: "stallreport \(StallReportCommand.configuration.version)", names: names.style)
        case .chromeTrace: data = try ChromeTraceExport.render(outcome.profiles, names: names.style)
        }
        try ProfileReading.deliver(data, as: "\(format.rawValue) export", to: output, from: outcome)
    }
}
