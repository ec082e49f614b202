/// Which unwinder made a stack (or would make a stall's stacks), as reports carry it in a sample's
/// and a stall's `unwinder`. Open: a report from another version may name others.
struct UnwinderName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name written in reports.
    var rawValue: String

    /// An unwinder by the name reports carry.
    init(rawValue: String) { self.rawValue = rawValue }

    /// A value by its raw name (as tests and known constants spell it).
    init(stringLiteral value: String) { self.rawValue = value }

    /// The name written in reports.
    var description: String { rawValue }

    /// elfutils' libdw, unwinding snapshots on the watchdog.
    static let libdw = UnwinderName(rawValue: "libdw")
    /// libunwind's remote unwinder, unwinding snapshots on the watchdog.
    static let libunwindRemote = UnwinderName(rawValue: "libunwind-remote")
    /// libunwind in the signal handler, on the stuck thread.
    static let libunwind = UnwinderName(rawValue: "libunwind")
    /// No unwinder loads: stalls are reported without stacks.
    static let unavailable = UnwinderName(rawValue: "unavailable")
}
