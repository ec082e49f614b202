import CStallMonitor
import Foundation  // links CoreFoundation (in Foundation here), which the C shim refers to
import Glibc

/// Runs a program where some system calls fail, as a hardened container's seccomp profile makes
/// them fail (tests, and the "In containers" section of the production guide):
///
///     seccomp-run <call>[,<call>…] [EPERM|ENOSYS] -- <program> [<argument>…]
///
/// Installs a seccomp filter that answers each named call (`process_vm_readv`, `tgkill`,
/// `rt_tgsigqueueinfo`, `perf_event_open`, …) with the errno (EPERM unless said), then executes
/// the program in its place: the filter holds for it and every thread it starts. Exit 64 on a
/// usage error, 71 when the filter cannot be installed, 127 when the program cannot be executed.
@main
struct SeccompRun {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let separator = arguments.firstIndex(of: "--"), separator >= 1, separator < arguments.count - 1,
            separator <= 2
        else {
            fail("usage: seccomp-run <call>[,<call>…] [EPERM|ENOSYS] -- <program> [<argument>…]", status: 64)
        }
        let calls = arguments[0].split(separator: ",").map(String.init)
        var error = EPERM
        if separator == 2 {
            switch arguments[1] {
            case "EPERM": error = EPERM
            case "ENOSYS": error = ENOSYS
            default: fail("seccomp-run: unknown errno '\(arguments[1])' (EPERM or ENOSYS)", status: 64)
            }
        }
        var message = [CChar](repeating: 0, count: 256)
        let names = calls.map { strdup($0) }
        let installed = names.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { buffer in
            CStallMonitor_deny_syscalls(buffer.baseAddress, Int32(buffer.count), error, &message, message.count)
        }
        guard installed == 0 else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            fail("seccomp-run: cannot install the filter: \(why)", status: 71)
        }
        let program = Array(arguments[(separator + 1)...])
        var argv = program.map { strdup($0) } + [nil]
        execv(program[0], &argv)
        fail("seccomp-run: cannot execute \(program[0]): \(String(cString: strerror(errno)))", status: 127)
    }

    /// Says `message` on stderr and exits with `status`.
    static func fail(_ message: String, status: Int32) -> Never {
        let line = message + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(status)
    }
}
