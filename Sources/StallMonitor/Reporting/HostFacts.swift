import Foundation
import Glibc
import StallReportModel

/// Facts about this process and machine, gathered once per monitor.
enum HostFacts {
    static func process(appVersion: String?) -> StallReport.Process {
        var names = utsname()
        uname(&names)
        let executablePath = executableLink() ?? CommandLine.arguments.first ?? "?"
        return StallReport.Process(
            pid: Int(getpid()),
            executableName: AtomicFileWriter.split(executablePath).name,
            executablePath: executablePath,
            appVersion: appVersion,
            hostName: CString.decode(fixed: names.nodename),
            os: CString.decode(fixed: names.sysname),
            osVersion: CString.decode(fixed: names.release),
            architecture: CString.decode(fixed: names.machine),
            startTicks: ProcessLiveness.startTicks(pid: Int(getpid())))
    }

    /// `/proc/self/exe`'s target, with `readlink` (not `FileManager`, whose code an idle
    /// monitor would otherwise be the only one to touch).
    private static func executableLink() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
