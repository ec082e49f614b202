import CStallMonitor
import Glibc
import Logging
import Synchronization
import Testing

@testable import StallMonitor

/// Reading this process's own memory without faulting (the way every blocked stack, task word
/// and async context is read), and how a refused system call is said.
@Suite("own memory and refused system calls")
struct OwnMemoryTests {
    @Test(
        "a read copies the bytes; one that runs into an unmapped page copies the mapped prefix; one of an unmapped page fails"
    )
    func readsWithoutFaulting() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, 2 * page) }
        let bytes = mapping.assumingMemoryBound(to: UInt8.self)
        for index in 0..<page { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
        #expect(munmap(mapping + page, page) == 0)
        let address = UInt(bitPattern: mapping)

        var whole = [UInt8](repeating: 0, count: 64)
        #expect(CStallMonitor_copy_own_memory(address + 100, &whole, 64) == 64)
        #expect(whole == (100..<164).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(CStallMonitor_read_memory(address + 100, &whole, 64) == 0)

        var straddling = [UInt8](repeating: 0, count: 256)
        #expect(CStallMonitor_copy_own_memory(address + UInt(page) - 128, &straddling, 256) == 128, "the mapped prefix")
        #expect(CStallMonitor_read_memory(address + UInt(page) - 128, &straddling, 256) == -1, "not the whole range")

        var gone = [UInt8](repeating: 0, count: 8)
        #expect(CStallMonitor_copy_own_memory(address + UInt(page), &gone, 8) < 0)
        #expect(CStallMonitor_read_memory(0, &gone, 8) == -1)
        let status = CStallMonitor_own_memory_status()
        #expect(status.vm_readv_denied == 0, "process_vm_readv works in this test process")
    }

    @Test(
        "a refused system call names the call, the errno and its likely cause, and is said every time, not once per interval"
    )
    func refusalsAreSaidEachTime() {
        let (logger, log) = CapturingLogHandler.logger()
        let reporter = ErrorReporter(logger: logger, interval: .seconds(3600)) { 1 }
        let memory = SyscallDenialWatch.Denial(
            call: "process_vm_readv", errno: EPERM, consequence: "read through /proc/self/mem")
        let signal = SyscallDenialWatch.Denial(
            call: "tgkill", errno: ENOSYS, consequence: "running threads get no stack")
        reporter.report(memory.error)
        reporter.report(signal.error)
        #expect(log.all.count == 2, "two causes, two lines: \(log.messages)")
        #expect(reporter.counts == ["syscallDenied": 2])
        #expect(log.all.first?.level == .info)
        #expect(
            log.messages.first?.contains(
                "process_vm_readv failed: Operation not permitted (EPERM; denied by a seccomp profile?): read through /proc/self/mem"
            ) == true,
            "\(log.messages)")
        #expect(
            log.messages.last?.contains(
                "tgkill failed: Function not implemented (ENOSYS; not implemented by this kernel or sandbox") == true,
            "\(log.messages)")
    }

    @Test("where nothing was refused, nothing is said")
    func nothingRefused() {
        let (logger, log) = CapturingLogHandler.logger()
        let reporter = ErrorReporter(logger: logger)
        SyscallDenialWatch().sayNew(to: reporter)
        #expect(SyscallDenialWatch.current().allSatisfy { $0.call != "process_vm_readv" })
        #expect(!log.messages.contains { $0.contains("process_vm_readv") })
        #expect(SyscallDenialWatch.ownMemoryUnreadable == nil)
    }
}
