import Foundation
import Testing

@testable import StallMonitor

@Suite("ThreadProcFiles on a real thread", .serialized)
struct ThreadProcFilesTests {
    @Test("an idle loop thread is sleeping in its wait syscall")
    func idleLoopThread() throws {
        let loop = try MonitoredLoopThread(name: "proc-files")
        defer { loop.stop() }
        try loop.run { () }
        usleep(50_000)
        let files = ThreadProcFiles(tid: loop.tid)
        #expect(files.schedulerState() == "S")
        guard case .inSyscall(let number, let sp, let pc) = files.syscallState() else {
            Issue.record("not in a syscall: \(files.syscallState())")
            return
        }
        #expect(
            ["epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll"].contains(SyscallTable.name(number)),
            "\(SyscallTable.name(number))")
        #expect(pc != 0)
        #expect(sp != 0)
        #expect(files.signalMasks() != nil)
        #expect(ThreadProcFiles.threadName(tid: loop.tid) == "proc-files")
    }
}
