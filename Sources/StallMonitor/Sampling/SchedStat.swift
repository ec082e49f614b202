import Glibc

/// The first two fields of a thread's `/proc/…/schedstat`: nanoseconds on a CPU and nanoseconds
/// runnable but waiting for one. Parsed in place (the watchdog reads it at every wait and every
/// look of a pull probe).
struct SchedStat: Equatable {
    var onCPU: UInt64
    var waiting: UInt64

    /// Time runnable since the thread started: on a CPU plus waiting for one. A thread that has
    /// not slept since it woke has been runnable all that time.
    var runnable: UInt64 { onCPU &+ waiting }

    /// The fields of `bytes` (the file's text); nil when they are not there.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> SchedStat? {
        var at = 0
        func number() -> UInt64? {
            var value: UInt64 = 0
            var digits = 0
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                value = value &* 10 &+ UInt64(bytes[at] - UInt8(ascii: "0"))
                at += 1
                digits += 1
            }
            while at < bytes.count, bytes[at] == UInt8(ascii: " ") { at += 1 }
            return digits > 0 ? value : nil
        }
        guard let onCPU = number(), let waiting = number() else { return nil }
        return SchedStat(onCPU: onCPU, waiting: waiting)
    }

    /// The calling thread's, read once (opens and closes `/proc/thread-self/schedstat`).
    static func callingThread() -> SchedStat? {
        let fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        return buffer.withUnsafeMutableBufferPointer { bytes -> SchedStat? in
            let count = read(fd, bytes.baseAddress, bytes.count)
            guard count > 0 else { return nil }
            return parse(UnsafeBufferPointer(rebasing: bytes[..<count]))
        }
    }
}
