/// Which symbolicator named a report's frames, as reports carry it in `symbolication.symbolicator`.
/// Open: a report from another version may name others.
struct SymbolicatorName: OpenName {
    /// The name written in reports.
    var rawValue: String

    /// elfutils' libdw: function names with file and line.
    static let libdw = SymbolicatorName(rawValue: "libdw")
    /// `dladdr`: exported names only (libdw did not load).
    static let dladdr = SymbolicatorName(rawValue: "dladdr")
    /// Not named in process.
    static let noSymbolicator = SymbolicatorName(rawValue: "none")
}
