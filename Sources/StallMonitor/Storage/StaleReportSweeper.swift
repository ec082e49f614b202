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

    /// Size and nesting limits of the files read (those of every reader of reports).
    static let file = DocumentFile()

    /// Returns how many reports were marked fatal.
    @discardableResult
    func sweep() -> Int {
        let directory = store.directory
        guard let names = Self.names(in: store.directoryPath) else { return 0 }
        // No report: the session records need not be read (decoding them was JSONDecoder's code).
        guard names.contains(where: ReportQuota.isReportName) else { return 0 }
        let sessions = sessionStarts(in: directory, names: names)
        var marked = 0
        for name in names where ReportQuota.isReportName(name) {
            let url = directory.appendingPathComponent(name)
            // The cheap text filter first: the nesting check and decoding only for inProgress reports.
            guard let data = try? Self.file.bytes(at: url.path).get(),
                  data.range(of: Data("\"inProgress\"".utf8)) != nil,
                  (try? Self.file.check(data).get()) != nil,
                  var report = try? StallReport.decode(from: data),
                  report.status == .inProgress, report.process.hostName == hostName,
                  !isRunning(report.process, sessions: sessions)
            else { continue }
            report.status = .fatal
            do {
                try store.write(try report.fileData(), name: name, replacing: true)
                marked += 1
            } catch let error as StallMonitorError {
                errors.report(error)
            } catch {
                errors.report(.reportEncoding(String(describing: error)))
            }
        }
        return marked
    }

    /// The entries of a directory (without `.` and `..`), listed with `readdir`: the sweep runs at
    /// every start, usually over a directory with nothing to mark, and `FileManager`'s listing was
    /// code an idle monitor touched only for this.
    static func names(in path: String) -> [String]? {
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name: String = CString.direntName(entry)
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// pid → process start ticks recorded by session files in the directory.
    private func sessionStarts(in directory: URL, names: [String]) -> [Int: Set<UInt64>] {
        var starts: [Int: Set<UInt64>] = [:]
        for name in names where name.hasSuffix(".session") {
            guard let data = try? Self.file.checkedBytes(at: directory.appendingPathComponent(name).path).get(),
                  let record = try? SessionRecord.decode(from: data),
                  record.hostName == hostName else { continue }
            starts[record.pid, default: []].insert(record.processStartTicks)
        }
        return starts
    }

    /// Whether the process that wrote a report still runs, by ``ProcessLiveness``'s rule: with the
    /// start time the report recorded or, for a report of an older monitor that did not record
    /// one, a start time the session records of that pid in this directory hold.
    private func isRunning(_ process: StallReport.Process, sessions: [Int: Set<UInt64>]) -> Bool {
        if process.pid == Int(getpid()) { return true }
        if process.startTicks == nil, let recorded = sessions[process.pid], !recorded.isEmpty {
            return recorded.contains { ProcessLiveness.isRunning(pid: process.pid, startTicks: $0, executableName: process.executableName) }
        }
        return ProcessLiveness.isRunning(pid: process.pid, startTicks: process.startTicks, executableName: process.executableName)
    }
}
