import CStallMonitor
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
import ToolSupport

@testable import StallMonitor

/// Functions with names of their own, so a record's stack can be checked for its call site.
enum BlockingWork {
    @inline(never) static func sleepInUsleepForBlockingTest(milliseconds: Int) {
        usleep(useconds_t(milliseconds * 1000))
    }

    @inline(never) static func waitOnSemaphoreForBlockingTest(milliseconds: Int) {
        let semaphore = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { semaphore.signal() }
        semaphore.wait()
    }

    @inline(never) static func readBlockingPipeForBlockingTest(milliseconds: Int) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        defer {
            close(fds[0])
            close(fds[1])
        }
        let writer = fds[1]
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            var byte: UInt8 = 1
            _ = write(writer, &byte, 1)
        }
        var byte: UInt8 = 0
        _ = read(fds[0], &byte, 1)
    }
}

/// Whether the test executable's own calls pass its GOT: not under a sanitizer, whose runtime in
/// the executable defines the same functions (the detector says so; checked below).
enum BlockingVisibility {
    static let executableCallsSeen: Bool = {
        guard let detector = try? BlockingCallDetector.startScoped() else { return false }
        defer { detector.stop() }
        return !detector.callsUnseenInExecutable.contains("usleep")
    }()

    /// Whether a detector starts in this process (not under ThreadSanitizer).
    static let detectorStarts: Bool = {
        guard let detector = try? BlockingCallDetector.startScoped() else { return false }
        detector.stop()
        return true
    }()

    /// Whether the executable defines `name` itself (a sanitizer's interceptor): its own calls
    /// then bind inside it, with no GOT entry. Found with dlsym and dladdr, apart from the detector.
    static func executableDefines(_ name: String) -> Bool {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map({ UInt(bitPattern: $0) }),
            let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8),
            let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return false }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields.first?.split(separator: "-").compactMap { UInt($0, radix: 16) } ?? []
            guard fields.count >= 6, bounds.count == 2, (bounds[0]..<bounds[1]).contains(address) else { continue }
            return fields[5...].joined(separator: " ") == executable
        }
        return false
    }
}

