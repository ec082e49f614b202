import Foundation
import Glibc

/// Reads `/proc/self/task/<tid>/{stat,syscall,status,schedstat}` of one monitored thread without
/// interrupting it. The files stay open and are re-read with `pread` at offset 0, which makes the
/// kernel regenerate them: about 2 µs per read instead of an open and a close.
final class ThreadProcFiles {
    /// What `/proc/…/syscall` says about the thread.
    enum SyscallState: Equatable {
        /// On a CPU in user space.
        case running
        /// Blocked outside any syscall (e.g. in a page fault): user stack pointer and program counter.
        case blockedOutsideSyscall(sp: UInt, pc: UInt)
        /// Inside syscall `number`, entered with user stack pointer `sp` from program counter `pc`.
        case inSyscall(number: Int, sp: UInt, pc: UInt)
        /// The file could not be read.
        case unknown
    }

    /// Signal facts from `/proc/…/status`.
    struct SignalMasks: Equatable {
        var blocked: UInt64
        var pendingForThread: UInt64
    }

    let tid: Int32
    private let statFD: Int32
    private let syscallFD: Int32
    private let statusFD: Int32
    private let schedstatFD: Int32
    private var buffer = [UInt8](repeating: 0, count: 4096)

    /// Opens the thread's files; without `syscall`, `syscall` is not opened and
    /// ``syscallState()`` is `unknown` (a reader of the scheduler's accounting only).
    init(tid: Int32, syscall: Bool = true) {
        self.tid = tid
        func open(_ name: String) -> Int32 {
            Glibc.open("/proc/self/task/\(tid)/\(name)", O_RDONLY | O_CLOEXEC)
        }
        statFD = open("stat")
        syscallFD = syscall ? open("syscall") : -1
        statusFD = open("status")
        schedstatFD = open("schedstat")
    }

    deinit {
        for fd in [statFD, syscallFD, statusFD, schedstatFD] where fd >= 0 { close(fd) }
    }

