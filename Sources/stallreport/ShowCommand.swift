import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport show`: one report as text, like a crash log.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show stall reports like crash logs: facts, representative stack, call tree.",
        discussion: """
            Prints, for each report given (one after the other, separated by a blank
            line):
              - the facts: when, how long, threshold, classification and the stuck
                thread's CPU time, thread, run loop mode and passes, process, and
                samples taken, timed out and skipped (with the reasons)
              - the representative stack, leaf first, numbered like a crash log:
                image, address, symbol + offset, file:line
              - the call tree of all samples, root first, heaviest path first, with
                each frame's share of the samples and its sample count; branches
                below --min-percent are left out (and counted)
            A blocking-calls report (blocking-*.json) is shown as its call sites, each
            with its count, total, maximum and the stack of its first call.
            App frames are highlighted on a terminal (never with NO_COLOR). Control
            characters in report strings are shown escaped (\\u{1B}, \\n).
            A file that cannot be used is one line on stderr and exit status 2 (3 when
            it does not exist); the other reports are still shown.

            EXAMPLES
              stallreport show .stall-reports/stall-20260301T120000.000Z-p4242-0001.json
              stallreport show --min-percent 0 report.json | less -R
              stallreport show .stall-reports/*.json
            """
    )

    @Argument(help: ArgumentHelp("The report files.", valueName: "report"))
    var reports: [String] = []

    @Option(
        help: ArgumentHelp(
            "Hide call-tree branches with a smaller share of the samples (percent; default 1).", valueName: "percent"))
    var minPercent: Double = CallTreeTextRenderer.defaultMinPercent

    @OptionGroup
    var color: ColorOptions

    @OptionGroup(title: "Names")
    var names: NameOptions

    @Option(help: ArgumentHelp("Largest report file read, in MiB.", valueName: "MiB"))
    var maxFileSize: Int = ReportLoader.defaultMaxFileSize / (1024 * 1024)

    func validate() throws {
        guard minPercent >= 0, minPercent <= 100 else {
            throw ValidationError("--min-percent must be between 0 and 100")
        }
        guard maxFileSize >= 1 else { throw ValidationError("--max-file-size must be at least 1 (MiB)") }
        guard !reports.isEmpty else { throw ValidationError("give at least one report file") }
    }

    func run() throws {
        let loader = ReportLoader(maxFileSize: maxFileSize * 1024 * 1024)
        let renderer = ReportShowRenderer(
            style: color.style(), minPercent: minPercent, names: names.style, width: TerminalWidth.current())
        var failed = false
        var shown = 0
        let blockingRenderer = BlockingCallsShowRenderer(style: color.style(), names: names.style)
        let file = DocumentFile(maxFileSize: maxFileSize * 1024 * 1024)
        for report in reports {
            // The text of the report, or what is wrong with its file.
            let text: Result<String, ReportProblem> =
                BlockingCallsReport.isFileName(report)
                ? BlockingCallsReport.read(path: report, file: file).map { blockingRenderer.render($0, path: report) }
                    .mapError { ReportProblem(path: report, message: $0.description) }
                : loader.load(path: report).map { renderer.render($0, path: report) }
                    .mapError { ReportProblem(path: report, message: $0.description) }
            switch text {
            case .success(let shownText):
                if shown > 0 { Output.stdout("\n") }
                Output.stdout(shownText)
                shown += 1
            case .failure(let problem):
                Output.note(problem.description)
                failed = true
            }
        }
        let missing = MissingPaths.among(reports)
        if !missing.isEmpty { throw MissingPaths.failure(missing) }
        if failed { throw ExitCode(ExitStatus.inputError) }
    }
}
