/// Names of the syscalls a stuck thread is commonly found in. (No thread found in any syscall is
/// signalled: its stack is copied and unwound without touching it.)
package enum SyscallTable {

    #if arch(x86_64)
    private static let entries: [Int: String] = [
        0: "read",
        1: "write",
        2: "open",
        7: "poll",
        17: "pread64",
        23: "select",
        34: "pause",
        35: "nanosleep",
        42: "connect",
        43: "accept",
        44: "sendto",
        45: "recvfrom",
        46: "sendmsg",
        47: "recvmsg",
        56: "clone",
        57: "fork",
        58: "vfork",
        61: "wait4",
        70: "msgrcv",
        74: "fsync",
        128: "rt_sigtimedwait",
        130: "rt_sigsuspend",
        202: "futex",
        208: "io_getevents",
        220: "semtimedop",
        230: "clock_nanosleep",
        232: "epoll_wait",
        247: "waitid",
        257: "openat",
        270: "pselect6",
        271: "ppoll",
        281: "epoll_pwait",
        288: "accept4",
        299: "recvmmsg",
        307: "sendmmsg",
        333: "io_pgetevents",
        426: "io_uring_enter",
        435: "clone3",
        441: "epoll_pwait2",
    ]
    #elseif arch(arm64)
    private static let entries: [Int: String] = [
        4: "io_getevents",
        22: "epoll_pwait",
        56: "openat",
        63: "read",
        64: "write",
        67: "pread64",
        72: "pselect6",
        73: "ppoll",
        82: "fsync",
        95: "waitid",
        98: "futex",
        101: "nanosleep",
        115: "clock_nanosleep",
        133: "rt_sigsuspend",
        137: "rt_sigtimedwait",
        188: "msgrcv",
        192: "semtimedop",
        202: "accept",
        203: "connect",
        206: "sendto",
        207: "recvfrom",
        211: "sendmsg",
        212: "recvmsg",
        220: "clone",
        242: "accept4",
        243: "recvmmsg",
        260: "wait4",
        269: "sendmmsg",
        292: "io_pgetevents",
        426: "io_uring_enter",
        435: "clone3",
        441: "epoll_pwait2",
    ]
    #else
    private static let entries: [Int: String] = [:]
    #endif

    /// The syscall's name (`syscall_<n>` when not in the table).
    static func name(_ number: Int) -> String {
        entries[number] ?? "syscall_\(number)"
    }

    /// The numbers of the named syscalls on this architecture (those in the table).
    package static func numbers(_ names: Set<String>) -> Set<Int> {
        Set(entries.filter { names.contains($0.value) }.keys)
    }
}
