import Foundation
import Glibc
import StallReportModel
import Testing

@testable import StallMonitor

/// What a process spawned by the host inherits of the monitor (nothing), and what happens when the
/// process runs out of descriptors during a stall (one stall without stacks, not the monitor's life).
@Suite("Descriptors: close-on-exec, transient failures", .serialized)
struct CloseOnExecTests {
    @Test(
        "after a stall unwound and named by libdw, a child spawned with posix_spawn inherits no ELF file and no /proc file"
    )
    func spawnedChildInheritsNothingOfTheMonitor() throws {
        try withMonitoredLoop("cloexec-stall") { directory, loop, monitor in
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 600) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let reports = try directory.reports()
            try #require(reports.count == 1)
            // libdw unwound the samples and named the frames: its sessions opened the ELF files.
            #expect(reports[0].samples.contains { $0.unwinder == "libdw" }, "\(reports[0].sampling)")
            #expect(reports[0].anySampleNames("spinOnCPUForStallTest"))
            // The unwinder's session keeps the modules' ELF files open (released after 30 s quiet):
            // the check below is about real descriptors, not an empty table.
            let ours = DescriptorTable.entries(of: getpid()).filter(\.isELFFile)
            #expect(!ours.isEmpty, "no ELF descriptor open in the test process: nothing to check")

            let inherited = DescriptorTable.entriesOfSpawnedChild()
            let leaked = inherited.filter { $0.isELFFile || $0.target.hasPrefix("/proc/") }
            #expect(leaked.isEmpty, "a spawned child inherited \(leaked.map { "\($0.fd) → \($0.target)" })")
        }
    }

    @Test(
        "a stall during which no descriptor can be opened (EMFILE) has no libdw stacks; the next stall has them again")
    func unwinderOpenFailureIsRetriedAtTheNextStall() throws {
        try withMonitoredLoop("emfile-stall") { directory, loop, monitor in
            try #require(!MonitorProcess.shared.unwinder.isOpen, "an unwinder session is open before the first stall")

            // Stall 1: the loop waits for the test while the process may open no descriptor at all
            // (the soft limit below every free descriptor number: fds 0–2 are open).
            let release = DispatchSemaphore(value: 0)
            var saved = rlimit()
            try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0)
            var lowered = saved
            lowered.rlim_cur = 3
            try #require(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)
            var restored = false
            defer {
                if !restored {
                    var limit = saved
                    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                }
                release.signal()
            }
            let first = loop.perform { release.wait() }
            // Its in-progress report cannot be written (no descriptor for the file): by then the
            // watchdog has tracked the stall and chosen its unwinder, which could not open.
            let failed = waitUntil(timeout: .seconds(20)) { (monitor.statistics.errors["reportWrite"] ?? 0) >= 1 }
            var limit = saved
            #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
            restored = true
            release.signal()
            try first.wait(timeout: .seconds(10), what: "the first stall to end")
            try #require(failed, "the in-progress write never failed: \(monitor.statistics)")
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            try loop.waitUntilSleeping()

            // Stall 2: descriptors are free again, and libdw unwinds as usual.
            try loop.run { StallingWork.sleepInUsleepUntilElapsed(milliseconds: 600) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            let reports = try directory.reports()
            try #require(reports.count == 2, "\(directory.entries())")
            let (withoutDescriptors, after) = (reports[0], reports[1])
            #expect(!withoutDescriptors.samples.contains { $0.unwinder == "libdw" }, "\(withoutDescriptors.sampling)")
            #expect(after.sampling.unwinder == "libdw", "\(after.sampling)")
            #expect(
                after.samples.contains { $0.kind == .stack && $0.unwinder == "libdw" }, "\(after.samples.map(\.kind))")
            #expect(after.anySampleNames("sleepInUsleepUntilElapsed"))
        }
    }
}

/// The descriptors of a process, read from `/proc/<pid>/fd`.
enum DescriptorTable {
    struct Entry {
        var fd: Int32
        var target: String

        /// Whether the descriptor names a regular file that starts with the ELF magic.
        var isELFFile: Bool {
            guard target.hasPrefix("/") else { return false }
            let fd = open(target, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
            var magic = [UInt8](repeating: 0, count: 4)
            return read(fd, &magic, 4) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46]
        }
    }

    /// Every descriptor of process `pid` and what it points at.
    static func entries(of pid: pid_t) -> [Entry] {
        let path = "/proc/\(pid)/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name in
            guard let fd = Int32(name) else { return nil }
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = readlink("\(path)/\(name)", &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            return Entry(
                fd: fd, target: String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }.sorted { $0.fd < $1.fd }
    }

    /// The descriptor table of a child started with `posix_spawn` (as a host would: no file
    /// actions beyond its standard streams, so it inherits every descriptor not marked
    /// close-on-exec): `/bin/cat` waiting on a pipe, read from `/proc/<child>/fd` once it runs.
    /// `posix_spawn` returns after the child's `exec`, when close-on-exec descriptors are closed.
    static func entriesOfSpawnedChild() -> [Entry] {
        var pipeFDs: [Int32] = [-1, -1]
        #expect(pipe(&pipeFDs) == 0)
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // the child gets the read end as its stdin only
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("cat"), nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, "/bin/cat", &actions, nil, arguments, environ)
        close(pipeFDs[0])
        defer {
            close(pipeFDs[1])  // cat sees end of file and exits
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
        }
        #expect(spawned == 0, "posix_spawn failed: errno \(spawned)")
        guard spawned == 0 else { return [] }
        return entries(of: child)
    }
}
