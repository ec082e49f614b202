import Foundation

/// The budgets and comparison settings of `stallreport gate`, from a JSON file and/or flags.
///
/// Every key is optional; a budget that is absent is not checked. Keys starting with `_` are
/// comments and ignored; any other unknown key is an error (a typo must not silently disable a
/// budget). Relative `baseline` and `suppressions` paths are resolved against the config file's
/// directory. See `Reports/stallreport-gate.example.json`.
public struct GateConfig: Codable, Sendable, Equatable {
    /// Most stalls allowed in total.
    public var maxStalls: Int?
    /// Most stalls allowed for any one fingerprint.
    public var maxStallsPerFingerprint: Int?
    /// Longest single stall allowed, in milliseconds.
    public var maxStallMs: Double?
    /// Highest nearest-rank p95 duration allowed for any one fingerprint, in milliseconds.
    public var maxP95Ms: Double?
    /// Most total stall time allowed (sum of all durations), in milliseconds.
    public var maxTotalStallMs: Double?
    /// Most fatal stalls allowed (stalls during which the process died).
    public var maxFatalStalls: Int?
    /// Stalls shorter than this many milliseconds are ignored by every check.
    public var ignoreShorterThanMs: Double?
    /// Baseline file to compare against.
    public var baseline: String?
    /// Suppressions file.
    public var suppressions: String?
    /// Relative tolerance for baseline regressions (0.25 = 25 % more stalls or a 25 % higher p95).
    public var tolerance: Double?
    /// Fewest occurrences in this run for a new or regressed fingerprint to fail the gate; below
    /// it, the finding is a warning.
    public var minOccurrences: Int?
    /// Most time any one blocking call site may block (the sum of its calls), in milliseconds.
    public var maxBlockingMsPerCallSite: Double?
    /// Most time all blocking calls together may block, in milliseconds.
    public var maxTotalBlockingMs: Double?

    /// Default ``tolerance``.
    public static let defaultTolerance = 0.25
    /// Default ``minOccurrences``.
    public static let defaultMinOccurrences = 1

    /// Creates a config; every part is optional.
    public init(
        maxStalls: Int? = nil, maxStallsPerFingerprint: Int? = nil, maxStallMs: Double? = nil, maxP95Ms: Double? = nil,
        maxTotalStallMs: Double? = nil, ignoreShorterThanMs: Double? = nil, baseline: String? = nil,
        suppressions: String? = nil, tolerance: Double? = nil, minOccurrences: Int? = nil, maxFatalStalls: Int? = nil,
        maxBlockingMsPerCallSite: Double? = nil, maxTotalBlockingMs: Double? = nil
    ) {
        self.maxBlockingMsPerCallSite = maxBlockingMsPerCallSite
        self.maxTotalBlockingMs = maxTotalBlockingMs
        self.maxStalls = maxStalls
        self.maxStallsPerFingerprint = maxStallsPerFingerprint
        self.maxStallMs = maxStallMs
        self.maxP95Ms = maxP95Ms
        self.maxTotalStallMs = maxTotalStallMs
        self.ignoreShorterThanMs = ignoreShorterThanMs
        self.baseline = baseline
        self.suppressions = suppressions
        self.tolerance = tolerance
        self.minOccurrences = minOccurrences
        self.maxFatalStalls = maxFatalStalls
    }

    /// The keys a config file may contain.
    package static let knownKeys: Set<String> = [
        "maxStalls", "maxStallsPerFingerprint", "maxStallMs", "maxP95Ms", "maxTotalStallMs",
        "ignoreShorterThanMs", "baseline", "suppressions", "tolerance", "minOccurrences", "maxFatalStalls",
        "maxBlockingMsPerCallSite", "maxTotalBlockingMs",
    ]

