import CStallMonitor
import StallReportModel

extension Symbolicator {
    /// Why no libdw session opened, in libdw's own words.
    struct SessionUnavailable: Error {
        /// The reason the shim gave.
        var reason: String
    }

    /// What a fresh libdw session (not the shared one) says as it looks up `addresses` in turn:
    /// the bytes of DWARF it has read before any lookup, then after each lookup whether the
    /// address lay in a module it knows and the bytes read so far. For tests of the session's
    /// growth bound.
    static func dwarfBytesRead(
        lookingUp addresses: [UInt]
    ) throws(SessionUnavailable) -> (before: Int, after: [(found: Bool, bytes: Int)]) {
        var error = [CChar](repeating: 0, count: 256)
        guard let session = CStallMonitor_symbolizer_open(&error, error.count) else {
            throw SessionUnavailable(reason: CString.decode(error))
        }
        defer { CStallMonitor_symbolizer_close(session) }
        let before = Int(CStallMonitor_symbolizer_dwarf_bytes(session))
        let after = addresses.map { address in
            var symbol = CStallMonitorSymbol()
            let found = CStallMonitor_symbolizer_lookup(session, address, &symbol) == 1
            return (found: found, bytes: Int(CStallMonitor_symbolizer_dwarf_bytes(session)))
        }
        return (before, after)
    }
}
