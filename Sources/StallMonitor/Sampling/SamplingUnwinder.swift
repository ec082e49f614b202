/// Which unwinders a stall's samples use, chosen when the watchdog starts tracking it: libdw
/// (snapshots unwound on the watchdog) when it loads, libunwind (in the signal handler) for
/// running threads when libdw does not or when configured, nothing when neither loads (stalls are
/// still detected and reported, and the report says why they have no stacks).
struct SamplingUnwinder: Sendable {
    /// The unwinder of samples of a running thread: `libdw`, `libunwind` or `unavailable`.
    var name: String
    /// Whether libdw unwinds threads asleep in a syscall (never signalled); without it those
    /// samples carry only the syscall's PC.
    var libdw: Bool
    /// Why the preferred unwinder is not in use.
    var note: String?

    static func choose(_ mode: StallMonitor.Unwinding) -> SamplingUnwinder {
        let libdw = SnapshotUnwinder.shared.availability()
        let libunwind = StackSampler.unwinderStatus()
        switch (mode, libdw.available, libunwind.available) {
        case (.snapshot, true, _):
            return .init(name: "libdw", libdw: true, note: nil)
        case (.libunwindInHandler, _, true):
            return .init(name: "libunwind", libdw: libdw.available, note: libdw.note)
        case (.snapshot, false, true):
            return .init(name: "libunwind", libdw: false, note: (libdw.note ?? "libdw unavailable")
                + "; running threads are unwound by libunwind in the signal handler, threads asleep in a syscall get only its PC")
        case (_, _, false):
            if libdw.available {
                return .init(name: "libdw", libdw: true, note: libunwind.note)
            }
            return .init(name: "unavailable", libdw: false,
                         note: [libdw.note, libunwind.note].compactMap { $0 }.joined(separator: "; "))
        }
    }
}
