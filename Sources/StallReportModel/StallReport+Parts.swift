import Foundation

extension StallReport {
    /// The monitored loop and its thread.
    public struct Loop: Codable, Sendable, Equatable {
        /// The kind of loop observed, e.g. `runLoop`.
        public var kind: String
        /// The thread's name (`main` for the main thread).
        public var threadName: String
        /// The kernel thread id of the monitored thread.
        public var threadID: Int
        /// Whether the monitored thread is the process's main thread.
        public var isMainThread: Bool
        /// The run loop mode during the stall, when known.
        public var mode: String?
        /// Loop passes (beforeTimers/afterWaiting boundaries) in the span.
        public var passes: Int
        /// Duration of the longest pass in the span, in milliseconds.
        public var longestPassMs: Double
        /// What went wrong when the monitor prepared the thread for sampling (unblocking the
        /// signal, its alternate signal stack, the warm-up sample); absent when nothing did.
        public var armingProblems: [String]?

        /// Creates loop facts.
        public init(
            kind: String, threadName: String, threadID: Int, isMainThread: Bool, mode: String?, passes: Int,
            longestPassMs: Double,
            armingProblems: [String]? = nil
        ) {
            self.kind = kind
            self.threadName = threadName
            self.threadID = threadID
            self.isMainThread = isMainThread
            self.mode = mode
            self.passes = passes
            self.longestPassMs = longestPassMs
            self.armingProblems = armingProblems
        }
    }

    /// Facts about the process that stalled.
    public struct Process: Codable, Sendable, Equatable {
        /// Process id.
        public var pid: Int
        /// File name of the executable.
        public var executableName: String
        /// Full path of the executable.
        public var executablePath: String
        /// Version string given by the host app, if any.
        public var appVersion: String?
        /// Host name of the machine.
        public var hostName: String
        /// Operating system name, e.g. `Linux`.
        public var os: String
        /// Kernel release, e.g. `6.1.0-18-amd64`.
        public var osVersion: String
        /// CPU architecture, e.g. `x86_64` or `aarch64`.
        public var architecture: String
        /// The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a
        /// reader can tell the process from a later one with the same pid; absent in reports of
        /// older monitors.
        public var startTicks: UInt64?

        /// Creates process facts.
        public init(
            pid: Int, executableName: String, executablePath: String, appVersion: String?, hostName: String, os: String,
            osVersion: String, architecture: String,
            startTicks: UInt64? = nil
        ) {
            self.startTicks = startTicks
            self.pid = pid
            self.executableName = executableName
            self.executablePath = executablePath
            self.appVersion = appVersion
            self.hostName = hostName
            self.os = os
            self.osVersion = osVersion
            self.architecture = architecture
        }
    }

    /// How sampling of one stall went.
    public struct Sampling: Codable, Sendable, Equatable {
        /// How stacks were captured: `libunwind`, or `unavailable` when no stacks could be taken.
        public var unwinder: String
        /// Why stacks were not available, when ``unwinder`` is `unavailable`.
        public var unwinderNote: String?
        /// Requested interval between samples, in milliseconds.
        public var intervalMs: Double
        /// Interval between kept samples after thinning, in milliseconds.
        public var effectiveIntervalMs: Double
        /// Upper bound on kept samples per stall.
        public var maxSamples: Int
        /// Samples attempted (signals sent plus samples recorded without a signal).
        public var attempted: Int
        /// Samples that produced a full stack.
        public var taken: Int
        /// Signals the thread did not answer before the deadline.
        public var timedOut: Int
        /// Attempts without a kept stack, by reason (e.g. `notClearlyRunning`, `afterSpanEnd`,
        /// `signalBlocked`; the schema lists them).
        public var skipped: [String: Int]
        /// True when the bound was hit and an evenly spread subset of samples was kept.
        public var thinned: Bool
        /// Samples dropped when thinning.
        public var dropped: Int
        /// Why samples of code that ran in a task carry no async call chain
        /// (``StallReport/Sample/asyncCallers``), e.g. an unknown runtime layout; nil when every
        /// such sample has one or none ran in a task.
        public var asyncCallersNote: String?

