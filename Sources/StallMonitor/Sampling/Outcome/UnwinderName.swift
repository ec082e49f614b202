/// Which unwinder made a stack (or would make a stall's stacks), as reports carry it in a sample's
/// and a stall's `unwinder`. Open: a report from another version may name others.
struct UnwinderName: OpenName {
    /// The name written in reports.
    var rawValue: String

    /// elfutils' libdw, unwinding snapshots on the watchdog.
    static let libdw = UnwinderName(rawValue: "libdw")
    /// libunwind's remote unwinder, unwinding snapshots on the watchdog.
    static let libunwindRemote = UnwinderName(rawValue: "libunwind-remote")
    /// libunwind in the signal handler, on the stuck thread.
    static let libunwind = UnwinderName(rawValue: "libunwind")
    /// No unwinder loads: stalls are reported without stacks.
    static let unavailable = UnwinderName(rawValue: "unavailable")
}