    /// This config with every value set in `overrides` replacing this one's (flags over file).
    package func merging(_ overrides: GateConfig) -> GateConfig {
        GateConfig(
            maxStalls: overrides.maxStalls ?? maxStalls,
            maxStallsPerFingerprint: overrides.maxStallsPerFingerprint ?? maxStallsPerFingerprint,
            maxStallMs: overrides.maxStallMs ?? maxStallMs,
            maxP95Ms: overrides.maxP95Ms ?? maxP95Ms,
            maxTotalStallMs: overrides.maxTotalStallMs ?? maxTotalStallMs,
            ignoreShorterThanMs: overrides.ignoreShorterThanMs ?? ignoreShorterThanMs,
            baseline: overrides.baseline ?? baseline,
            suppressions: overrides.suppressions ?? suppressions,
            tolerance: overrides.tolerance ?? tolerance,
            minOccurrences: overrides.minOccurrences ?? minOccurrences,
            maxFatalStalls: overrides.maxFatalStalls ?? maxFatalStalls,
            maxBlockingMsPerCallSite: overrides.maxBlockingMsPerCallSite ?? maxBlockingMsPerCallSite,
            maxTotalBlockingMs: overrides.maxTotalBlockingMs ?? maxTotalBlockingMs)
    }

    /// True when there is nothing to check: no budget and no baseline.
    package var checksNothing: Bool {
        maxStalls == nil && maxStallsPerFingerprint == nil && maxStallMs == nil && maxP95Ms == nil
            && maxTotalStallMs == nil && maxFatalStalls == nil && baseline == nil
            && maxBlockingMsPerCallSite == nil && maxTotalBlockingMs == nil
    }

    /// The first invalid value, described; nil when all values are valid.
    package func validationMessage() -> String? {
        if let maxStalls, maxStalls < 0 { return "maxStalls must be 0 or more" }
        if let value = maxStallsPerFingerprint, value < 0 { return "maxStallsPerFingerprint must be 0 or more" }
        if let value = maxFatalStalls, value < 0 { return "maxFatalStalls must be 0 or more" }
        for (name, value) in [
            ("maxStallMs", maxStallMs), ("maxP95Ms", maxP95Ms), ("maxTotalStallMs", maxTotalStallMs),
            ("ignoreShorterThanMs", ignoreShorterThanMs),
            ("maxBlockingMsPerCallSite", maxBlockingMsPerCallSite), ("maxTotalBlockingMs", maxTotalBlockingMs),
        ] {
            if let value, !(value >= 0 && value.isFinite) {
                return "\(name) must be a finite number of milliseconds, 0 or more"
            }
        }
        if let tolerance, !(tolerance >= 0 && tolerance.isFinite) {
            return "tolerance must be 0 or more (0.25 means 25 %)"
        }
        if let minOccurrences, minOccurrences < 1 { return "minOccurrences must be 1 or more" }
        return nil
    }

    /// Reads a config file: JSON object, known keys only (plus `_comment`-style keys), relative
    /// paths resolved against the file's directory, values validated.
    public static func load(path: String) throws(ConfigFileError) -> GateConfig {
        let data = try ConfigFile.read(path: path, what: "gate config")
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ConfigFileError(
                path: path, message: "gate config is not valid JSON: \((error as NSError).localizedDescription)")
        }
        guard let dictionary = object as? [String: Any] else {
            throw ConfigFileError(path: path, message: "gate config must be a JSON object")
        }
        let unknown = dictionary.keys.filter { !$0.hasPrefix("_") && !knownKeys.contains($0) }.sorted()
        if !unknown.isEmpty {
            throw ConfigFileError(
                path: path,
                message:
                    "unknown key\(unknown.count == 1 ? "" : "s") \(unknown.map { "'\($0)'" }.joined(separator: ", ")) in gate config (known: \(knownKeys.sorted().joined(separator: ", ")))"
            )
        }
        var config: GateConfig
        do {
            config = try JSONDecoder().decode(GateConfig.self, from: data)
        } catch {
            throw ConfigFileError(path: path, message: "gate config: \(ConfigFile.describe(error))")
        }
        if let message = config.validationMessage() {
            throw ConfigFileError(path: path, message: message)
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        func resolve(_ file: String?) -> String? {
            guard let file, !file.hasPrefix("/") else { return file }
            return directory.appendingPathComponent(file).path
        }
        config.baseline = resolve(config.baseline)
        config.suppressions = resolve(config.suppressions)
        return config
    }
}
