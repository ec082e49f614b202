/// The names a pprof `Function` carries for a frame's symbol: the one place that decides them.
///
/// pprof's `name` is what viewers show (the readable name); `system_name` is the name as the
/// system knows it. Both are the full demangled Swift (or C/C++) name today; when a simplified
/// display name for Swift symbols exists, only ``names(forSymbol:)``'s `display` changes.
enum PprofFunctionNames {
    /// The display name and system name of `symbol` (a demangled symbol or a synthetic frame name).
    static func names(forSymbol symbol: String) -> (display: String, system: String) {
        (display: symbol, system: symbol)
    }
}
