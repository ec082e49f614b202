import Foundation

/// Trace Event JSON (the Chrome tracing format) for Perfetto and `chrome://tracing`.
///
/// Each stall is one complete event (`"ph": "X"`) on its stuck thread's track (`pid` and `tid`
/// from the report) at its real start time: `ts` is microseconds since the Unix epoch, `dur` the
/// stall's duration in microseconds. The event's `args` hold the stack (representative stack,
/// leaf first) and the key facts. Metadata events (`"ph": "M"`) name each process and thread.
public enum ChromeTraceExport {
    /// The top-level object.
    package struct File: Codable, Sendable, Equatable {
        /// The events.
        package var traceEvents: [Event]
        /// How viewers show times.
        package var displayTimeUnit: String
    }

    /// One trace event.
    package struct Event: Codable, Sendable, Equatable {
        /// Event name.
        package var name: String
        /// Categories, comma-separated.
        package var cat: String
        /// Phase: `X` (complete) or `M` (metadata).
        package var ph: String
        /// Start, microseconds since the Unix epoch (0 for metadata).
        package var ts: Int64
        /// Duration in microseconds (complete events only).
        package var dur: Int64?
        /// Process id.
        package var pid: Int
        /// Thread id.
        package var tid: Int
        /// Details.
        package var args: Args
    }

    /// Details of an event: for metadata only ``name``; for a stall the rest.
    package struct Args: Codable, Sendable, Equatable {
        /// Process or thread name (metadata events).
        package var name: String?
        /// Report id.
        package var id: String?
        /// Fingerprint.
        package var fingerprint: String?
        /// Duration in milliseconds.
        package var durationMs: Double?
        /// Threshold in milliseconds.
        package var thresholdMs: Double?
        /// `cpu`, `blocked`, `mixed` or `congestion`.
        package var classification: String?
        /// `ended`, `inProgress` or `fatal`.
        package var status: String?
        /// CPU time of the stuck thread in milliseconds.
        package var mainThreadCPUMs: Double?
        /// Number of samples.
        package var samples: Int?
        /// Samples × effective interval, in milliseconds.
        package var sampledMs: Double?
        /// Representative stack, leaf first, `symbol` or `symbol (file)`.
        package var stack: [String]?
        /// Path of the report file.
        package var report: String?
    }

    /// The trace of the given profiles.
    package static func make(_ profiles: [StallProfile], names: FrameNameStyle = .simplified) -> File {
        var events: [Event] = []
        var processes: [Int: String] = [:]
        var threads: [PairKey: String] = [:]
        for profile in profiles {
            processes[profile.pid] = profile.executableName
            threads[PairKey(pid: profile.pid, tid: profile.threadID)] = profile.threadName
            let stack = profile.representativeStack.reversed().map { frame in
                frame.file.map { "\(names.display(frame)) (\(($0 as NSString).lastPathComponent))" }
                    ?? names.display(frame)
            }
            let top = profile.representativeStack.last(where: \.inApp) ?? profile.representativeStack.last
            let name =
                "stall \(Int(saturating: profile.durationMs.rounded())) ms"
                + (top.map { ": \(names.display($0))" } ?? "")
            let args = Args(
                id: profile.id, fingerprint: profile.fingerprint, durationMs: profile.durationMs,
                thresholdMs: profile.thresholdMs,
                classification: profile.classification.rawValue, status: profile.status.rawValue,
                mainThreadCPUMs: profile.mainThreadCPUMs, samples: profile.samples.count, sampledMs: profile.sampledMs,
                stack: stack, report: profile.path)
            events.append(
                Event(
                    name: name, cat: "stall,\(profile.classification.rawValue)", ph: "X",
                    ts: microseconds(profile.startedAt.timeIntervalSince1970 * 1000),
                    dur: max(1, microseconds(profile.durationMs)),
                    pid: profile.pid, tid: profile.threadID, args: args))
        }
        var metadata: [Event] = processes.keys.sorted().map { pid in
            Event(
                name: "process_name", cat: "__metadata", ph: "M", ts: 0, dur: nil, pid: pid, tid: 0,
                args: Args(name: processes[pid]))
        }
        metadata += threads.keys.sorted { ($0.pid, $0.tid) < ($1.pid, $1.tid) }.map { key in
            Event(
                name: "thread_name", cat: "__metadata", ph: "M", ts: 0, dur: nil, pid: key.pid, tid: key.tid,
                args: Args(name: threads[key]))
        }
        return File(traceEvents: metadata + events, displayTimeUnit: "ms")
    }

    /// The trace as JSON.
    public static func render(_ profiles: [StallProfile], names: FrameNameStyle = .simplified) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(make(profiles, names: names))
    }

    /// Milliseconds to whole microseconds.
    static func microseconds(_ milliseconds: Double) -> Int64 {
        guard milliseconds.isFinite else { return 0 }
        return Int64(saturating: (milliseconds * 1000).rounded())
    }

    private struct PairKey: Hashable {
        var pid: Int
        var tid: Int
    }
}
