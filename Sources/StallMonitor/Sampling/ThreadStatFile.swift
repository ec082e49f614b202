import Glibc

/// One thread's `/proc/self/task/<tid>/stat`, kept open and re-read with `pread` at offset 0
/// (the kernel regenerates it at each read): one system call per question, where opening the file
/// again costs a path walk through `/proc/self`, a read and a close. For the watchdog thread.
final class ThreadStatFile {
    private let descriptor: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 1)

    /// Opens thread `tid`'s file (a thread that is gone is never asleep).
    init(tid: Int32) {
        descriptor = open("/proc/self/task/\(tid)/stat", O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        buffer.deallocate()
    }

    /// Whether the thread sleeps in the kernel now (`S`: an interruptible wait, as an idle pool
    /// worker's); false when it runs, is runnable, has exited, or its file cannot be read.
    func isAsleep() -> Bool {
        guard descriptor >= 0 else { return false }
        let count = pread(descriptor, buffer.baseAddress, buffer.count, 0)
        guard count > 0 else { return false }
        let bytes = UnsafeBufferPointer(start: buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), count: count)
        return ThreadProcFiles.stateLetter(inStat: bytes) == UInt8(ascii: "S")
    }
}
