/// Names of the syscalls a stuck thread is commonly found in, and which of them a signal would
/// cut short even with `SA_RESTART` (sleeps, waits with timeouts, timed socket calls): the
/// sampler does not interrupt a thread sitting in one of those unless told to.
enum SyscallTable {
    struct Entry {
        let name: String
        let interruptedBySignal: Bool
    }

    #if arch(x86_64)
    private static let entries: [Int: Entry] = [
        0: .init(name: "read", interruptedBySignal: false),
        1: .init(name: "write", interruptedBySignal: false),
        2: .init(name: "open", interruptedBySignal: false),
        7: .init(name: "poll", interruptedBySignal: true),
        17: .init(name: "pread64", interruptedBySignal: false),
        23: .init(name: "select", interruptedBySignal: true),
        34: .init(name: "pause", interruptedBySignal: true),
        35: .init(name: "nanosleep", interruptedBySignal: true),
        42: .init(name: "connect", interruptedBySignal: true),
        43: .init(name: "accept", interruptedBySignal: true),
        44: .init(name: "sendto", interruptedBySignal: true),
        45: .init(name: "recvfrom", interruptedBySignal: true),
        46: .init(name: "sendmsg", interruptedBySignal: true),
        47: .init(name: "recvmsg", interruptedBySignal: true),
        56: .init(name: "clone", interruptedBySignal: false),
        57: .init(name: "fork", interruptedBySignal: false),
        58: .init(name: "vfork", interruptedBySignal: false),
        61: .init(name: "wait4", interruptedBySignal: false),
        70: .init(name: "msgrcv", interruptedBySignal: true),
        74: .init(name: "fsync", interruptedBySignal: false),
        128: .init(name: "rt_sigtimedwait", interruptedBySignal: true),
        130: .init(name: "rt_sigsuspend", interruptedBySignal: true),
        202: .init(name: "futex", interruptedBySignal: false),
        208: .init(name: "io_getevents", interruptedBySignal: true),
        220: .init(name: "semtimedop", interruptedBySignal: true),
        230: .init(name: "clock_nanosleep", interruptedBySignal: true),
        232: .init(name: "epoll_wait", interruptedBySignal: true),
        247: .init(name: "waitid", interruptedBySignal: false),
        257: .init(name: "openat", interruptedBySignal: false),
        270: .init(name: "pselect6", interruptedBySignal: true),
        271: .init(name: "ppoll", interruptedBySignal: true),
        281: .init(name: "epoll_pwait", interruptedBySignal: true),
        288: .init(name: "accept4", interruptedBySignal: true),
        299: .init(name: "recvmmsg", interruptedBySignal: true),
        307: .init(name: "sendmmsg", interruptedBySignal: true),
        333: .init(name: "io_pgetevents", interruptedBySignal: true),
        426: .init(name: "io_uring_enter", interruptedBySignal: true),
        435: .init(name: "clone3", interruptedBySignal: false),
        441: .init(name: "epoll_pwait2", interruptedBySignal: true),
    ]
    #elseif arch(arm64)
    private static let entries: [Int: Entry] = [
        4: .init(name: "io_getevents", interruptedBySignal: true),
        22: .init(name: "epoll_pwait", interruptedBySignal: true),
        56: .init(name: "openat", interruptedBySignal: false),
        63: .init(name: "read", interruptedBySignal: false),
        64: .init(name: "write", interruptedBySignal: false),
        67: .init(name: "pread64", interruptedBySignal: false),
        72: .init(name: "pselect6", interruptedBySignal: true),
        73: .init(name: "ppoll", interruptedBySignal: true),
        82: .init(name: "fsync", interruptedBySignal: false),
        95: .init(name: "waitid", interruptedBySignal: false),
        98: .init(name: "futex", interruptedBySignal: false),
        101: .init(name: "nanosleep", interruptedBySignal: true),
        115: .init(name: "clock_nanosleep", interruptedBySignal: true),
        133: .init(name: "rt_sigsuspend", interruptedBySignal: true),
        137: .init(name: "rt_sigtimedwait", interruptedBySignal: true),
        188: .init(name: "msgrcv", interruptedBySignal: true),
        192: .init(name: "semtimedop", interruptedBySignal: true),
        202: .init(name: "accept", interruptedBySignal: true),
        203: .init(name: "connect", interruptedBySignal: true),
        206: .init(name: "sendto", interruptedBySignal: true),
        207: .init(name: "recvfrom", interruptedBySignal: true),
        211: .init(name: "sendmsg", interruptedBySignal: true),
        212: .init(name: "recvmsg", interruptedBySignal: true),
        220: .init(name: "clone", interruptedBySignal: false),
        242: .init(name: "accept4", interruptedBySignal: true),
        243: .init(name: "recvmmsg", interruptedBySignal: true),
        260: .init(name: "wait4", interruptedBySignal: false),
        269: .init(name: "sendmmsg", interruptedBySignal: true),
        292: .init(name: "io_pgetevents", interruptedBySignal: true),
        426: .init(name: "io_uring_enter", interruptedBySignal: true),
        435: .init(name: "clone3", interruptedBySignal: false),
        441: .init(name: "epoll_pwait2", interruptedBySignal: true),
    ]
    #else
    private static let entries: [Int: Entry] = [:]
    #endif

    /// The syscall's name (`syscall_<n>` when not in the table).
    static func name(_ number: Int) -> String {
        entries[number]?.name ?? "syscall_\(number)"
    }

    /// Whether a signal would make this syscall return early to the thread.
    static func isInterruptedBySignal(_ number: Int) -> Bool {
        entries[number]?.interruptedBySignal ?? false
    }
}