        /// Creates sampling facts.
        public init(
            unwinder: String, unwinderNote: String?, intervalMs: Double, effectiveIntervalMs: Double, maxSamples: Int,
            attempted: Int, taken: Int, timedOut: Int, skipped: [String: Int], thinned: Bool, dropped: Int,
            asyncCallersNote: String? = nil
        ) {
            self.asyncCallersNote = asyncCallersNote
            self.unwinder = unwinder
            self.unwinderNote = unwinderNote
            self.intervalMs = intervalMs
            self.effectiveIntervalMs = effectiveIntervalMs
            self.maxSamples = maxSamples
            self.attempted = attempted
            self.taken = taken
            self.timedOut = timedOut
            self.skipped = skipped
            self.thinned = thinned
            self.dropped = dropped
        }
    }

    /// One observation of the stuck thread.
    public struct Sample: Codable, Sendable, Equatable {
        /// How the sample was taken. An open set of values: a kind written by a newer monitor
        /// reads as itself (``isKnown`` false) and such a sample counts as one without a stack.
        public struct Kind: OpenReportValue {
            /// The value as written in reports, e.g. `stack`.
            public let rawValue: String

            /// A sample kind as written in a report, known or not.
            public init(rawValue: String) { self.rawValue = rawValue }

            /// A full stack: unwound from a snapshot taken in the thread's signal handler, in the
            /// handler itself, or (thread asleep in the kernel, not interrupted) from a copy of its
            /// frozen stack. ``StallReport/Sample/unwinder`` and ``StallReport/Sample/interrupted`` say which.
            public static let stack = Self(rawValue: "stack")
            /// The thread sat in a blocking syscall and no stack could be unwound: only the syscall's PC.
            public static let syscall = Self(rawValue: "syscall")
            /// No stack: the signal was blocked, timed out, or stacks are unavailable.
            public static let none = Self(rawValue: "none")

            /// The kinds this version writes.
            public static let known: [Kind] = [.stack, .syscall, .none]
        }

        /// Milliseconds from the span start to this sample.
        public var offsetMs: Double
        /// How the sample was taken.
        public var kind: Kind
        /// Scheduler state from `/proc` (`R` running, `S` sleeping, `D` uninterruptible, …).
        public var threadState: String
        /// Name of the syscall the thread was in, when known.
        public var syscall: String?
        /// Why the sample has no full stack, for kinds other than `stack`.
        public var note: String?
        /// Indices into the report's frame table, leaf first.
        public var frames: [Int] {
            get { frameIndices.array }
            set { frameIndices = FrameIndices(newValue) }
        }
        /// ``frames`` as stored: an array, or a range of a buffer shared by the report's samples.
        package var frameIndices: FrameIndices
        /// True when the stack does not reach the thread's outermost frame (deeper than the frame
        /// limit or the stack copy, or the unwinder stopped early).
        public var truncated: Bool?
        /// For `stack` samples: the unwinder that made the stack (`libdw`, `libunwind`).
        public var unwinder: String?
        /// For `stack` samples: whether the sampling signal interrupted the thread (false: it was
        /// asleep in the kernel and was unwound without being touched).
        public var interrupted: Bool?
        /// The async call chain of the task the thread ran: indices into the report's frame table
        /// of the suspended async callers' resume functions, innermost caller first, ending at the
        /// task's root (the runtime's completion function); nil when the thread ran no task or
        /// the chain could not be read (``StallReport/Sampling/asyncCallersNote`` says why).
        public var asyncCallers: [Int]?
        /// How many of ``frames``, from the leaf, ran in the task's current job; the logical stack
        /// is those frames followed by ``asyncCallers`` (``logicalFrames(in:)``). Nil when not known.
        public var asyncJobFrames: Int?
        /// True when the chain was read from the context the job started in: its first entry is
        /// the function the job started by calling, and async functions it called since without
        /// suspending may be missing between ``frames`` and it (optimized builds).
        public var asyncCallersFromJobStart: Bool?
        /// How many of ``asyncCallers``, from the innermost, stand for async functions entered in
        /// the current job (the function the job started in included): the rest awaited before the
        /// job began. Read from the running frame, the chain holds each function entered in the
        /// job; read from the job start, only the one it started in: the callers past these are the
        /// same whichever way the chain was read, and only they count in the report's identity.
        /// Nil in reports of monitors that did not record it (the whole chain then counts).
        public var asyncJobCallers: Int?

        /// The callers the same whichever way the chain was read: ``asyncCallers`` past the
        /// ``asyncJobCallers`` entered in the current job (all of them when that is not known).
        public var asyncCallersBeforeJob: ArraySlice<Int>? {
            asyncCallers.map { $0.dropFirst(min(max(asyncJobCallers ?? 0, 0), $0.count)) }
        }

