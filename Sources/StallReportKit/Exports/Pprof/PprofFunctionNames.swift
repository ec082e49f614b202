/// The names a pprof `Function` carries for a frame's symbol: the one place that decides them.
///
/// pprof's `name` is what viewers show: the readable (simplified) Swift name by default, the full
/// demangled name with `--full-names`; `system_name` is always the full demangled name as the
/// report stores it, so a backend can still tell overloads apart.
enum PprofFunctionNames {
    /// The display name and system name of `symbol` (a demangled symbol or a synthetic frame name).
    static func names(forSymbol symbol: String, style: FrameNameStyle) -> (display: String, system: String) {
        (display: style.display(symbol), system: symbol)
    }
}