/// `BlockingCallDetector` on real threads: real `usleep`, semaphore and pipe waits in Swift tasks,
/// and the calls that must not count (awaiting, allowed, other threads, other scopes).
@Suite("Blocking calls", .serialized) struct BlockingCallDetectorTests {
    @Test(
        "the detector says whether the executable's own calls are seen: not where the executable defines the function itself",
        .enabled(if: BlockingVisibility.detectorStarts))
    func visibility() throws {
        let detector = try BlockingCallDetector.startScoped()
        defer { detector.stop() }
        for name in ["usleep", "read", "sem_wait", "pthread_mutex_lock"]
        where BlockingVisibility.executableDefines(name) {
            #expect(detector.callsUnseenInExecutable.contains(name), "\(name) is defined in the executable")
        }
        #expect(
            detector.callsUnseenInExecutable.contains("usleep") == BlockingVisibility.executableDefines("usleep"),
            "unseen in the executable: \(detector.callsUnseenInExecutable)")
        #expect(!detector.unseenCalls.contains("read"), "libFoundation and libdispatch call read through their GOTs")
    }

    @Test(
        "calls are timed with the CPU's counter exactly where the kernel keeps its own time with it",
        .enabled(if: BlockingVisibility.detectorStarts))
    func clock() throws {
        let detector = try BlockingCallDetector.startScoped()
        defer { detector.stop() }
        let clocksource = try? String(
            contentsOfFile: "/sys/devices/system/clocksource/clocksource0/current_clocksource", encoding: .utf8)
        #if arch(x86_64)
        let expected = clocksource == "tsc\n"
        #else
        let expected = false
        #endif
        #expect(
            (CStallMonitor_blocking_clock_is_tsc() == 1) == expected,
            "the kernel's clocksource: \(clocksource ?? "unread")")
    }

    private func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test(
        "a usleep in a task is recorded with its duration, its thread and its call site",
        .enabled(if: BlockingVisibility.executableCallsSeen))
    func usleepInATask() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        let (callerStart, measured) = await detector.attributing { () async -> (UInt64, Double) in
            let start = CStallMonitor_monotonic_ns()
            BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 20)
            return (start, Double(CStallMonitor_monotonic_ns() - start) / 1e6)
        }
        let calls = detector.takeCalls()
        try #require(calls.count == 1, "\(calls)")
        let call = calls[0]
        #expect(call.call == "usleep")
        #expect(call.inTask)
        #expect(
            milliseconds(call.duration) >= 20 && milliseconds(call.duration) <= measured + 0.1,
            "recorded \(milliseconds(call.duration)) ms, the caller measured \(measured) ms")
        // The start is on CLOCK_MONOTONIC whatever clock timed the call (the CPU's counter where
        // the kernel keeps time with it): after the caller read its clock, within the caller's time.
        let startOffset = (Double(call.startNanoseconds) - Double(callerStart)) / 1e6
        #expect(
            startOffset >= -0.05 && startOffset <= measured - 20,
            "recorded start \(startOffset) ms after the caller's, which measured \(measured) ms")
        #expect(call.callSite?.function?.contains("sleepInUsleepForBlockingTest") == true, "\(call)")
    }

    @Test(
        "DispatchSemaphore.wait and a read from an empty pipe are recorded",
        .enabled(if: BlockingVisibility.executableCallsSeen))
    func semaphoreAndPipe() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(5)))
        defer { detector.stop() }
        detector.attributing {
            BlockingWork.waitOnSemaphoreForBlockingTest(milliseconds: 30)
            BlockingWork.readBlockingPipeForBlockingTest(milliseconds: 30)
        }
        let calls = detector.takeCalls()
        let semaphore = calls.first {
            $0.frames.contains { $0.function?.contains("waitOnSemaphoreForBlockingTest") == true }
        }
        let pipeRead = calls.first {
            $0.frames.contains { $0.function?.contains("readBlockingPipeForBlockingTest") == true }
        }
        #expect(semaphore.map { ["sem_wait", "futex", "sem_timedwait"].contains($0.call) } == true, "\(calls)")
        if BlockingVisibility.executableDefines("read") {
            // A sanitizer's runtime defines read in the executable: the test's own read is not seen.
            #expect(pipeRead == nil, "\(calls)")
        } else {
            #expect(pipeRead?.call == "read", "\(calls)")
        }
        #expect(calls.allSatisfy { milliseconds($0.duration) >= 5 })
    }

    @Test(
        "awaiting, an allowed call, a thread outside any task and a call of another scope are not recorded",
        .enabled(if: BlockingVisibility.executableCallsSeen))
    func controls() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        let other = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { other.stop() }
        try await detector.attributing {
            try await Task.sleep(for: .milliseconds(20))
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { continuation.resume() }
            }
            BlockingCallDetector.allowBlocking { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10) }
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10)
                done.signal()
            }
            thread.start()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    done.wait()
                    continuation.resume()
                }
            }
        }
        other.attributing { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10) }
        #expect(detector.takeCalls().isEmpty)
        #expect(other.takeCalls().count == 1)
    }

    @Test(
        "a thread marked as one that must not block is watched outside any task",
        .enabled(if: BlockingVisibility.executableCallsSeen))
    func markedThread() throws {
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(5)))
        defer { detector.stop() }
        let calls = Mutex<[BlockingCall]>([])
        let done = DispatchSemaphore(value: 0)
        let threadID = Mutex<Int32>(0)
        let thread = Thread {
            threadID.withLock { $0 = CStallMonitor_gettid() }
            BlockingCallDetector.markMustNotBlock(true)
            BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10)
            BlockingCallDetector.markMustNotBlock(false)
            BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10)
            done.signal()
        }
        thread.start()
        done.wait()
        let id = threadID.withLock { $0 }
        calls.withLock { $0 = detector.takeCalls().filter { $0.threadID == id } }
        let recorded = calls.withLock { $0 }
        #expect(recorded.count == 1, "\(recorded)")
        #expect(recorded.first?.inTask == false)
        #expect(recorded.first?.asyncCallers.isEmpty == true, "outside a task: no async callers")
    }
}

