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
        let folder = store.folder
        // The directory is listed with `readdir` (``ReportFolder/names()``): the sweep runs at every
        // start, usually over a directory with nothing to mark.
        guard let names = folder.names().map({ Array($0.sorted()) }) else { return 0 }
        // No report: the session records need not be read (decoding them was JSONDecoder's code).
        guard names.contains(where: ReportFileName.isReport) else { return 0 }
        let sessions = sessionStarts(in: folder, names: names)
        var marked = 0
        for name in names where ReportFileName.isReport(name) {
            // The cheap filter first: the nesting check and decoding only for inProgress reports.
            guard let data = try? Self.file.bytes(at: folder.path(of: name)).get(),
                StallStatus.inProgress.isMentioned(in: data),
                (try? Self.file.check(data).get()) != nil,
                var report = try? StallReport.decode(from: data),
                report.status == .inProgress, writerIsGone(report.process, sessions: sessions)
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

    /// pid → process start ticks recorded by session files (``SessionRecord/isSessionFileName(_:)``)
    /// of this host in the directory.
    private func sessionStarts(in folder: ReportFolder, names: [String]) -> [Int: Set<UInt64>] {
        var starts: [Int: Set<UInt64>] = [:]
        for name in names where SessionRecord.isSessionFileName(name) {
            guard let data = try? Self.file.checkedBytes(at: folder.path(of: name)).get(),
                let record = try? SessionRecord.decode(from: data),
                record.hostName == hostName
            else { continue }
            starts[record.pid, default: []].insert(record.processStartTicks)
        }
        return starts
    }

    /// Whether the process that wrote a report ran on this host and runs no more, by
    /// ``WriterLiveness``'s rule: with the start time the report recorded or, for a report of an
    /// older monitor that did not record one, a start time the session records of that pid in this
    /// directory hold. This process's own reports are never stale.
    private func writerIsGone(_ process: StallReport.Process, sessions: [Int: Set<UInt64>]) -> Bool {
        if process.pid == Int(getpid()) { return false }
        func state(_ ticks: UInt64?) -> WriterLiveness.State {
            WriterLiveness.state(
                hostName: process.hostName, pid: process.pid, startTicks: ticks,
                executableName: process.executableName, localHost: hostName)
        }
        if process.startTicks == nil, let recorded = sessions[process.pid], !recorded.isEmpty {
            return recorded.allSatisfy { state($0) == .gone }
        }
        return state(process.startTicks) == .gone
    }
}
