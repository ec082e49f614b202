import Foundation
import Glibc
import Synchronization

/// Blocking calls that sleep in the kernel for a known time, each in a function of its own so a
/// stack names it, each returning exactly what the call returned: a monitor that signalled the
/// thread would make them return early (EINTR) or fail.
enum BlockingCalls {
    /// What one call returned, its errno and how long it took.
    struct Outcome: Sendable, CustomStringConvertible {
        var value: Int
        var error: Int32
        var elapsedMs: Double
        var description: String { "returned \(value), errno \(error), after \(elapsedMs) ms" }
    }

    /// One kind of blocking call: the function that makes it (the name a stack must show), the
    /// syscalls it may sleep in, and the exact return value and errno it must give.
    struct Kind: Sendable {
        var function: String
        var syscalls: Set<String>
        /// What the call must return: 0 (it timed out) unless a kind says otherwise.
        var expectedValue = 0
        /// The errno the call must leave: none unless a kind says otherwise.
        var expectedError: Int32 = 0
        /// How much earlier than asked the call may return: socket timeouts count whole kernel
        /// ticks (jiffies, up to 10 ms), so they may end a tick early, and on a VM whose vCPU was
        /// descheduled the tick count catches up at once (seen: 11.5 ms early on a CI machine).
        /// A signal would not show as an early timeout there anyway: it makes the call fail with
        /// EINTR, which the value check catches.
        var earlyByMs: Double = 0.5
        var call: @Sendable (_ milliseconds: Int) -> Outcome
    }

    static let all: [Kind] = [
        Kind(
            function: "blockInUsleepForTest", syscalls: ["clock_nanosleep", "nanosleep"], call: blockInUsleepForTest),
        Kind(
            function: "blockInNanosleepForTest", syscalls: ["clock_nanosleep", "nanosleep"],
            call: blockInNanosleepForTest),
        Kind(function: "blockInPollForTest", syscalls: ["poll", "ppoll"], call: blockInPollForTest),
        Kind(
            function: "blockInEpollWaitForTest", syscalls: ["epoll_wait", "epoll_pwait"],
            call: blockInEpollWaitForTest),
        Kind(function: "blockInSelectForTest", syscalls: ["select", "pselect6"], call: blockInSelectForTest),
        Kind(
            function: "blockInRecvForTest", syscalls: ["recvfrom"], expectedValue: -1, expectedError: EAGAIN,
            earlyByMs: 25, call: blockInRecvForTest),
        Kind(
            function: "blockInAcceptForTest", syscalls: ["accept", "accept4"], expectedValue: -1, expectedError: EAGAIN,
            earlyByMs: 25, call: blockInAcceptForTest),
        Kind(
            function: "blockInConditionWaitForTest", syscalls: ["futex"], expectedValue: Int(ETIMEDOUT),
            call: blockInConditionWaitForTest),
        Kind(
            function: "blockInPipeReadForTest", syscalls: ["read"], expectedValue: 1, call: blockInPipeReadForTest),
    ]

    private static func measure(_ body: () -> Int) -> Outcome {
        errno = 0
        let start = monotonicNow()
        let value = body()
        let error = value < 0 ? errno : 0
        return Outcome(value: value, error: error, elapsedMs: Double(monotonicNow() - start) / 1e6)
    }

    @inline(never)
    static func blockInUsleepForTest(milliseconds: Int) -> Outcome {
        measure { Int(usleep(UInt32(milliseconds * 1000))) }
    }

    @inline(never)
    static func blockInNanosleepForTest(milliseconds: Int) -> Outcome {
        var request = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        var remaining = timespec()
        return measure { Int(nanosleep(&request, &remaining)) }
    }

    @inline(never)
    static func blockInPollForTest(milliseconds: Int) -> Outcome {
        let pipe = Pipe()
        defer { pipe.close() }
        var descriptor = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
        return measure { Int(poll(&descriptor, 1, Int32(milliseconds))) }
    }

    @inline(never)
    static func blockInEpollWaitForTest(milliseconds: Int) -> Outcome {
        let pipe = Pipe()
        let epoll = Epoll.create(0)
        defer {
            pipe.close()
            Glibc.close(epoll)
        }
        // struct epoll_event is packed on x86_64: 4 bytes of events, 8 of data.
        var event = [UInt8](repeating: 0, count: 16)
        event[0] = 0x1  // EPOLLIN
        guard epoll >= 0, Epoll.control(epoll, 1 /* EPOLL_CTL_ADD */, pipe.read, &event) == 0 else {
            return Outcome(value: -2, error: errno, elapsedMs: 0)
        }
        var ready = [UInt8](repeating: 0, count: 16)
        return measure { Int(Epoll.wait(epoll, &ready, 1, Int32(milliseconds))) }
    }

