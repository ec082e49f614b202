import Foundation
import Glibc
import StallMonitor
import StallReportKit
import Testing

/// `start()` refuses a report directory it cannot use, unless the configuration says reports may
/// be written later.
@Suite("Start: an unusable report directory", .serialized)
struct StartDirectoryTests {
    /// Starts a monitor of a loop thread of its own, on that thread (`loop: .current`).
    private static func start(
        _ configuration: StallMonitor.Configuration
    ) throws -> Result<StallMonitor, StallMonitorError> {
        let loop = try MonitoredLoopThread(name: "start-dir")
        defer { loop.stop() }
        let result = try loop.run { () -> Result<StallMonitor, StallMonitorError> in
            Result { () throws(StallMonitorError) in try StallMonitor.start(configuration, loop: .current) }
        }
        if case .success(let monitor) = result { monitor.stop() }
        return result
    }

    /// The error of a start with `configuration` that must be refused for its report directory
    /// (`what` says what the directory is, for the message when it is not); nil, with an issue
    /// recorded, when it started or failed with another code.
    private static func refusal(
        _ configuration: StallMonitor.Configuration, _ what: String
    ) throws -> StallMonitorError? {
        guard case .failure(let error) = try start(configuration) else {
            Issue.record("start succeeded with \(what) as its report directory")
            return nil
        }
        #expect(error.code == .reportDirectory, "\(error)")
        return error.code == .reportDirectory ? error : nil
    }

    @Test("a dangling symbolic link is refused with code reportDirectory, naming the link's target")
    func danglingSymlinkIsRefused() throws {
        try withCreatedDirectory { root in
            let link = root.url.appendingPathComponent("reports")
            let target = root.url.appendingPathComponent("nowhere").path
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)

            let refused = try Self.refusal(StallMonitor.Configuration(reportDirectory: link), "a dangling symlink")
            guard let error = refused else { return }
            #expect(error.path == link.path)
            #expect(error.description.contains(target), "\(error)")
            #expect(!FileManager.default.fileExists(atPath: target), "start created the link's target")
        }
    }

    @Test("a regular file is refused with code reportDirectory")
    func regularFileIsRefused() throws {
        try withCreatedDirectory { root in
            let file = root.url.appendingPathComponent("reports")
            try Data("not a directory".utf8).write(to: file)

            let refused = try Self.refusal(StallMonitor.Configuration(reportDirectory: file), "a regular file")
            guard let error = refused else { return }
            #expect(error.description.contains("not a directory"), "\(error)")
        }
    }

    @Test(
        "a directory this process cannot create files in (read-only bind mount as root, mode 0500 otherwise) is refused",
        .enabled(if: getuid() != 0 || ScratchMount.available, "as root needs mount(8)"))
    func unwritableDirectoryIsRefused() throws {
        try withCreatedDirectory { root in
            var mount: ScratchMount?
            defer {
                mount?.unmount()
                chmod(root.url.path, 0o700)
            }
            if getuid() == 0 {
                mount = try ScratchMount.readOnlyBind(root.url)
            } else {
                #expect(chmod(root.url.path, 0o500) == 0)
            }

            guard let error = try Self.refusal(root.configuration(), "an unwritable directory") else { return }
            #expect(error.description.contains("cannot create files"), "\(error)")
        }
    }

    @Test(
        "with requireUsableReportDirectory off, start succeeds on a dangling link, says it once, and reports once the target exists"
    )
    func laterDirectoryIsAllowedWhenConfigured() throws {
        try withCreatedDirectory { root in
            let link = root.url.appendingPathComponent("reports")
            let target = root.url.appendingPathComponent("mounted-later")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
            var configuration = StallMonitor.Configuration(reportDirectory: link)
            let log = CapturingLogHandler.capture(&configuration)
            configuration.requireUsableReportDirectory = false

            let loop = try MonitoredLoopThread(name: "dir-later")
            defer { loop.stop() }
            let monitor = try loop.startMonitor(configuration)
            defer { monitor.stop() }
            #expect(monitor.statistics.errors["reportDirectory"] == 1, "\(monitor.statistics.errors)")
            #expect(log.messages.filter { $0.contains("report directory") }.count == 1, "\(log.messages)")

            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 300) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            let written = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? []
            #expect(written.contains { $0.hasPrefix("stall-") && $0.hasSuffix(".json") }, "\(written)")
        }
    }
}
