import Foundation
import Glibc
import StallReportModel

/// Facts about this process and machine, gathered once per monitor.
enum HostFacts {
    static func process(appVersion: String?) -> StallReport.Process {
        var names = utsname()
        uname(&names)
        let executablePath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "?"
        return StallReport.Process(
            pid: Int(getpid()),
            executableName: (executablePath as NSString).lastPathComponent,
            executablePath: executablePath,
            appVersion: appVersion,
            hostName: CString.decode(fixed: names.nodename),
            os: CString.decode(fixed: names.sysname),
            osVersion: CString.decode(fixed: names.release),
            architecture: CString.decode(fixed: names.machine),
            startTicks: ProcessLiveness.startTicks(pid: Int(getpid())))
    }
}