/// Threads of loops a monitor watches must not block either: a watched RunLoop's callouts are
/// timed while the monitor watches it, not before or after.
@Suite("Blocking calls on a watched RunLoop", .serialized) struct BlockingCallsOnWatchedRunLoopTests {
    /// The calls made on `thread` (the loop's: tests running beside this one block elsewhere).
    private func ownCalls(_ detector: BlockingCallDetector, on thread: Int32) -> [BlockingCall] {
        detector.takeCalls().filter { $0.threadID == thread }
    }

    @Test(
        "a usleep in a watched RunLoop's callout is recorded; the same call before the watch and after it is not",
        .enabled(if: BlockingVisibility.executableCallsSeen))
    func watchedRunLoop() throws {
        let detector = try BlockingCallDetector.start(.init(threshold: .milliseconds(5)))
        defer { detector.stop() }
        try withLoopThread("blocking-loop") { directory, loop in
            let thread = try loop.run { CStallMonitor_gettid() }
            func ownCalls(_ detector: BlockingCallDetector) -> [BlockingCall] { self.ownCalls(detector, on: thread) }
            try loop.run { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10) }
            #expect(ownCalls(detector).isEmpty)
            let monitor = try loop.startMonitor(directory.configuration())
            try loop.run { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10) }
            let watched = ownCalls(detector)
            #expect(watched.count == 1, "\(watched)")
            #expect(watched.first?.call == "usleep")
            #expect(watched.first?.inTask == false)
            monitor.stop()
            try loop.run { BlockingWork.sleepInUsleepForBlockingTest(milliseconds: 10) }
            #expect(ownCalls(detector).isEmpty)
        }
    }
}

/// An actor whose method blocks (`BlockingGroundTruthTests`).
actor BlockingLedger {
    @inline(never) func recordSlowly(milliseconds: Int) -> CallerClock {
        BlockingGroundTruthTests.timedUsleep(milliseconds: milliseconds)
    }
}

/// Blocking calls of known lengths in each place a Swift task runs, and awaiting controls: every
/// call at or over the threshold is recorded, exactly once, no shorter than it asked to sleep and
/// no longer than the caller's own clock says, and the controls give nothing.
@Suite("Blocking calls: ground truth", .serialized, .enabled(if: BlockingVisibility.executableCallsSeen))
struct BlockingGroundTruthTests {
    /// usleep for `milliseconds`, timed by the caller around the call.
    @inline(never) static func timedUsleep(milliseconds: Int) -> CallerClock {
        let begun = CallerClock.begin()
        usleep(useconds_t(milliseconds * 1000))
        return CallerClock.end(begun)
    }

    @MainActor @inline(never) static func onMainActor(milliseconds: Int) -> CallerClock {
        timedUsleep(milliseconds: milliseconds)
    }

    private let lengths = [2, 5, 20]

    /// Three async functions, each suspending before it calls the next: the innermost blocks.
    @inline(never) static func outerAwaitingForBlockingTest() async -> CallerClock {
        await Task.yield()
        return await middleAwaitingForBlockingTest()
    }

    @inline(never) static func middleAwaitingForBlockingTest() async -> CallerClock {
        await Task.yield()
        return await innerBlockingForBlockingTest()
    }

    @inline(never) static func innerBlockingForBlockingTest() async -> CallerClock {
        await Task.yield()
        return timedUsleep(milliseconds: 5)
    }

