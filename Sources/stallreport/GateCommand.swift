import ArgumentParser
import Foundation
import StallReportKit

/// `stallreport gate`: the CI regression gate.
struct GateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "Fail (exit status 1) when stalls exceed budgets or regress against a baseline.",
        discussion: """
            BUDGETS  (a budget that is not given is not checked; flags override the
                      same key of --config)
              flag                      limits                   config key
              --max-stalls N            stalls in total          maxStalls
              --max-per-fingerprint N   stalls of a fingerprint  maxStallsPerFingerprint
              --max-stall-ms MS         longest single stall     maxStallMs
              --max-p95-ms MS           p95 of any fingerprint   maxP95Ms
              --max-total-ms MS         sum of all durations     maxTotalStallMs
              --max-fatal N             fatal stalls             maxFatalStalls
                (the process died during the stall; stale inProgress reports of
                processes that no longer run count as fatal)
              --ignore-shorter-than MS  ignore shorter stalls    ignoreShorterThanMs
                (alias --min-duration)  in every check
              --max-blocking-ms MS      time one blocking call   maxBlockingMsPerCallSite
                                        site blocked (all calls)
              --max-total-blocking-ms MS  time all blocking      maxTotalBlockingMs
                                        calls blocked
                (from blocking-*.json reports, written by a monitor with
                Configuration.blockingCalls; a call site is one call from one stack
                on one kind of thread, identified by its fingerprint)
            A budget holds when the value is at most the limit.

            BASELINE  (--baseline FILE, written by 'stallreport baseline')
              A fingerprint fails the gate when it is new, or when its count or its
              p95 is more than --tolerance above the baseline (default 0.25 = 25 %);
              only when it occurred at least --min-occurrences times in this run
              (default 1), otherwise it is a warning. Baseline fingerprints that did
              not occur are reported as fixed: good news. A baseline recorded from
              blocking-calls reports also lists their call sites (fingerprint@thread
              kind): a new call site, or one whose count or p95 regressed, fails the
              same way.

            SUPPRESSIONS  (--suppressions FILE)
              {"suppressions": [{"fingerprint": "6c1f0b3e9a27d4f1",
                "reason": "APP-412", "expires": "2026-06-30"}]}
              A suppressed fingerprint is not counted by any check through its expiry
              day (UTC) or until its expiry date-time; then it counts again and the
              output says that the suppression expired.

            CONFIG FILE  (--config FILE, JSON; Reports/stallreport-gate.example.json)
              Keys: maxStalls, maxStallsPerFingerprint, maxStallMs, maxP95Ms,
              maxTotalStallMs, maxFatalStalls, ignoreShorterThanMs, baseline,
              suppressions, tolerance, minOccurrences, maxBlockingMsPerCallSite,
              maxTotalBlockingMs. Keys starting with '_' are
              comments; any other unknown key is an error. Relative paths are
              relative to the file.

            OUTPUT
              stdout: every budget (PASS/FAIL with the offending fingerprints), the
              baseline comparison, suppressions and a verdict line.
              --junit FILE: JUnit XML, one test case per budget and per fingerprint.
              GITHUB_ACTIONS=true: ::error/::warning/::notice annotations (at most 10
              per level, then one summary line); GITHUB_STEP_SUMMARY set: a Markdown
              verdict is appended to that file.

            EXIT STATUS
              0 passed, 1 failed, 2 usage or input error, 3 a report path does not
              exist (even with --allow-empty)

            EXAMPLES
              stallreport gate --max-stalls 0 .stall-reports
              stallreport gate --max-fatal 0 --max-stalls 20 .stall-reports
              stallreport gate --max-stall-ms 2000 --max-p95-ms 800 \\
                --ignore-shorter-than 300 .stall-reports
              stallreport gate --baseline stall-baseline.json --tolerance 0.5 \\
                --min-occurrences 2 --suppressions suppressions.json .stall-reports
              stallreport gate --config stallreport-gate.json --junit gate.xml reports/
              stallreport gate --max-blocking-ms 50 --max-total-blocking-ms 200 \\
                .stall-reports
            """
    )

    @OptionGroup
    var source: ReportPaths

    @Option(
        help: ArgumentHelp("Gate config file (JSON) with budgets and settings; flags override it.", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Most stalls allowed in total.", valueName: "n"))
    var maxStalls: Int?

    @Option(
        name: .customLong("max-per-fingerprint"),
        help: ArgumentHelp("Most stalls allowed for any one fingerprint.", valueName: "n"))
    var maxPerFingerprint: Int?

    @Option(help: ArgumentHelp("Longest single stall allowed, in milliseconds.", valueName: "ms"))
    var maxStallMs: Double?

    @Option(
        name: .customLong("max-p95-ms"),
        help: ArgumentHelp("Highest p95 duration allowed for any one fingerprint, in milliseconds.", valueName: "ms"))
    var maxP95Ms: Double?

    @Option(help: ArgumentHelp("Most total stall time allowed, in milliseconds.", valueName: "ms"))
    var maxTotalMs: Double?

    @Option(help: ArgumentHelp("Most fatal stalls allowed (the process died during the stall).", valueName: "n"))
    var maxFatal: Int?

    @Option(
        name: .customLong("max-blocking-ms"),
        help: ArgumentHelp(
            "Most time any one blocking call site may block (the sum of its calls), in milliseconds.", valueName: "ms"))
    var maxBlockingMs: Double?

    @Option(
        name: .customLong("max-total-blocking-ms"),
        help: ArgumentHelp("Most time all blocking calls may block, in milliseconds.", valueName: "ms"))
    var maxTotalBlockingMs: Double?

    @Option(
        name: [.customLong("ignore-shorter-than"), .customLong("min-duration")],
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

    @OptionGroup
    var color: ColorOptions

    @Option(
        help: ArgumentHelp(
            "Judge suppression expiry at this time instead of now (ISO 8601).", valueName: "date", visibility: .hidden),
        transform: TimeWindowOptions.parse)
    var now: Date?

    @OptionGroup
    var input: ReportInputOptions

    func validate() throws {
        if let maxStalls, maxStalls < 0 { throw ValidationError("--max-stalls must be 0 or more") }
        if let maxPerFingerprint, maxPerFingerprint < 0 {
            throw ValidationError("--max-per-fingerprint must be 0 or more")
        }
        if let maxFatal, maxFatal < 0 { throw ValidationError("--max-fatal must be 0 or more") }
        try validateMilliseconds(maxStallMs, "--max-stall-ms")
        try validateMilliseconds(maxP95Ms, "--max-p95-ms")
        try validateMilliseconds(maxTotalMs, "--max-total-ms")
        try validateMilliseconds(ignoreShorterThan, "--ignore-shorter-than")
        try validateMilliseconds(maxBlockingMs, "--max-blocking-ms")
        try validateMilliseconds(maxTotalBlockingMs, "--max-total-blocking-ms")
    }

    /// The effective configuration: the config file, then flags on top.
    func effectiveConfig() throws(ConfigFileError) -> GateConfig {
        let file = try config.map { path throws(ConfigFileError) in try GateConfig.load(path: path) } ?? GateConfig()
        let flags = GateConfig(
            maxStalls: maxStalls, maxStallsPerFingerprint: maxPerFingerprint, maxStallMs: maxStallMs,
            maxP95Ms: maxP95Ms, maxTotalStallMs: maxTotalMs, ignoreShorterThanMs: ignoreShorterThan,
            baseline: baseline, suppressions: suppressions, tolerance: regression.tolerance,
            minOccurrences: regression.minOccurrences, maxFatalStalls: maxFatal,
            maxBlockingMsPerCallSite: maxBlockingMs, maxTotalBlockingMs: maxTotalBlockingMs)
        return file.merging(flags)
    }

    func run() throws {
        let settings: GateConfig
        let baselineFile: Baseline?
        let suppressionList: SuppressionList?
        do {
            settings = try effectiveConfig()
            baselineFile = try settings.baseline.map { path throws(ConfigFileError) in try Baseline.load(path: path) }
            suppressionList = try settings.suppressions.map { path throws(ConfigFileError) in
                try SuppressionList.load(path: path)
            }
        } catch {
            throw Output.inputError(error.description)
        }
        if settings.checksNothing {
            throw Output.inputError(
                "nothing to check: give at least one budget (e.g. --max-stalls 0), a --baseline, or a --config with budgets"
            )
        }

        let outcome = try input.collect(source.paths, filter: input.filter(minDurationMs: settings.ignoreShorterThanMs))
        let gate = Gate(config: settings, baseline: baselineFile, suppressions: suppressionList, now: now ?? Date())
        let result = gate.evaluate(outcome.collection)

        Output.stdout(
            GateTextRenderer(style: color.style(), names: input.names.style, width: TerminalWidth.current()).render(
                result))

        if let junit {
            try Output.save(
                Data(JUnitWriter(names: input.names.style).render(result).utf8), to: junit, what: "JUnit XML")
        }
        let environment = ProcessInfo.processInfo.environment
        if environment["GITHUB_ACTIONS"] == "true" {
            let workspace = environment["GITHUB_WORKSPACE"] ?? FileManager.default.currentDirectoryPath
            Output.stdout(GitHubAnnotations(workspace: workspace, names: input.names.style).render(result))
            if let summaryPath = environment["GITHUB_STEP_SUMMARY"], !summaryPath.isEmpty {
                do {
                    try Output.append(GateMarkdownRenderer(names: input.names.style).render(result), to: summaryPath)
                } catch {
                    Output.note(
                        "warning: cannot append to GITHUB_STEP_SUMMARY \(summaryPath): \((error as NSError).localizedDescription)"
                    )
                }
            }
        }
        try Reading.finish([outcome])
        if !result.passed { throw ExitCode(ExitStatus.gateFailed) }
    }
}
