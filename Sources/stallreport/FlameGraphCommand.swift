import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport flamegraph`: one self-contained HTML page with an interactive flame graph.
struct FlameGraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flamegraph",
        abstract: "Write an interactive flame graph of the merged stall samples as one HTML file.",
        discussion: """
            The page is self-contained (inline CSS, JavaScript and data; nothing is
            loaded from the network): open it in any browser, attach it to a CI run.
            The graph is drawn root at the top, each frame as wide as the time spent
            in it (samples x effective sampling interval) across all stalls given.

              hover    frame name, time, share of all sampled time, sample count,
                       image and source file
              click    zoom into a frame; click it again (or Escape, or 'Reset
                       zoom') to zoom out
              search   highlights matching frames (substring, or /regex/) and sums
                       their time
            App frames are blue, system frames orange, frames standing for missing
            stacks grey. The header shows the number of stalls, distinct
            fingerprints, total and sampled time, the worst stall and the
            classification mix.

            With --blocking-calls the page draws the call sites of blocking-calls
            reports (blocking-*.json) instead: each as wide as the time its calls
            blocked, its async callers at the root and the call as the leaf.

            EXAMPLES
              stallreport flamegraph .stall-reports -o stalls.html
              stallreport flamegraph --blocking-calls .stall-reports -o blocking.html
              stallreport flamegraph --fingerprint 6c1f0b3e9a27d4f1 reports/ -o one.html
              stallreport flamegraph --since 2026-03-01 --title "Nightly" reports/ -o -
            """
    )

    @OptionGroup
    var source: ReportPaths

    @Option(name: [.short, .long], help: ArgumentHelp("Where to write the HTML ('-' for stdout).", valueName: "file"))
    var output: String = "stalls.html"

    @Option(help: ArgumentHelp("Title of the page.", valueName: "text"))
    var title: String = Self.stallTitle

    /// The default title (with --blocking-calls: "Blocking calls").
    static let stallTitle = "Stall flame graph"

    @Flag(
        help:
            "Keep StallMonitor's own frames (its epoll_wait and dispatch_async interposers, its signal handler) in the stacks; left out by default, as fingerprints leave them out."
    )
    var monitorFrames = false

    @Flag(
        help:
            "Draw the call sites of blocking-calls reports (blocking-*.json) instead of stall samples: each call site one stack (its async callers, its stack, then '[blocking CALL]') as wide as the time its calls blocked; --fingerprint takes call-site fingerprints."
    )
    var blockingCalls = false

    @OptionGroup
    var input: ProfileInputOptions

    func validate() throws {
        if blockingCalls && input.filters.minDuration != nil {
            throw ValidationError("--min-duration filters stalls; it does not apply with --blocking-calls")
        }
    }

    func run() throws {
        if blockingCalls {
            let outcome = try input.readBlockingCalls(source.paths)
            let html = try FlameGraphHTML.render(
                FlameGraphData(
                    blockingCalls: outcome.profiles, title: title == Self.stallTitle ? "Blocking calls" : title,
                    names: input.names))
            return try ProfileReading.deliver(Data(html.utf8), as: "flame graph", to: output, from: outcome)
        }
        // Each report is reduced to its stacks as it is read: no profile of any is kept.
        let keepMonitorFrames = monitorFrames
        let outcome = try input.read(
            source.paths,
            reducing: { FlameGraphStall(report: $0, path: $1, includingMonitorFrames: keepMonitorFrames) },
            sampleCount: \.stacks.sampleCount)
        let html = try FlameGraphHTML.render(outcome.profiles, title: title, names: input.names)
        try ProfileReading.deliver(Data(html.utf8), as: "flame graph", to: output, from: outcome)
    }
}
