import Foundation

/// One stall of a monitored loop, as written to disk: the schema-1 report contract.
///
/// Readers ignore unknown keys; a breaking change bumps ``StallReport/currentSchemaVersion``.
/// The JSON Schema of this type is `Reports/stall-report.schema.json`.
public struct StallReport: Codable, Sendable, Equatable {
    /// The schema version this code writes and reads.
    public static let currentSchemaVersion = 1

    /// Version of the report contract; `1` for this type.
    public var schemaVersion: Int
    /// Unique id of this stall (UUID string).
    public var id: String
    /// Stable hash of the top in-app frames of the representative stack (see ``Fingerprint``).
    public var fingerprint: String
    /// Whether the stall had ended when the report was written.
    public var status: StallStatus
    /// Wall-clock time at which the awake span began.
    public var startedAt: Date
    /// Length of the awake span in milliseconds (so far, for `inProgress` and `fatal`).
    public var durationMs: Double
    /// The threshold the span crossed, in milliseconds.
    public var thresholdMs: Double
    /// What the stuck thread was doing: on CPU, blocked, both, or congestion.
    public var classification: StallClassification
    /// CPU time the stuck thread used during the observed part of the stall, in milliseconds.
    public var mainThreadCPUMs: Double
    /// The part of the span over which ``mainThreadCPUMs`` was measured, in milliseconds.
    public var cpuObservedMs: Double
    /// The monitored loop and thread.
    public var loop: Loop
    /// The process that stalled.
    public var process: Process
    /// How sampling went: counts of attempted, taken, timed-out and skipped samples.
    public var sampling: Sampling
    /// Stack samples of the stuck thread, oldest first.
    public var samples: [Sample]
    /// Indices into ``frames`` of the representative stack, leaf first.
    public var representativeStack: [Int]
    /// Shared table of frames referenced by ``samples`` and ``representativeStack``.
    public var frames: [Frame]
    /// Every image loaded in the process when the report was built.
    public var images: [Image]
    /// Which symbolicator named the frames, and any limitation.
    public var symbolication: Symbolication
    /// Free-form labels given by the host app.
    public var tags: [String: String]?
    /// The host app's current "scene" (screen, request, test name) when the stall began.
    public var scene: String?
    /// Time within the span during which the whole process was stopped (SIGSTOP, a debugger),
    /// which is not counted as stalling; nil when none was noticed.
    public var processStoppedMs: Double?
    /// Time the machine was suspended (sleep, hibernation) while the stall was tracked. It is not
    /// part of `durationMs` (spans are measured on CLOCK_MONOTONIC); nil when there was none.
    public var machineSuspendedMs: Double?
    /// True when this fingerprint already had its quota of full reports in the current window:
    /// the samples and all but the representative stack's frames and images were left out.
    public var rateLimited: Bool?
    /// Samples left out of a rate-limited report.
    public var omittedSamples: Int?
    /// Only in a report of a starved concurrency pool: how long new work waited and which worker
    /// held what (see ``Starvation``).
    public var starvation: Starvation?
    /// The async callers that stand for the stall, like ``representativeStack`` (frame indices,
    /// innermost caller first): the chain most stack samples agree on, past the functions
    /// entered in the stalled job (``StallReport/Sample/asyncCallersBeforeJob``: the same whether a
    /// sample's chain was read from the running frame or the job start); of the samples that
    /// agree, one read from the running frame gives the whole chain shown. Nil when samples carry
    /// none (see ``StallReport/Sample/asyncCallers``).
    public var representativeAsyncCallers: [Int]?
    /// How many of ``representativeAsyncCallers``, from the innermost, were entered in the stalled
    /// job: only the callers past them count in the fingerprint. Nil when not known (the whole
    /// chain counts).
    public var representativeAsyncCallersInJob: Int?

    /// Creates a report from all of its parts.
    public init(
        schemaVersion: Int = StallReport.currentSchemaVersion, id: String, fingerprint: String,
        status: StallStatus, startedAt: Date, durationMs: Double, thresholdMs: Double,
        classification: StallClassification, mainThreadCPUMs: Double, cpuObservedMs: Double,
        loop: Loop, process: Process, sampling: Sampling, samples: [Sample],
        representativeStack: [Int], frames: [Frame], images: [Image],
        symbolication: Symbolication, tags: [String: String]? = nil, scene: String? = nil,
        processStoppedMs: Double? = nil, rateLimited: Bool? = nil, omittedSamples: Int? = nil,
        machineSuspendedMs: Double? = nil, starvation: Starvation? = nil,
        representativeAsyncCallers: [Int]? = nil, representativeAsyncCallersInJob: Int? = nil
    ) {
        self.representativeAsyncCallers = representativeAsyncCallers
        self.representativeAsyncCallersInJob = representativeAsyncCallersInJob
        self.schemaVersion = schemaVersion
        self.id = id
        self.fingerprint = fingerprint
        self.status = status
        self.startedAt = startedAt
        self.durationMs = durationMs
        self.thresholdMs = thresholdMs
        self.classification = classification
        self.mainThreadCPUMs = mainThreadCPUMs
        self.cpuObservedMs = cpuObservedMs
        self.loop = loop
        self.process = process
        self.sampling = sampling
        self.samples = samples
        self.representativeStack = representativeStack
        self.frames = frames
        self.images = images
        self.symbolication = symbolication
        self.tags = tags
        self.scene = scene
        self.processStoppedMs = processStoppedMs
        self.rateLimited = rateLimited
        self.omittedSamples = omittedSamples
        self.machineSuspendedMs = machineSuspendedMs
        self.starvation = starvation
    }
}
