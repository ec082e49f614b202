import CStallMonitor
import Glibc
import StallReportModel

/// Names addresses of this process, on the writer side, cached per address: libdw (symbol
/// tables including local symbols, DWARF line tables) when it can be loaded, else `dladdr`
/// (exported symbols only). Names are demangled by the Swift runtime's own demangler.
final class Symbolicator: Sendable {
    /// What is known about one address.
    struct Symbol: Sendable {
        var name: String?
        var offset: Int?
        var file: String?
        var line: Int?
    }

    private struct State: @unchecked Sendable {
        var session: OpaquePointer?
        var cache: [UInt: Symbol] = [:]
        var opened = false
        var note: String?
        /// The loaded images the session and the cache describe.
        var images: [String] = []
        /// Running monitors that use this symbolicator.
        var users = 0
        /// When the session was last used (monotonic ns; 0: not since it was released).
        var lastUse: UInt64 = 0
        /// Resident bytes when the session opened (its caches and mapped files are most of what
        /// grew since).
        var residentAtOpen = 0
        /// Whether libdw loaded, known since the first open (kept when a session is closed only
        /// to bound its caches).
        var libdwKnown: (name: SymbolicatorName, note: String?)?
    }

    /// Entries kept before the cache is cleared (bounds memory in long-running hosts).
    private static let cacheLimit = 50_000

    /// How much DWARF a session may have read (the `.debug_*` sections of the modules whose line
    /// tables it looked in), and how much the process may grow while it is open (libdw's line, CU
    /// and symbol tables on the heap, the debug sections it maps), before the session is closed
    /// after a batch of lookups; the names found stay cached. A large debug binary's DWARF costs
    /// tens of MiB: it is read again only for addresses not named yet. A small binary's session
    /// stays open. The DWARF size makes the choice independent of what else the process frees
    /// meanwhile (its resident size can shrink while a session grows).
    static let sessionGrowthLimit = 4 << 20

    private let state = Locked(State())
    /// Told of each use (``CacheUse``): the first since a release opens the monitors' gates.
    private let cacheUse: CacheUse

    init(cacheUse: CacheUse = CacheUse()) { self.cacheUse = cacheUse }

    /// Which symbolicator is in use and why the better one is not.
    func describe() -> (name: SymbolicatorName, note: String?) {
        state.withLock { state in
            if let known = state.libdwKnown { return known }
            open(&state)
            return state.session != nil ? (.libdw, nil) : (.dladdr, state.note)
        }
    }

    /// Counts a monitor that starts using the symbolicator.
    func retain() {
        state.withLock { $0.users += 1 }
    }

    /// Counts a monitor that stopped. When it was the last, the libdw session (its open ELF and
    /// debug files and their mappings) and the cache are released, so a host that stops
    /// monitoring gets its descriptors and memory back; the next lookup opens a new session.
    func release() {
        state.withLock { state in
            state.users = max(0, state.users - 1)
            if state.users == 0 { reset(&state) }
        }
    }

    /// Closes the session and forgets every name when it was last used before `cutoff`
    /// (monotonic ns). Returns whether a session was released.
    func releaseIfUnused(since cutoff: UInt64) -> Bool {
        state.withLock { state in
            guard state.lastUse != 0, state.lastUse <= cutoff else { return false }
            let held = state.opened || !state.cache.isEmpty
            reset(&state)
            return held
        }
    }

    /// Whether names were looked up since the last release (the quiet period then has work).
    var usedSinceRelease: Bool { state.withLock { $0.lastUse != 0 } }

    /// Whether a libdw session is open now (for tests and diagnostics).
    var isOpen: Bool {
        state.withLock { $0.session != nil }
    }

    /// The bytes of DWARF the open session has read, nil when none is open (for tests).
    var openSessionDWARFBytes: Int? {
        state.withLock { state in state.session.map { Int(CStallMonitor_symbolizer_dwarf_bytes($0)) } }
    }