    /// epoll through the C library's own symbols (Swift's Glibc module does not import them).
    private enum Epoll {
        typealias Create = @convention(c) (Int32) -> Int32
        typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
        typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
        static let create = unsafeBitCast(
            dlsym(UnsafeMutableRawPointer(bitPattern: 0), "epoll_create1"), to: Create.self)
        static let control = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "epoll_ctl"), to: Control.self)
        static let wait = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "epoll_wait"), to: Wait.self)
    }

    @inline(never)
    static func blockInSelectForTest(milliseconds: Int) -> Outcome {
        var timeout = timeval(tv_sec: 0, tv_usec: milliseconds * 1000)
        return measure { Int(select(0, nil, nil, nil, &timeout)) }
    }

    @inline(never)
    static func blockInRecvForTest(milliseconds: Int) -> Outcome {
        let socket = loopbackSocket(type: Int32(SOCK_DGRAM.rawValue), timeoutMs: milliseconds)
        defer { Glibc.close(socket) }
        var byte: UInt8 = 0
        return measure { recv(socket, &byte, 1, 0) }
    }

    @inline(never)
    static func blockInAcceptForTest(milliseconds: Int) -> Outcome {
        let socket = loopbackSocket(type: Int32(SOCK_STREAM.rawValue), timeoutMs: milliseconds)
        defer { Glibc.close(socket) }
        guard listen(socket, 1) == 0 else { return Outcome(value: -2, error: errno, elapsedMs: 0) }
        return measure { Int(accept(socket, nil, nil)) }
    }

    @inline(never)
    static func blockInConditionWaitForTest(milliseconds: Int) -> Outcome {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_cond_init(condition, &attributes)
        pthread_mutex_init(mutex, nil)
        defer {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
            pthread_condattr_destroy(&attributes)
        }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Int(deadline.tv_sec) * 1_000_000_000 + deadline.tv_nsec + milliseconds * 1_000_000
        deadline = timespec(tv_sec: end / 1_000_000_000, tv_nsec: end % 1_000_000_000)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        // pthread_cond_timedwait returns its error instead of setting errno; it never returns
        // EINTR, so a signal would show only as a wait cut short in time. Timed from when the
        // deadline was set: the thread may be preempted before the wait begins.
        let base = UInt64(end - milliseconds * 1_000_000)
        var outcome = measure { Int(pthread_cond_timedwait(condition, mutex, &deadline)) }
        outcome.elapsedMs = Double(monotonicNow() - base) / 1e6
        return outcome
    }

    @inline(never)
    static func blockInPipeReadForTest(milliseconds: Int) -> Outcome {
        let pipe = Pipe()
        defer { pipe.close() }
        let writeEnd = pipe.write
        // The writer sleeps the whole time itself (a Dispatch timer may fire a little early). The
        // wait is timed from when the writer began to sleep: the reader may be preempted between
        // starting the writer and calling read, and would then wait less than the full time.
        let writerStarted = Atomic<UInt64>(0)
        Thread.detachNewThread {
            writerStarted.store(monotonicNow(), ordering: .releasing)
            usleep(UInt32(milliseconds * 1000))
            var byte: UInt8 = 0x2a
            _ = Glibc.write(writeEnd, &byte, 1)
        }
        var byte: UInt8 = 0
        var outcome = measure { Glibc.read(pipe.read, &byte, 1) }
        let sleptSince = writerStarted.load(ordering: .acquiring)
        if outcome.value == 1 && sleptSince != 0 { outcome.elapsedMs = Double(monotonicNow() - sleptSince) / 1e6 }
        // Close only after the writer wrote (the read returned), so its descriptor is still ours.
        return byte == 0x2a || outcome.value != 1 ? outcome : Outcome(value: -3, error: 0, elapsedMs: outcome.elapsedMs)
    }

    private struct Pipe {
        var read: Int32 = -1
        var write: Int32 = -1
        init() {
            var ends: [Int32] = [-1, -1]
            _ = Glibc.pipe(&ends)
            read = ends[0]
            write = ends[1]
        }
        func close() {
            Glibc.close(read)
            Glibc.close(write)
        }
    }

    private static func loopbackSocket(type: Int32, timeoutMs: Int) -> Int32 {
        let socket = Glibc.socket(AF_INET, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: 0, tv_usec: timeoutMs * 1000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return socket
    }
}