        /// Creates a sample.
        public init(
            offsetMs: Double, kind: Kind, threadState: String, syscall: String? = nil, note: String? = nil,
            frames: [Int], truncated: Bool? = nil,
            unwinder: String? = nil, interrupted: Bool? = nil, asyncCallers: [Int]? = nil, asyncJobFrames: Int? = nil,
            asyncCallersFromJobStart: Bool? = nil, asyncJobCallers: Int? = nil
        ) {
            self.asyncCallers = asyncCallers
            self.asyncJobCallers = asyncJobCallers
            self.asyncJobFrames = asyncJobFrames
            self.asyncCallersFromJobStart = asyncCallersFromJobStart
            self.offsetMs = offsetMs
            self.kind = kind
            self.threadState = threadState
            self.syscall = syscall
            self.note = note
            self.frameIndices = FrameIndices(frames)
            self.truncated = truncated
            self.unwinder = unwinder
            self.interrupted = interrupted
        }

        private enum CodingKeys: String, CodingKey {
            case offsetMs, kind, threadState, syscall, note
            case frameIndices = "frames"
            case truncated, unwinder, interrupted, asyncCallers
            case asyncJobFrames, asyncCallersFromJobStart, asyncJobCallers
        }
    }

    /// One distinct code address seen in the samples.
    public struct Frame: Codable, Sendable, Equatable {
        /// The instruction address used for symbolication, as `0x…` hex. For caller frames this is
        /// the return address minus one (inside the call instruction).
        public var address: String
        /// Index into the report's image table, when the address lies in a known image.
        public var image: Int?
        /// Demangled symbol name, when known.
        public var symbol: String?
        /// Byte offset of ``address`` from the start of ``symbol``.
        public var offset: Int?
        /// Source file, when debug info exists.
        public var file: String?
        /// Source line, when debug info exists.
        public var line: Int?
        /// True when the frame belongs to the app's own code rather than the system or runtime.
        public var inApp: Bool
        /// True when the frame is StallMonitor's own code on the monitored thread (an interposer
        /// such as `epoll_wait` or `dispatch_async`, the enqueue hook, the sampling signal handler),
        /// in whatever image it is linked into; absent otherwise. Such a frame never counts in the
        /// report's identity: the representative stack, the fingerprint, a summary's top frame and
        /// the flame graph's default view leave it out (a debug build keeps an interposer's frame, a
        /// release build may tail-call through it). `stallreport show` still lists it.
        public var monitor: Bool?

        /// Creates a frame.
        public init(
            address: String, image: Int?, symbol: String?, offset: Int?, file: String?, line: Int?, inApp: Bool,
            monitor: Bool? = nil
        ) {
            self.address = address
            self.image = image
            self.symbol = symbol
            self.offset = offset
            self.file = file
            self.line = line
            self.inApp = inApp
            self.monitor = monitor
        }

        /// Whether the frame is the monitor's own code (``monitor`` is true).
        public var isMonitorCode: Bool { monitor == true }
    }

    /// One loaded image (executable or shared library).
    public struct Image: Codable, Sendable, Equatable {
        /// Full path of the file.
        public var path: String
        /// Lowest mapped address of the image, as `0x…` hex.
        public var loadAddress: String
        /// Difference between run-time and link-time addresses (ELF load bias), as `0x…` hex.
        public var loadBias: String
        /// GNU build ID as lowercase hex, when the image has one.
        public var buildID: String?
        /// True for the main executable.
        public var isMainExecutable: Bool

        /// Creates an image.
        public init(path: String, loadAddress: String, loadBias: String, buildID: String?, isMainExecutable: Bool) {
            self.path = path
            self.loadAddress = loadAddress
            self.loadBias = loadBias
            self.buildID = buildID
            self.isMainExecutable = isMainExecutable
        }
    }

    /// Which symbolicator named the frames.
    public struct Symbolication: Codable, Sendable, Equatable {
        /// `libdw` (symbol tables and DWARF), `dladdr` (exported symbols only) or `none`.
        public var symbolicator: String
        /// A limitation worth knowing, e.g. why the better symbolicator was not used.
        public var note: String?

        /// Creates symbolication facts.
        public init(symbolicator: String, note: String?) {
            self.symbolicator = symbolicator
            self.note = note
        }
    }
}