    /// Looks up every address at once (one lock round trip per report). `images` identifies the
    /// loaded images: when it changed (a library was loaded or unloaded), the session is reopened
    /// and the cache cleared, since an address may now belong to another library.
    func symbolicate(_ addresses: [UInt], images: [String]) -> [UInt: Symbol] {
        state.withLock { state in
            if state.images != images {
                reset(&state)
                state.images = images
            }
            cacheUse.noteUse(&state.lastUse)
            if state.opened, state.session == nil {
                // libdw did not load or could not read the modules last time (EMFILE, ENOMEM pass):
                // try again for this report, and forget the names dladdr gave meanwhile.
                state.opened = false
                state.cache.removeAll()
            }
            if state.cache.count > Self.cacheLimit { state.cache.removeAll(keepingCapacity: true) }
            var result: [UInt: Symbol] = [:]
            for address in addresses {
                if let cached = state.cache[address] {
                    result[address] = cached
                    continue
                }
                open(&state)  // only for addresses not named yet
                let symbol = lookup(address, session: state.session)
                state.cache[address] = symbol
                result[address] = symbol
            }
            if let session = state.session,
                CStallMonitor_symbolizer_dwarf_bytes(session) > Self.sessionGrowthLimit
                    || CStallMonitor_resident_bytes() - state.residentAtOpen > Self.sessionGrowthLimit
            {
                closeSession(&state)  // its caches outgrew the bound; the names stay cached
                _ = CStallMonitor_trim_heap()
            }
            return result
        }
    }

    /// The names already known for `addresses`, without looking anything up or opening a
    /// session (fast, for an in-progress report that must reach the disk now); nil for addresses
    /// not yet looked up. Empty when the loaded images changed since the names were found.
    func cachedSymbols(_ addresses: [UInt], images: [String]) -> [UInt: Symbol] {
        state.withLock { state in
            guard !state.cache.isEmpty, state.images == images else { return [:] }
            var result: [UInt: Symbol] = [:]
            for address in addresses {
                if let cached = state.cache[address] { result[address] = cached }
            }
            return result
        }
    }

    /// Like ``describe()``, but nil instead of opening a session that is not open yet.
    func describeIfOpen() -> (name: SymbolicatorName, note: String?)? {
        state.withLock { state in
            if let known = state.libdwKnown { return known }
            guard state.opened else { return nil }
            return state.session != nil ? (.libdw, nil) : (.dladdr, state.note)
        }
    }

    /// Closes the session and forgets every name; the next lookup opens a new session.
    private func reset(_ state: inout State) {
        state.lastUse = 0  // nothing held: no quiet period to wait for until the next use
        closeSession(&state)
        state.libdwKnown = nil
        state.cache.removeAll()
        state.images = []
    }

    /// Closes the libdw session (its files and caches); the names found stay in the cache.
    private func closeSession(_ state: inout State) {
        if let session = state.session { CStallMonitor_symbolizer_close(session) }
        state.session = nil
        state.opened = false
        state.note = nil
    }

    private func open(_ state: inout State) {
        cacheUse.noteUse(&state.lastUse)
        guard !state.opened else { return }
        state.opened = true
        state.residentAtOpen = CStallMonitor_resident_bytes()
        var error = [CChar](repeating: 0, count: 256)
        state.session = CStallMonitor_symbolizer_open(&error, error.count)
        if state.session == nil {
            state.note =
                CString.decode(error)
                + "; names come from dladdr (exported symbols only, no file:line)"
        }
        state.libdwKnown = state.session != nil ? (.libdw, nil) : (.dladdr, state.note)
    }

    private func lookup(_ address: UInt, session: OpaquePointer?) -> Symbol {
        if let session {
            var found = CStallMonitorSymbol()
            if CStallMonitor_symbolizer_lookup(session, address, &found) != 0 {
                return Symbol(
                    name: found.symbol.map { Self.demangle(String(cString: $0)) },
                    offset: found.symbol != nil ? Int(found.offset) : nil,
                    file: found.file.map { String(cString: $0) },
                    line: found.line > 0 ? Int(found.line) : nil)
            }
        }
        var name: UnsafePointer<CChar>?
        var start: UInt = 0
        var image: UnsafePointer<CChar>?
        guard CStallMonitor_dladdr(address, &name, &start, &image) != 0, let name else { return Symbol() }
        return Symbol(name: Self.demangle(String(cString: name)), offset: Int(address &- start), file: nil, line: nil)
    }

    /// Demangles Swift and C++ names; returns other names unchanged.
    static func demangle(_ name: String) -> String {
        guard let demangled = CStallMonitor_demangle(name) else { return name }
        defer { free(demangled) }
        return String(cString: demangled)
    }
}
