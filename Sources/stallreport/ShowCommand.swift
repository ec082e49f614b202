import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport show`: one report as text, like a crash log.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one stall report like a crash log: facts, representative stack, call tree.",
        discussion: """
        Prints, for one report:
          - the facts: when, how long, threshold, classification and the stuck
            thread's CPU time, thread, run loop mode and passes, process, and
            samples taken, timed out and skipped (with the reasons)
          - the representative stack, leaf first, numbered like a crash log:
            image, address, symbol + offset, file:line
          - the call tree of all samples, root first, heaviest path first, with
            each frame's share of the samples and its sample count; branches
            below --min-percent are left out (and counted)
        App frames are highlighted on a terminal (never with NO_COLOR).

        EXAMPLES
          stallreport show .stall-reports/stall-20260301T120000.000Z-p4242-0001.json
          stallreport show --min-percent 0 report.json | less -R
        """
    )

    @Argument(help: ArgumentHelp("The report file.", valueName: "report"))
    var report: String

    @Option(help: ArgumentHelp("Hide call-tree branches with a smaller share of the samples (percent; default 1).", valueName: "percent"))
    var minPercent: Double = CallTreeTextRenderer.defaultMinPercent

    @OptionGroup
    var color: ColorOptions

    @OptionGroup(title: "Names")
    var names: NameOptions

    @Option(help: ArgumentHelp("Largest report file read, in MiB.", valueName: "MiB"))
    var maxFileSize: Int = ReportLoader.defaultMaxFileSize / (1024 * 1024)

    func validate() throws {
        guard minPercent >= 0, minPercent <= 100 else { throw ValidationError("--min-percent must be between 0 and 100") }
        guard maxFileSize >= 1 else { throw ValidationError("--max-file-size must be at least 1 (MiB)") }
    }

    func run() throws {
        switch ReportLoader(maxFileSize: maxFileSize * 1024 * 1024).load(path: report) {
        case .success(let decoded):
            Output.stdout(ReportShowRenderer(style: color.style(), minPercent: minPercent, names: names.style).render(decoded, path: report))
        case .failure(let error):
            Output.note("\(report): \(error.description)")
            throw ExitCode(ExitStatus.inputError)
        }
    }
}
