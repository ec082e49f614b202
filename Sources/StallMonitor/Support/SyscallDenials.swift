import CStallMonitor
import Glibc
import StallReportModel

/// The system calls the monitor relies on that this process was refused (a container's seccomp
/// profile, a sandbox that implements less than Linux), as found by the calls themselves: each
/// cause is said once, as a ``StallMonitorError/Code/syscallDenied`` error (one log line, one
/// count in ``StallMonitor/Statistics/errors``), with what the monitor does instead or what is
/// lost. The reports still say why each sample has no stack.
final class SyscallDenialWatch: Sendable {
    /// One refused call and what follows from it.
    struct Denial: Hashable, Sendable {
        /// The system call, or the file.
        var call: String
        /// The errno it failed with.
        var errno: Int32
        /// What the monitor does instead, or what is lost.
        var consequence: String

        /// The error said for it.
        var error: StallMonitorError {
            .syscallDenied(
                "\(call) failed: \(CString.errorMessage(errno)) (\(Self.nameAndCause(errno))): \(consequence)")
        }

        /// The symbolic name of the errnos a refusal comes with.
        static func errnoName(_ code: Int32) -> String {
            switch code {
            case EPERM: return "EPERM"
            case ENOSYS: return "ENOSYS"
            case EACCES: return "EACCES"
            case ENOENT: return "ENOENT"
            default: return "errno \(code)"
            }
        }

        /// The errno's symbolic name and where such a refusal most likely comes from:
        /// `EPERM; denied by a seccomp profile?`.
        static func nameAndCause(_ code: Int32) -> String { errnoName(code) + likelyCause(code) }

        /// Where a refusal with `code` most likely comes from.
        static func likelyCause(_ code: Int32) -> String {
            switch code {
            case EPERM: return "; denied by a seccomp profile?"
            case ENOSYS: return "; not implemented by this kernel or sandbox, or denied by a seccomp profile?"
            case EACCES: return "; denied by the security policy?"
            default: return ""
            }
        }
    }

    private let said = Locked<Set<String>>([])

    init() {}

    /// The refusals found so far in this process.
    static func current() -> [Denial] {
        var found: [Denial] = []
        let memory = CStallMonitor_own_memory_status()
        if memory.vm_readv_denied != 0 {
            if memory.proc_mem_error == 0 {
                found.append(
                    Denial(
                        call: "process_vm_readv", errno: memory.vm_readv_denied,
                        consequence:
                            "this process's own memory is read through /proc/self/mem instead (the stacks of threads asleep "
                            + "in a syscall, the tasks of pool workers and the MainActor): nothing is lost"))
            } else {
                found.append(
                    Denial(
                        call: "process_vm_readv", errno: memory.vm_readv_denied,
                        consequence:
                            "and /proc/self/mem could not be opened either (\(CString.errorMessage(memory.proc_mem_error))): "
                            + "threads asleep in a syscall get no stack, and the tasks of pool workers and the MainActor are not read"
                    ))
            }
        }
        let sent = CStallMonitor_sampler_last_send_errno()
        if sent == EPERM || sent == ENOSYS || sent == EACCES {
            found.append(
                Denial(
                    call: "tgkill", errno: sent,
                    consequence:
                        "the sampling signal cannot be sent: running threads get no stack (threads asleep in a syscall "
                        + "still do); each report says so in its skipped samples (sendFailed)"))
        }
        return found
    }

    /// Why this process's own memory cannot be read at all (both ways were refused), or nil: the
    /// cause to name where a watch that needs it cannot start.
    static var ownMemoryUnreadable: String? {
        let memory = CStallMonitor_own_memory_status()
        guard memory.vm_readv_denied != 0, memory.proc_mem_error != 0 else { return nil }
        let denied = memory.vm_readv_denied
        return "this process's own memory cannot be read: process_vm_readv failed with \(Denial.nameAndCause(denied)), "
            + "and /proc/self/mem cannot be opened (\(CString.errorMessage(memory.proc_mem_error)))"
    }

    /// Says each refusal not said before through `errors`.
    func sayNew(to errors: ErrorReporter) {
        for denial in Self.current() {
            let fresh = said.withLock { $0.insert("\(denial.call): \(denial.consequence)").inserted }
            if fresh { errors.report(denial.error) }
        }
    }
}
