import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport gate`: the CI regression gate.
struct GateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Fail (exit status 1) when stalls exceed budgets or regress against a baseline.",
        discussion: """
        BUDGETS (flags override the same keys of --config; a budget not given is not checked)
          --max-stalls N            stalls in total                    (config: maxStalls)
          --max-per-fingerprint N   stalls of any one fingerprint      (maxStallsPerFingerprint)
          --max-stall-ms MS         longest single stall               (maxStallMs)
          --max-p95-ms MS           nearest-rank p95 of any fingerprint (maxP95Ms)
          --max-total-ms MS         sum of all stall durations         (maxTotalStallMs)
          --ignore-shorter-than MS  stalls shorter than this are ignored by every check \
        (ignoreShorterThanMs; alias --min-duration)

        BASELINE (--baseline FILE, from 'stallreport baseline')
          A fingerprint fails the gate when it is new, or when its count or p95 is more than \
        --tolerance (default 0.25 = 25 %) above the baseline; in both cases only when it occurred \
        at least --min-occurrences times (default 1) in this run, otherwise it is a warning. \
        Fingerprints of the baseline that did not occur are reported as fixed (good news).

        SUPPRESSIONS (--suppressions FILE)
          JSON {"suppressions": [{"fingerprint": "…", "reason": "…", "expires": "2026-06-30"}]}. \
        A suppressed fingerprint is not counted by any check until the end of its expiry day \
        (UTC); after that it counts again and the output says the suppression expired.

        CONFIG FILE (--config FILE, JSON)
          Keys: maxStalls, maxStallsPerFingerprint, maxStallMs, maxP95Ms, maxTotalStallMs, \
        ignoreShorterThanMs, baseline, suppressions, tolerance, minOccurrences. Keys starting \
        with '_' are comments; any other unknown key is an error. Relative file paths are \
        relative to the config file. Example: Reports/stallreport-gate.example.json.

        OUTPUT
          A verdict on stdout listing every budget (PASS/FAIL with the offending fingerprints), \
        the baseline comparison and suppressions. --junit FILE writes JUnit XML (one test case \
        per budget and per fingerprint). When GITHUB_ACTIONS=true, ::error/::warning/::notice \
        annotations are printed (at most 10 per level, then one summary line), and when \
        GITHUB_STEP_SUMMARY is set a Markdown verdict is appended to that file.

        EXIT STATUS: 0 passed, 1 failed, 2 usage or input error (see 'stallreport --help').

        EXAMPLES
          stallreport gate --max-stalls 0 .stall-reports
          stallreport gate --max-stall-ms 2000 --max-p95-ms 800 --ignore-shorter-than 300 .stall-reports
          stallreport gate --baseline stall-baseline.json --tolerance 0.5 --min-occurrences 2 .stall-reports
          stallreport gate --config stallreport-gate.json --junit stall-gate.xml .stall-reports
        """
    )

    @Argument(help: ArgumentHelp("Report files and/or directories (searched recursively for *.json).", valueName: "path"))
    var paths: [String] = []

    @Option(help: ArgumentHelp("Gate config file (JSON) with budgets and settings; flags override it.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Most stalls allowed in total.", valueName: "n"))
    var maxStalls: Int?

    @Option(name: .customLong("max-per-fingerprint"), help: ArgumentHelp("Most stalls allowed for any one fingerprint.", valueName: "n"))
    var maxPerFingerprint: Int?

    @Option(help: ArgumentHelp("Longest single stall allowed, in milliseconds.", valueName: "ms"))
    var maxStallMs: Double?

    @Option(name: .customLong("max-p95-ms"), help: ArgumentHelp("Highest p95 duration allowed for any one fingerprint, in milliseconds.", valueName: "ms"))
    var maxP95Ms: Double?

    @Option(help: ArgumentHelp("Most total stall time allowed, in milliseconds.", valueName: "ms"))
    var maxTotalMs: Double?

    @Option(name: [.customLong("ignore-shorter-than"), .customLong("min-duration")],
            help: ArgumentHelp("Ignore stalls shorter than this many milliseconds.", valueName: "ms"))
    var ignoreShorterThan: Double?

    @Option(help: ArgumentHelp("Baseline file from 'stallreport baseline'.", valueName: "file"))
    var baseline: String?

    @OptionGroup(title: "Baseline comparison")
    var regression: RegressionOptions

    @Option(help: ArgumentHelp("Suppressions file (JSON).", valueName: "file"))
    var suppressions: String?

    @Option(help: ArgumentHelp("Also write the verdict as JUnit XML to this file.", valueName: "file"))
    var junit: String?

    @Option(help: "Colour text output: auto (on a terminal), always, never. NO_COLOR always disables colour.")
    var color: ColorChoice = .auto

    @Option(help: ArgumentHelp("Judge suppression expiry at this time instead of now (ISO 8601).", valueName: "date", visibility: .hidden),
            transform: TimeWindowOptions.parse)
    var now: Date?

    @OptionGroup(title: "Time window")
    var window: TimeWindowOptions

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one report file or directory") }
        if let maxStalls, maxStalls < 0 { throw ValidationError("--max-stalls must be 0 or more") }
        if let maxPerFingerprint, maxPerFingerprint < 0 { throw ValidationError("--max-per-fingerprint must be 0 or more") }
        try validateMilliseconds(maxStallMs, "--max-stall-ms")
        try validateMilliseconds(maxP95Ms, "--max-p95-ms")
        try validateMilliseconds(maxTotalMs, "--max-total-ms")
        try validateMilliseconds(ignoreShorterThan, "--ignore-shorter-than")
    }

    /// The effective configuration: the config file, then flags on top.
    func effectiveConfig() throws(ConfigFileError) -> GateConfig {
        let file = try config.map { path throws(ConfigFileError) in try GateConfig.load(path: path) } ?? GateConfig()
        let flags = GateConfig(maxStalls: maxStalls, maxStallsPerFingerprint: maxPerFingerprint, maxStallMs: maxStallMs,
                               maxP95Ms: maxP95Ms, maxTotalStallMs: maxTotalMs, ignoreShorterThanMs: ignoreShorterThan,
                               baseline: baseline, suppressions: suppressions, tolerance: regression.tolerance,
                               minOccurrences: regression.minOccurrences)
        return file.merging(flags)
    }

    func run() throws {
        let settings: GateConfig
        let baselineFile: Baseline?
        let suppressionList: SuppressionList?
        do {
            settings = try effectiveConfig()
            baselineFile = try settings.baseline.map { path throws(ConfigFileError) in try Baseline.load(path: path) }
            suppressionList = try settings.suppressions.map { path throws(ConfigFileError) in try SuppressionList.load(path: path) }
        } catch {
            Output.note("error: \(error.description)")
            throw ExitCode(ExitStatus.inputError)
        }
        if settings.checksNothing {
            Output.note("error: nothing to check: give at least one budget (e.g. --max-stalls 0), a --baseline, or a --config with budgets")
            throw ExitCode(ExitStatus.inputError)
        }

        let filter = RecordFilter(since: window.since, until: window.until, minDurationMs: settings.ignoreShorterThanMs)
        let outcome = try Reading.collect(paths, options: reading, filter: filter)
        let gate = Gate(config: settings, baseline: baselineFile, suppressions: suppressionList, now: now ?? Date())
        let result = gate.evaluate(outcome.collection)

        Output.stdout(GateTextRenderer(style: color.style()).render(result))

        if let junit {
            do {
                try Output.write(Data(JUnitWriter().render(result).utf8), to: junit)
            } catch {
                Output.note("error: cannot write JUnit XML to \(junit): \((error as NSError).localizedDescription)")
                throw ExitCode(ExitStatus.inputError)
            }
        }
        let environment = ProcessInfo.processInfo.environment
        if environment["GITHUB_ACTIONS"] == "true" {
            let workspace = environment["GITHUB_WORKSPACE"] ?? FileManager.default.currentDirectoryPath
            Output.stdout(GitHubAnnotations(workspace: workspace).render(result))
            if let summaryPath = environment["GITHUB_STEP_SUMMARY"], !summaryPath.isEmpty {
                do {
                    try Output.append(GateMarkdownRenderer().render(result), to: summaryPath)
                } catch {
                    Output.note("warning: cannot append to GITHUB_STEP_SUMMARY \(summaryPath): \((error as NSError).localizedDescription)")
                }
            }
        }
        try Reading.finish([outcome])
        if !result.passed { throw ExitCode(ExitStatus.gateFailed) }
    }
}
