import Foundation
import Glibc
import StallReportModel

/// At start, turns `inProgress` reports of processes that no longer run on this host into `fatal`
/// ones (atomically): those processes died during a stall. Reports of other hosts, or of a
/// process still running, are left alone.
struct StaleReportSweeper {
    let store: ReportFileStore
    let hostName: String
    let errors: ErrorReporter

    /// Files larger than this are not reports this monitor wrote (they are bounded by the
    /// sample and frame limits), and are left alone.
    static let maxFileSize = 64 << 20

    /// Returns how many reports were marked fatal.
    @discardableResult
    func sweep() -> Int {
        let directory = store.directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return 0 }
        let sessions = sessionStarts(in: directory, names: names)
        var marked = 0
        for name in names where ReportQuota.isReportName(name) {
            let url = directory.appendingPathComponent(name)
            guard let data = try? BoundedFileReader.contents(of: url.path, limit: Self.maxFileSize).get(),
                  data.range(of: Data("\"inProgress\"".utf8)) != nil,
                  var report = try? StallReport.decode(from: data),
                  report.status == .inProgress, report.process.hostName == hostName,
                  !isRunning(pid: report.process.pid, executableName: report.process.executableName, sessions: sessions)
            else { continue }
            report.status = .fatal
            do {
                _ = try store.write(try report.encoded(), name: name, replacing: true)
                marked += 1
            } catch let error as StallMonitorError {
                errors.report(error)
            } catch {
                errors.report(.reportEncoding(String(describing: error)))
            }
        }
        return marked
    }

    /// pid → process start ticks recorded by session files in the directory.
    private func sessionStarts(in directory: URL, names: [String]) -> [Int: Set<UInt64>] {
        var starts: [Int: Set<UInt64>] = [:]
        let decoder = ReportCoding.makeDecoder()
        for name in names where name.hasSuffix(".session") {
            guard let data = try? BoundedFileReader.contents(of: directory.appendingPathComponent(name).path, limit: Self.maxFileSize).get(),
                  let record = try? decoder.decode(SessionRecord.self, from: data),
                  record.hostName == hostName else { continue }
            starts[record.pid, default: []].insert(record.processStartTicks)
        }
        return starts
    }

    /// Whether the process that wrote a report still runs: the pid exists with the executable's
    /// name and, when a session record of that pid exists, with the recorded start time.
    private func isRunning(pid: Int, executableName: String, sessions: [Int: Set<UInt64>]) -> Bool {
        if pid == Int(getpid()) { return true }
        guard let ticks = SessionRecord.startTicks(pid: pid) else { return false }
        if let recorded = sessions[pid], !recorded.isEmpty { return recorded.contains(ticks) }
        return StaleStatus.isRunning(pid: pid, executableName: executableName)
    }
}
