import Foundation
import Glibc
import StallReportModel

/// Facts about this process and machine, gathered once per monitor.
enum HostFacts {
    static func process(appVersion: String?) -> StallReport.Process {
        var names = utsname()
        uname(&names)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let executablePath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "?"
        return StallReport.Process(
            pid: Int(getpid()),
            executableName: (executablePath as NSString).lastPathComponent,
            executablePath: executablePath,
            appVersion: appVersion,
            hostName: field(names.nodename),
            os: field(names.sysname),
            osVersion: field(names.release),
            architecture: field(names.machine),
            startTicks: ProcessLiveness.startTicks(pid: Int(getpid())))
    }
}
