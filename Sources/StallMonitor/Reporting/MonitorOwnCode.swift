import CStallMonitor

/// Where the monitor's own code that runs on monitored threads lies (the `epoll_wait`,
/// `dispatch_async` and `dispatch_async_f` interposers, the pool's enqueue hook, the wake-up
/// producers, the sampling signal handler): one section of the C shim, in whatever image it is
/// linked into. Reports mark frames in it (``StallReport/Frame/monitor``) so that they never count
/// in a report's identity.
enum MonitorOwnCode {
    /// The section's address range in this process; nil when the linker kept none.
    static let range: Range<UInt>? = {
        var start: UInt = 0
        var end: UInt = 0
        guard CStallMonitor_own_code_range(&start, &end) == 0, start < end else { return nil }
        return start..<end
    }()

    /// Whether `address` is in the monitor's own code.
    static func contains(_ address: UInt) -> Bool {
        range?.contains(address) ?? false
    }
}
