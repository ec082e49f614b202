/// Which unwinders a stall's samples use, chosen when the watchdog starts tracking it: a snapshot
/// backend (snapshots unwound on the watchdog: libdw, or libunwind's remote unwinder when names
/// come later) when it loads, libunwind (in the signal handler) for running threads when no
/// snapshot backend does or when configured, nothing when none loads (stalls are still detected
/// and reported, and the report says why they have no stacks).
struct SamplingUnwinder: Sendable {
    /// The unwinder of samples of a running thread: `libdw`, `libunwind-remote`, `libunwind` or
    /// `unavailable`.
    var name: UnwinderName
    /// The backend that unwinds snapshots of threads asleep in a syscall (never signalled), and of
    /// running threads when ``name`` is its name; nil when none loads (those samples then carry
    /// only the syscall's PC).
    var snapshot: SnapshotUnwinder.Backend?
    /// Why the preferred unwinder is not in use.
    var note: String?

    /// Whether no unwinder loaded at all.
    var isUnavailable: Bool { name == .unavailable }

    /// Whether running threads are unwound from snapshots (not by libunwind in the handler).
    var snapshotsRunningThreads: Bool { snapshot.map { $0.name == name } ?? false }

    /// The unwinders for a stall that begins now, in `mode`.
    static func choose(_ mode: StallMonitor.Unwinding, symbolicateInProcess: Bool) -> SamplingUnwinder {
        let preferred = SnapshotUnwinder.Backend.preferred(symbolicateInProcess: symbolicateInProcess)
        let status = MonitorProcess.shared.unwinder.availability(preferred)
        var backend: SnapshotUnwinder.Backend? = status.available ? preferred : nil
        var snapshotNote = status.note
        if backend == nil, preferred != .libdw {
            let fallback = MonitorProcess.shared.unwinder.availability(.libdw)
            if fallback.available {
                backend = .libdw
                snapshotNote = status.note.map { $0 + "; libdw unwinds instead" }
            } else {
                snapshotNote = [status.note, fallback.note].compactMap { $0 }.joined(separator: "; ")
            }
        }
        let libunwind = StackSampler.unwinderStatus()
        switch (mode, backend, libunwind.available) {
        case (.snapshot, let backend?, _):
            return .init(name: backend.name, snapshot: backend, note: snapshotNote)
        case (.libunwindInHandler, _, true):
            return .init(name: .libunwind, snapshot: backend, note: snapshotNote)
        case (.snapshot, nil, true):
            return .init(
                name: .libunwind, snapshot: nil,
                note: (snapshotNote ?? "no snapshot unwinder")
                    + "; running threads are unwound by libunwind in the signal handler, threads asleep in a syscall get only its PC"
            )
        case (_, _, false):
            if let backend {
                return .init(name: backend.name, snapshot: backend, note: libunwind.note)
            }
            return .init(
                name: .unavailable, snapshot: nil,
                note: [snapshotNote, libunwind.note].compactMap { $0 }.joined(separator: "; "))
        }
    }
}
