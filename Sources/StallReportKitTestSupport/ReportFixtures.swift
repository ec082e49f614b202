import Foundation
import StallReportKit

/// Realistic reports built in code for the tests of StallReportKit and of the `stallreport` CLI:
/// a system leaf frame, the app's frames with files and lines, then run-loop frames; samples,
/// images and sampling facts as the monitor writes them.
public enum ReportFixtures {
    /// The source file of every app frame of ``report(appSymbols:durationMs:startedAt:status:classification:leaf:syscall:)``.
    public static let appFile = "/work/app/Sources/App/Stalls.swift"

    /// A report whose representative stack has `appSymbols` (leaf first) as the app's frames.
    public static func report(
        appSymbols: [String], durationMs: Double, startedAt: Date = Date(timeIntervalSince1970: 1_772_366_400),
        status: StallStatus = .ended, classification: StallClassification = .cpu, leaf: String? = "__lll_lock_wait",
        syscall: String? = nil
    ) -> StallReport {
        var frames: [StallReport.Frame] = []
        var address: UInt = 0x5555_0000_1000
        func add(_ symbol: String?, file: String?, line: Int?, inApp: Bool, image: Int) {
            frames.append(
                StallReport.Frame(
                    address: ReportCoding.formatAddress(address), image: image, symbol: symbol,
                    offset: 24, file: file, line: line, inApp: inApp))
            address += 0x40
        }
        if let leaf { add(leaf, file: nil, line: nil, inApp: false, image: 1) }
        for (index, symbol) in appSymbols.enumerated() {
            add(symbol, file: appFile, line: 40 + index * 7, inApp: true, image: 0)
        }
        add("__CFRunLoopDoTimer", file: nil, line: nil, inApp: false, image: 2)
        add("CFRunLoopRunSpecific", file: nil, line: nil, inApp: false, image: 2)
        let stack = Array(frames.indices)
        let fingerprint = Fingerprint.make(
            Fingerprint.components(stack: frames, classification: classification, syscall: syscall))
        let samples = stride(from: 0.0, to: durationMs, by: 50).map { offset in
            StallReport.Sample(
                offsetMs: offset, kind: syscall == nil ? .stack : .syscall,
                threadState: classification == .cpu ? "R" : "S",
                syscall: syscall, frames: stack)
        }
        return StallReport(
            id: UUID().uuidString, fingerprint: fingerprint, status: status, startedAt: startedAt,
            durationMs: durationMs, thresholdMs: 250, classification: classification,
            mainThreadCPUMs: classification == .cpu ? durationMs * 0.97 : durationMs * 0.02, cpuObservedMs: durationMs,
            loop: .init(
                kind: "runLoop", threadName: "main", threadID: 4242, isMainThread: true, mode: "kCFRunLoopDefaultMode",
                passes: 1, longestPassMs: durationMs),
            process: .init(
                pid: 4242, executableName: "App", executablePath: "/work/app/.build/debug/App", appVersion: "1.4.2",
                hostName: "ci-runner", os: "Linux", osVersion: "6.1.0-18-amd64", architecture: "x86_64"),
            sampling: .init(
                unwinder: "libunwind", unwinderNote: nil, intervalMs: 10, effectiveIntervalMs: 50, maxSamples: 200,
                attempted: samples.count, taken: samples.count, timedOut: 0, skipped: [:], thinned: false, dropped: 0),
            samples: samples, representativeStack: stack, frames: frames,
            images: [
                .init(
                    path: "/work/app/.build/debug/App", loadAddress: "0x555500000000", loadBias: "0x555500000000",
                    buildID: "9f1c0ffee", isMainExecutable: true),
                .init(
                    path: "/usr/lib/x86_64-linux-gnu/libc.so.6", loadAddress: "0x7f0000000000",
                    loadBias: "0x7f0000000000", buildID: "c0ffee01", isMainExecutable: false),
                .init(
                    path: "/usr/lib/swift/linux/libFoundation.so", loadAddress: "0x7f1000000000",
                    loadBias: "0x7f1000000000", buildID: nil, isMainExecutable: false),
            ],
            symbolication: .init(symbolicator: "libdw", note: nil))
    }

    /// A fresh temporary directory; the caller removes it.
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stallreport-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `report` into `directory` as `name`.
    @discardableResult
    public static func write(_ report: StallReport, to directory: URL, name: String) throws -> URL {
        try write(report.encoded(), to: directory, name: name)
    }

    /// Writes `data` into `directory` as `name`.
    @discardableResult
    public static func write(_ data: Data, to directory: URL, name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// A record, for tests that do not need files.
    public static func record(
        _ fingerprint: String, _ durationMs: Double, at seconds: Double = 0, status: StallStatus = .ended,
        classification: StallClassification = .cpu, path: String? = nil
    ) -> StallRecord {
        StallRecord(
            fingerprint: fingerprint, durationMs: durationMs,
            startedAt: Date(timeIntervalSince1970: 1_772_366_400 + seconds),
            status: status, classification: classification, path: path ?? "/reports/\(fingerprint)-\(durationMs).json",
            stack: [StackFrameSummary(symbol: "App.\(fingerprint)()", file: appFile, line: 10, inApp: true)],
            syscall: nil)
    }

    /// A collection of records.
    public static func collection(_ records: [StallRecord], filter: RecordFilter = RecordFilter()) -> ReportCollection {
        var collection = ReportCollection()
        for record in records { collection.add(record, filter: filter) }
        return collection
    }
}