    /// Whether the thread has exited (`pthread_exit`, or its function returned): its `stat` file,
    /// opened while it ran, now fails with ESRCH (also when its id was reused since: the old
    /// descriptor names the old task), or says it is a zombie or dead (an exited main thread
    /// while other threads run).
    func threadExited() -> Bool {
        guard statFD >= 0 else { return false }
        let count = buffer.withUnsafeMutableBytes { pread(statFD, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno == ESRCH }
        let state = buffer.withUnsafeBufferPointer {
            Self.stateLetter(inStat: UnsafeBufferPointer(rebasing: $0[..<count]))
        }
        return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X")
    }

    /// Time the thread has been runnable since it started (``SchedStat/runnable``); nil when unknown.
    func runnableNanos() -> UInt64? { schedStat()?.runnable }

    /// Time the thread has waited for a CPU while runnable since it started (``SchedStat/waiting``);
    /// nil when unknown.
    func waitingNanos() -> UInt64? { schedStat()?.waiting }

    /// The thread's `schedstat`; nil when it cannot be read.
    private func schedStat() -> SchedStat? {
        guard let count = readBytes(schedstatFD) else { return nil }
        return buffer.withUnsafeBufferPointer { SchedStat.parse(UnsafeBufferPointer(rebasing: $0[..<count])) }
    }

    /// The scheduler state letter (`R`, `S`, `D`, `T`, …), or `?` when unknown.
    func schedulerState() -> SchedulerState {
        // "tid (comm) S ppid …": comm may contain spaces and parentheses; the state follows the last ')'.
        guard let count = readBytes(statFD) else { return .unknown }
        let letter = buffer.withUnsafeBufferPointer {
            Self.stateLetter(inStat: UnsafeBufferPointer(rebasing: $0[..<count]))
        }
        return letter.map { SchedulerState(rawValue: String(UnicodeScalar($0))) } ?? .unknown
    }

    /// The state letter of a `stat` file's text: "tid (comm) S ppid …", where comm may hold
    /// spaces and parentheses, so the state follows the last ')'.
    static func stateLetter(inStat bytes: UnsafeBufferPointer<UInt8>) -> UInt8? {
        var at = bytes.count - 1
        while at >= 0 && bytes[at] != UInt8(ascii: ")") { at -= 1 }
        guard at >= 0 else { return nil }
        at += 1
        while at < bytes.count && bytes[at] == UInt8(ascii: " ") { at += 1 }
        return at < bytes.count ? bytes[at] : nil
    }

    /// Whether and where the thread is in a syscall.
    func syscallState() -> SyscallState {
        guard let count = readBytes(syscallFD) else { return .unknown }
        // "running", "nr arg1 … arg6 sp pc" in a syscall, or "-1 sp pc" blocked outside one.
        return buffer.withUnsafeBufferPointer { bytes -> SyscallState in
            // Only the first field and the last two matter: no array of fields (this runs at every
            // look of a pull probe).
            var first: Range<Int>?
            var previous = 0..<0
            var last = 0..<0
            var fieldCount = 0
            var at = 0
            while at < count {
                while at < count && (bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\n")) { at += 1 }
                let start = at
                while at < count && bytes[at] != UInt8(ascii: " ") && bytes[at] != UInt8(ascii: "\n") { at += 1 }
                guard at > start else { continue }
                if first == nil { first = start..<at }
                previous = last
                last = start..<at
                fieldCount += 1
            }
            guard let first else { return .unknown }
            if bytes[first.lowerBound] == UInt8(ascii: "r") { return .running }
            guard fieldCount >= 3, let number = Self.parseInt(bytes, first) else { return .unknown }
            let sp = Self.parseHex(bytes, previous) ?? 0
            let pc = Self.parseHex(bytes, last) ?? 0
            return number < 0 ? .blockedOutsideSyscall(sp: sp, pc: pc) : .inSyscall(number: number, sp: sp, pc: pc)
        }
    }

    private static func parseInt(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var at = range.lowerBound
        let negative = bytes[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        guard at < range.upperBound else { return nil }
        var value = 0
        while at < range.upperBound {
            let byte = bytes[at]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int(byte - UInt8(ascii: "0"))
            at += 1
        }
        return negative ? -value : value
    }

    /// A `0x…` hex field.
    private static func parseHex(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt? {
        guard range.count > 2, bytes[range.lowerBound] == UInt8(ascii: "0"),
            bytes[range.lowerBound + 1] == UInt8(ascii: "x")
        else { return nil }
        var value: UInt = 0
        for at in (range.lowerBound + 2)..<range.upperBound {
            let byte = bytes[at]
            let digit: UInt
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt(byte - UInt8(ascii: "a") + 10)
            default: return nil
            }
            value = value &<< 4 | digit
        }
        return value
    }

    /// The thread's blocked and pending signal masks.
    func signalMasks() -> SignalMasks? {
        guard let count = readBytes(statusFD),
            let blocked = number(after: "\nSigBlk:", in: count, radix: 16),
            let pending = number(after: "\nSigPnd:", in: count, radix: 16)
        else { return nil }
        return SignalMasks(blocked: blocked, pendingForThread: pending)
    }

    /// The thread's voluntary context switches so far (`voluntary_ctxt_switches`).
    func voluntarySwitches() -> UInt64? {
        guard let count = readBytes(statusFD) else { return nil }
        return number(after: "\nvoluntary_ctxt_switches:", in: count, radix: 10)
    }

    /// Reads `fd` into the buffer; the byte count, nil when it could not be read.
    private func readBytes(_ fd: Int32) -> Int? {
        guard fd >= 0 else { return nil }
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? count : nil
    }

    /// The number after `key` (a line start and a field name) in the first `count` bytes of the
    /// buffer, skipping blanks. Byte by byte: `status` is read at every sample, and splitting its
    /// 1.5 KB into Swift strings cost more than the rest of a blocked thread's sample.
    private func number(after key: StaticString, in count: Int, radix: UInt64) -> UInt64? {
        buffer.withUnsafeBufferPointer { bytes -> UInt64? in
            let pattern = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            guard count >= pattern.count else { return nil }
            var start = 0
            while start + pattern.count <= count {
                if bytes[start] == pattern[0]
                    && memcmp(bytes.baseAddress! + start, pattern.baseAddress!, pattern.count) == 0
                {
                    break
                }
                start += 1
            }
            guard start + pattern.count <= count else { return nil }
            var at = start + pattern.count
            while at < count && (bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\t")) { at += 1 }
            var value: UInt64 = 0
            var digits = 0
            while at < count {
                let byte = bytes[at]
                let digit: UInt64
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16:
                    digit = UInt64(byte - UInt8(ascii: "a") + 10)
                default: digit = radix
                }
                guard digit < radix else { break }
                let (shifted, overflow) = value.multipliedReportingOverflow(by: radix)
                guard !overflow else { return nil }
                value = shifted &+ digit
                digits += 1
                at += 1
            }
            return digits > 0 ? value : nil
        }
    }

    /// The pid of the process tracing this one (a debugger, strace), 0 when none.
    static func tracerPID() -> Int {
        // Read close-on-exec (a child the host spawns meanwhile inherits nothing of ours).
        let fd = Glibc.open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { break }
            count += read
        }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("TracerPid:") {
            return Int(line.dropFirst(10).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }

    /// The thread's name from `/proc/…/comm`.
    static func threadName(tid: Int32) -> String {
        let fd = Glibc.open("/proc/self/task/\(tid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "?" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "?" }
        // Trimmed with the standard library, not Foundation's `trimmingCharacters(in: .newlines)`:
        // the watchdog reads this when it first meets a thread, while the loop idles, and that
        // call was all it touched of NSString and CharacterSet.
        var name = Substring(String(decoding: bytes[0..<count], as: UTF8.self))
        while name.first?.isNewline == true { name.removeFirst() }
        while name.last?.isNewline == true { name.removeLast() }
        return String(name)
    }
}

extension ThreadProcFiles.SignalMasks {
    /// Whether `signal` (1-based) is set in `mask`.
    static func contains(_ mask: UInt64, _ signal: Int32) -> Bool {
        signal >= 1 && signal <= 64 && mask & (1 << UInt64(signal - 1)) != 0
    }
}
