import Foundation
import StallReportModel
import Testing

@testable import StallMonitor

/// The session record's alive mark: `aliveMs` overwritten in place in the very file last written.
@Suite("Session alive mark")
struct SessionAliveMarkTests {
    private static func record(alive: UInt64) -> SessionRecord {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        return SessionRecord(
            pid: 7, processStartTicks: 1, hostName: "h", executableName: "e", startedAt: start,
            lastHeartbeatAt: start, aliveMs: AliveMilliseconds(alive), cleanStop: false, monitoredMs: 0,
            thresholdMs: 250, spans: 0, stalls: 0, reportsWritten: 0)
    }

    private static func read(_ path: String) throws -> SessionRecord {
        try SessionRecord.decode(from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test(
        "a mark overwrites the digits of the file written; after the name is replaced, the replacement is left alone; after close, nothing is written"
    )
    func marksTheFileWritten() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("alive-mark-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("session-1.session").path
        let bytes = SessionRecordJSON.encode(Self.record(alive: 5))
        let descriptor = try #require(try AtomicFileWriter.write(bytes: bytes, to: path, keepingOpen: true))
        let mark = SessionAliveMark()
        mark.retarget(descriptor: descriptor, offset: SessionRecordJSON.aliveDigitsOffset(in: bytes))

        #expect(mark.mark(AliveMilliseconds(123_456)))
        #expect(try Self.read(path).aliveMs == AliveMilliseconds(123_456))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: path)).count == bytes.count, "overwritten in place, not grown")

        // Someone replaces the name: the mark goes to the file it was given, never to the new one.
        let replacement = SessionRecordJSON.encode(Self.record(alive: 1))
        try AtomicFileWriter.write(bytes: replacement, to: path)
        #expect(mark.mark(AliveMilliseconds(200_000)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(replacement))

        mark.close()
        #expect(!mark.mark(AliveMilliseconds(300_000)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(replacement))
    }
}
