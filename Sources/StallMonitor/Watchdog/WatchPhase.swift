/// Where a ``ThreadWatch`` is with its thread: waiting for a span to reach the sampling lead,
/// recording the span it tracks, or done with a thread that exited. One of the three, never two.
enum WatchPhase {
    /// No span is tracked: the watch waits for one to reach the sampling lead.
    case waiting
    /// The tracked span's stall, being recorded.
    case recording(StallRecording)
    /// The watched thread (of a probe with one thread) exited during a span: nothing is left to
    /// watch, and the watchdog no longer looks at it.
    case threadGone

    /// The stall being recorded, nil in the other phases. Setting a recording enters
    /// ``recording(_:)``; setting nil while recording goes back to ``waiting`` (a gone thread
    /// stays gone).
    var recording: StallRecording? {
        get {
            guard case .recording(let recording) = self else { return nil }
            return recording
        }
        set {
            if let newValue {
                self = .recording(newValue)
            } else if case .recording = self {
                self = .waiting
            }
        }
    }

    /// Whether the watched thread is gone.
    var isThreadGone: Bool {
        guard case .threadGone = self else { return false }
        return true
    }
}
