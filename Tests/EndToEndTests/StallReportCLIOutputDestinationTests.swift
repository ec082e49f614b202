import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `-o` to something that is not a regular file (a FIFO, a device node such as `/dev/null`) is
/// written to in place, never replaced by a rename; a regular file is still replaced atomically.
@Suite("stallreport: output to devices and FIFOs")
struct StallReportCLIOutputDestinationTests {
    let directory: ReportDirectory
    let reports: URL

    init() throws {
        (directory, reports) = try DemoScenario.newDirectory()
    }

    /// The file type bits of `path` (not following links), or nil.
    static func type(_ path: String) -> mode_t? {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    @Test("A FIFO is written to and stays a FIFO", arguments: [["export", "--format", "folded"], ["flamegraph"]])
    func fifo(_ command: [String]) throws {
        let fifo = directory.url.appendingPathComponent("out.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on its own thread: opening a FIFO for reading waits for the writer.
        let received = ReceivedData()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let handle = FileHandle(forReadingAtPath: fifo)
            received.set((try? handle?.readToEnd()) ?? Data())
            try? handle?.close()
            done.signal()
        }
        let run = try StallReportCLI.run(command + [reports.path, "-o", fifo], timeout: 60)
        #expect(run.status == 0, "\(run)")
        #expect(done.wait(timeout: .now() + 120) == .success, "the reader never saw the writer close the FIFO")
        #expect(Self.type(fifo) == S_IFIFO)
        #expect(!received.get().isEmpty)
        let direct = try StallReportCLI.run(command + [reports.path, "-o", "-"])
        #expect(received.get() == Data(direct.stdout.utf8))
    }

    @Test(
        "A private character device node like /dev/null stays a device (as root; skipped otherwise)",
        arguments: [["export", "--format", "folded"], ["export", "--format", "pprof"], ["flamegraph"], ["baseline"]])
    func deviceNode(_ command: [String]) throws {
        let node = directory.url.appendingPathComponent("null").path
        // Major 1, minor 3: the memory driver's null device, made in the test's own directory.
        // not root (or no CAP_MKNOD): skipped
        guard mknod(node, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 else { return }
        let run = try StallReportCLI.run(command + [reports.path, "-o", node])
        #expect(run.status == 0, "\(run)")
        #expect(Self.type(node) == S_IFCHR, "the device node was replaced")
        var st = stat()
        #expect(stat(node, &st) == 0 && st.st_size == 0)
    }

    @Test("A regular file is replaced atomically as before; a new path is created")
    func regularFile() throws {
        let existing = try directory.file("out.txt", "old")
        let run = try StallReportCLI.run(["export", "--format", "folded", reports.path, "-o", existing.path])
        #expect(run.status == 0)
        #expect(Self.type(existing.path) == S_IFREG)
        #expect(String(decoding: try Data(contentsOf: existing), as: UTF8.self) != "old")
        let fresh = directory.url.appendingPathComponent("new.txt").path
        #expect(try StallReportCLI.run(["export", "--format", "folded", reports.path, "-o", fresh]).status == 0)
        #expect(Self.type(fresh) == S_IFREG)
    }
}

/// Data handed from the reader thread to the test.
private final class ReceivedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()

    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