    @Test(
        "a call in an async function carries the async functions awaiting it, innermost first, to the task's root; so does its report"
    )
    func asyncCallers() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        _ = await detector.attributing { await Task { await Self.outerAwaitingForBlockingTest() }.value }
        let calls = detector.takeCalls().filter { $0.frames.contains { $0.function?.contains("timedUsleep") == true } }
        try #require(calls.count == 1, "\(calls)")
        let names = calls[0].asyncCallers.map { $0.function ?? "?" }
        let middle = try #require(names.firstIndex { $0.contains("middleAwaitingForBlockingTest") }, "\(names)")
        let outer = try #require(names.firstIndex { $0.contains("outerAwaitingForBlockingTest") }, "\(names)")
        #expect(middle < outer, "innermost first: \(names)")
        // This (debug) build's async functions keep frames: the chain starts at the running one's
        // context, so its first caller is the function awaiting it.
        #expect(!calls[0].asyncCallersFromJobStart && middle == 0, "\(names)")
        #expect(names.last?.contains("completeTask") == true, "ends at the task's root: \(names)")
        #expect(!names.prefix(middle).contains { $0.contains("outerAwaitingForBlockingTest") })
        #expect(calls[0].description.contains("awaited by"), "\(calls[0])")
        #expect(calls[0].asyncCallersReachRoot)
    }

    /// An async recursion `depth` deep whose every level holds 1 KiB across its await (each
    /// context lies in a 1 KiB chunk of its own), blocking at the bottom; returns a sum of the pads.
    @inline(never) static func deepAwaitingForBlockingTest(depth: Int) async -> UInt64 {
        let pad = (SIMD64<UInt64>(repeating: UInt64(depth)), SIMD64<UInt64>(repeating: 1))
        await Task.yield()
        let below =
            depth == 0
            ? UInt64(timedUsleep(milliseconds: 5).milliseconds) : await deepAwaitingForBlockingTest(depth: depth - 1)
        return below &+ pad.0[63] &+ pad.1[0]
    }

    @Test(
        "a chain deeper than a record reads, spread over the task's memory, keeps its innermost callers and says it stops short"
    )
    func deepAsyncCallers() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        _ = await detector.attributing { await Task { await Self.deepAwaitingForBlockingTest(depth: 16) }.value }
        let calls = detector.takeCalls().filter { $0.frames.contains { $0.function?.contains("timedUsleep") == true } }
        try #require(calls.count == 1, "\(calls)")
        let names = calls[0].asyncCallers.map { $0.function ?? "?" }
        #expect(
            names.count >= 2 && names.prefix(2).allSatisfy { $0.contains("deepAwaitingForBlockingTest") }, "\(names)")
        #expect(!calls[0].asyncCallersReachRoot && !names.contains { $0.contains("completeTask") }, "\(names)")
        #expect(calls[0].description.contains("outer callers not read"), "\(calls[0])")
    }

    @Test("a Task, a task-group child, an async let, an actor method and a MainActor function; each length once")
    func everyPlace() async throws {
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        let ledger = BlockingLedger()
        let measured: [CallerClock] = await detector.attributing {
            var measured: [CallerClock] = []
            for length in lengths {
                measured.append(await Task { Self.timedUsleep(milliseconds: length) }.value)
                measured.append(
                    await withTaskGroup(of: CallerClock.self) { group in
                        group.addTask { Self.timedUsleep(milliseconds: length) }
                        return await group.next() ?? CallerClock(milliseconds: 0, disturbance: nil)
                    })
                async let child = Self.timedUsleep(milliseconds: length)
                measured.append(await child)
                measured.append(await ledger.recordSlowly(milliseconds: length))
                measured.append(await Self.onMainActor(milliseconds: length))
                // Controls: the same waits, awaited.
                try? await Task.sleep(for: .milliseconds(length))
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(length)) {
                        continuation.resume()
                    }
                }
            }
            return measured
        }
        let calls = detector.takeCalls().filter { $0.frames.contains { $0.function?.contains("timedUsleep") == true } }
        try #require(calls.count == measured.count, "\(calls.count) recorded for \(measured.count) calls: \(calls)")
        // Five calls of each length, in the order made.
        let requested = lengths.flatMap { Array(repeating: Double($0), count: 5) }
        try #require(requested.count == measured.count)
        for ((call, ownClock), length) in zip(zip(calls, measured), requested) {
            let recorded =
                Double(call.duration.components.attoseconds) / 1e15 + Double(call.duration.components.seconds) * 1000
            #expect(call.call == "usleep" && call.inTask)
            #expect(
                ownClock.admits(recorded, sleeping: length),
                "recorded \(recorded) ms for a \(length) ms sleep, the caller's clock \(ownClock)")
        }
    }
}
