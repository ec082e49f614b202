import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport diff`: compares two sets of reports.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two sets of reports: new, regressed, fixed and unchanged fingerprints.",
        discussion: """
            Give the two sets either as exactly two positional paths, BASE then HEAD,
            or as --base PATH... and --head PATH..., each taking one or more files or
            directories.

              new        only in HEAD
              fixed      only in BASE
              regressed  in both; count or p95 more than --tolerance above BASE
                         (default 0.25 = 25 %)
              unchanged  in both, within the tolerance (possibly better)

            New or regressed fingerprints with fewer than --min-occurrences stalls in
            HEAD are marked '*'. The exit status is 0 whatever changed (use 'gate' to
            fail a build); 2 on usage or input errors. One side may be empty; both
            empty is an input error unless --allow-empty.

            JSON (--format json; formatVersion 1, stable keys, optional keys left out)
              formatVersion, kind ("diff"), tolerance, minOccurrences
              base, head       stalls, totalMs
              counts           new, regressed, fixed, unchanged
              fingerprints[]   fingerprint, change, baseCount, headCount, baseP95Ms,
                               headP95Ms, p95Change (0.25 = +25 %), reasons,
                               belowMinOccurrences, topFrame

            EXAMPLES
              stallreport diff main-reports/ pr-reports/
              stallreport diff --base run1/ run2/ --head run3/ run4/ --format markdown
              stallreport diff --tolerance 0.5 --format json before/ after/
            """
    )

    @Argument(
        help: ArgumentHelp("BASE and HEAD paths (exactly two), when --base/--head are not used.", valueName: "path"))
    var paths: [String] = []

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp("Report files and/or directories of the base (the 'before').", valueName: "path"))
    var base: [String] = []

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp("Report files and/or directories of the head (the 'after').", valueName: "path"))
    var head: [String] = []

    @Option(help: "Output format.")
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Only stalls lasting at least this many milliseconds (both sides).", valueName: "ms"))
    var minDuration: Double?

    @OptionGroup
    var color: ColorOptions

    @OptionGroup(title: "Regression")
    var regression: RegressionOptions

    @OptionGroup
    var input: ReportInputOptions

    func validate() throws {
        if base.isEmpty && head.isEmpty {
            guard paths.count == 2 else {
                throw ValidationError("give exactly two paths (BASE HEAD), or --base PATH... --head PATH...")
            }
        } else {
            guard paths.isEmpty else {
                throw ValidationError("use either two positional paths or --base/--head, not both")
            }
            guard !base.isEmpty, !head.isEmpty else { throw ValidationError("--base and --head must both be given") }
        }
        try validateMilliseconds(minDuration, "--min-duration")
    }

    func run() throws {
        let basePaths = base.isEmpty ? [paths[0]] : base
        let headPaths = head.isEmpty ? [paths[1]] : head
        let filter = input.filter(minDurationMs: minDuration)
        // Each side may be empty (everything new or everything fixed), but not both.
        let baseOutcome = try input.collect(basePaths, filter: filter, label: "base", requireReports: false)
        let headOutcome = try input.collect(headPaths, filter: filter, label: "head", requireReports: false)
        if !input.reading.allowEmpty && baseOutcome.collection.reportsRead == 0
            && headOutcome.collection.reportsRead == 0
        {
            throw Output.inputError(
                "no valid report in base (\(basePaths.joined(separator: " "))) nor head (\(headPaths.joined(separator: " "))); pass --allow-empty if that is expected"
            )
        }
        let policy = RegressionPolicy(
            tolerance: regression.tolerance ?? GateConfig.defaultTolerance,
            minOccurrences: regression.minOccurrences ?? GateConfig.defaultMinOccurrences)
        let diff = DiffResult(base: baseOutcome.collection, head: headOutcome.collection, policy: policy)
        switch format {
        case .text: Output.stdout(DiffRenderer(style: color.style(), names: input.names.style).renderText(diff))
        case .markdown: Output.stdout(DiffRenderer(names: input.names.style).renderMarkdown(diff))
        case .json: Output.stdout(try DiffJSON(diff).encoded())
        }
        try Reading.finish([baseOutcome, headOutcome])
    }
}
