import CStallMonitor
import Foundation
import Testing

@testable import StallMonitor

/// A blocking call made inside a C library built without frame pointers: the frame-pointer walk
/// stops in the library, the recorder copies the stack, and the collector's CFI walk of the copy
/// finds the Swift function that called into the library and the thread's start.
@Suite(
    "Blocking calls inside code without frame pointers", .serialized,
    .enabled(if: BlockingVisibility.executableCallsSeen))
struct BlockingStackCopyTests {
    /// SQLite's shared library (Debian builds it without frame pointers; Scripts/setup installs
    /// it), loaded before the detector starts so that its GOT is watched.
    static let sqliteLoaded: Bool = dlopen("libsqlite3.so.0", RTLD_NOW) != nil

    /// `sqlite3_sleep(milliseconds)`: SQLite calls usleep through its own GOT.
    @inline(never) static func sleepInSQLiteForBlockingTest(milliseconds: Int32) {
        guard let library = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD),
            let symbol = dlsym(library, "sqlite3_sleep")
        else { return }
        defer { dlclose(library) }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)(milliseconds)
    }

    @Test("sqlite3_sleep in a task: the record names the Swift caller and reaches the thread's start")
    func callerFoundThroughCFI() async throws {
        try #require(Self.sqliteLoaded, "libsqlite3.so.0 is not installed: apt-get install libsqlite3-0")
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        defer { detector.stop() }
        await detector.attributing { await Task { Self.sleepInSQLiteForBlockingTest(milliseconds: 20) }.value }
        let calls = detector.takeCalls().filter { $0.call == "usleep" }
        try #require(calls.count == 1, "\(calls)")
        let names = calls[0].frames.map { $0.function ?? "?" }
        let caller = try #require(
            names.firstIndex { $0.contains("sleepInSQLiteForBlockingTest") }, "the Swift caller: \(calls[0])")
        #expect(caller >= 1, "above SQLite's own frames: \(names)")
        #expect(names[caller - 1] == "sqlite3_sleep", "SQLite's exported entry point right below it: \(names)")
        #expect(names.contains { $0.contains("start_thread") }, "to the thread's start: \(names)")
        #expect(calls[0].duration >= .milliseconds(20))
    }

    @Test("a detector alone closes the unwinder its stack copies opened when it stops")
    func unwinderClosedWithTheLastDetector() async throws {
        try #require(Self.sqliteLoaded, "libsqlite3.so.0 is not installed: apt-get install libsqlite3-0")
        try #require(!MonitorProcess.shared.unwinder.isRetained, "tests run one at a time: no monitor may still run")
        let detector = try BlockingCallDetector.startScoped(.init(threshold: .milliseconds(1)))
        await detector.attributing { await Task { Self.sleepInSQLiteForBlockingTest(milliseconds: 5) }.value }
        #expect(detector.takeCalls().contains { $0.call == "usleep" })
        #expect(MonitorProcess.shared.unwinder.isOpen, "the stack copy was unwound with libdw")
        detector.stop()
        // The drain thread sees the last detector gone within 50 ms, then closes the session.
        let deadline = ContinuousClock.now + .seconds(5)
        while MonitorProcess.shared.unwinder.isOpen && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!MonitorProcess.shared.unwinder.isOpen, "no monitor holds it")
    }
}
