import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport export`: stall samples in formats other profilers and viewers read.
struct ExportCommand: ParsableCommand {
    /// The export formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case folded, speedscope
        case chromeTrace = "chrome-trace"
        case pprof
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export stall samples as folded stacks, a speedscope profile, a Chrome trace or a pprof profile.",
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
              pprof         A gzipped pprof profile (google/pprof profile.proto)
                            for go tool pprof, Pyroscope, Parca, Grafana: values
                            samples/count and wall/nanoseconds (the interval),
                            labels loop, thread, thread_id, pid, stall_id,
                            fingerprint, classification, syscall; mappings with
                            the images' GNU build IDs for symbolization.

            With --blocking-calls the call sites of blocking-calls reports
            (blocking-*.json) are exported instead, folded or for speedscope: one
            stack per call site (its async callers, its stack, '[blocking CALL]'),
            weighing the time its calls blocked.

            EXAMPLES
              stallreport export --format folded .stall-reports -o stalls.folded
              flamegraph.pl stalls.folded > stalls.svg
              stallreport export --format speedscope .stall-reports -o stalls.speedscope.json
              stallreport export --format chrome-trace --since 2026-03-01 reports/ -o trace.json
              stallreport export --format folded --fingerprint 6c1f0b3e9a27d4f1 reports/ -o -
              stallreport export --format pprof .stall-reports -o stalls.pb.gz
              go tool pprof -top stalls.pb.gz
              stallreport export --format folded --blocking-calls .stall-reports -o blocking.folded
            """
    )

    @Option(help: "Output format.")
    var format: Format

    @OptionGroup
    var source: ReportPaths

    @Option(name: [.short, .long], help: ArgumentHelp("Where to write ('-' for stdout).", valueName: "file"))
    var output: String

    @Flag(
        help:
            "Export the call sites of blocking-calls reports (blocking-*.json) instead of stall samples: each call site one stack (its async callers, its stack, then '[blocking CALL]') weighing the time its calls blocked (pprof: valued in calls and in nanoseconds blocked). Folded, speedscope and pprof; --fingerprint takes call-site fingerprints."
    )
    var blockingCalls = false

    @OptionGroup
    var input: ProfileInputOptions

    func validate() throws {
        if blockingCalls && format == .chromeTrace {
            throw ValidationError(
                "--blocking-calls exports folded stacks, a speedscope profile or a pprof profile, not chrome-trace: a blocking-calls report aggregates calls by call site, without each call's start time, so there is no timeline to draw"
            )
        }
        if blockingCalls && input.filters.minDuration != nil {
            throw ValidationError("--min-duration filters stalls; it does not apply with --blocking-calls")
        }
    }

    func run() throws {
        if blockingCalls { return try exportBlockingCalls() }
        switch format {
        case .folded: try exportFolded()
        case .speedscope:
            // Each report is read down to its stacks (no profile kept).
            let outcome = try input.read(
                source.paths, reducing: { report, _ in SampleStacks(report: report) }, sampleCount: \.sampleCount)
            let data = try SpeedscopeExport.render(
                stalls: outcome.profiles, name: "stalls",
                exporter: "stallreport \(StallReportCommand.configuration.version)", names: input.names)
            try ProfileReading.deliver(data, as: "speedscope export", to: output, from: outcome)
        case .chromeTrace:
            // One event per stall: its samples' stacks are never needed.
            let outcome = try input.read(
                source.paths, reducing: StallProfile.init(withoutStacksOf:path:), sampleCount: \.samples.count)
            try ProfileReading.deliver(
                try ChromeTraceExport.render(outcome.profiles, names: input.names), as: "chrome-trace export",
                to: output,
                from: outcome)
        case .pprof: try exportPprof()
        }
    }

    /// Reads each report down to its stacks (no profile kept) and streams the folded lines to
    /// the output (their text is often larger than the reports).
    private func exportFolded() throws {
        let outcome = try input.read(
            source.paths, reducing: { report, _ in SampleStacks(report: report) }, sampleCount: \.sampleCount)
        let stacks = SampleStacks(outcome.profiles)
        try ProfileReading.deliver(as: "folded export", to: output, from: outcome) { write in
            try FoldedExport.render(stacks, names: input.names, into: write)
        }
    }

    /// Reads the blocking-calls reports and writes their call sites' stacks, folded, as a
    /// speedscope profile or as a pprof profile.
    private func exportBlockingCalls() throws {
        let outcome = try input.readBlockingCalls(source.paths)
        if format == .pprof {
            let data = try PprofExport.render(
                blockingCalls: outcome.profiles,
                comment: "stallreport \(StallReportCommand.configuration.version): blocking calls", names: input.names)
            return try ProfileReading.deliver(data, as: "pprof export", to: output, from: outcome)
        }
        let stacks = BlockingCallStacks.stacks(of: outcome.profiles)
        if format == .speedscope {
            let data = try SpeedscopeExport.render(
                stalls: [stacks], name: "blocking calls",
                exporter: "stallreport \(StallReportCommand.configuration.version)", names: input.names)
            return try ProfileReading.deliver(data, as: "speedscope export", to: output, from: outcome)
        }
        try ProfileReading.deliver(as: "folded export", to: output, from: outcome) { write in
            try FoldedExport.render(stacks, names: input.names, into: write)
        }
    }

    /// Reads the reports keeping addresses and images, and writes the gzipped pprof profile.
    private func exportPprof() throws {
        let outcome = try input.read(
            source.paths, reducing: PprofStall.init(report:path:), sampleCount: \.samples.count)
        let stalls = outcome.profiles.count
        let comment =
            "stallreport \(StallReportCommand.configuration.version) export of \(stalls) stall\(stalls == 1 ? "" : "s")"
        let data: Data
        do {
            data = try PprofExport.render(outcome.profiles, comment: comment, names: input.names)
        } catch {
            throw Output.inputError("cannot write pprof export to \(output): \(error)")
        }
        try ProfileReading.deliver(data, as: "pprof export", to: output, from: outcome)
    }
}
