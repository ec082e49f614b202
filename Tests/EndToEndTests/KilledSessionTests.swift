import Foundation
import Glibc
import StallReportModel
import Testing

/// A monitored process killed with SIGKILL a few seconds after its start: its session record,
/// never closed, still dates the monitored time within max(1 s, 10 %) of the process's life, by
/// the alive marks written in place between heartbeats.
@Suite("Killed session", .serialized)
struct KilledSessionTests {
    @Test("SIGKILL 3.5 s after the monitor started: the session's monitored time is within 1 s of 3.5 s")
    func killedEarly() throws {
        try withScratchFolder("killed-session") { directory in
            let process = Process()
            process.executableURL = try StallReportCLI.binary(named: "async-main-host")
            process.arguments = ["idle", directory.path, "60"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

            // The record is written at start; its startedAt is the monitor's start.
            var record: SessionRecord?
            let deadline = Date().addingTimeInterval(60)
            while record == nil, Date() < deadline {
                record = Self.sessionRecord(in: directory)
                if record == nil { usleep(20_000) }
            }
            let started = try #require(record, "no session record within 60 s").startedAt
            let killAt = started.addingTimeInterval(3.5)
            if killAt > Date() { usleep(useconds_t(killAt.timeIntervalSinceNow * 1_000_000)) }
            kill(process.processIdentifier, SIGKILL)
            let killed = Date()
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)

            let final = try #require(Self.sessionRecord(in: directory))
            #expect(!final.cleanStop)
            let life = killed.timeIntervalSince(started) * 1_000
            let counted = final.effectiveMonitoredMs
            #expect(counted <= life + 50, "counted \(counted) ms of a \(life) ms life")
            #expect(
                life - counted <= max(1_000, life / 10),
                "counted \(counted) ms of a \(life) ms life (alive marks start 1 s apart)")
            // The accuracy comes from the marks in place: the record itself was written once, at start
            // (the heartbeat rewrites it every 60 s).
            #expect(final.aliveMs != nil)
            #expect(
                final.lastHeartbeatAt.timeIntervalSince(final.startedAt) < 1,
                "rewritten at \(final.lastHeartbeatAt), started \(final.startedAt)")
        }
    }

    private static func sessionRecord(in directory: URL) -> SessionRecord? {
        guard
            let name = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
                .first(where: { SessionRecord.isSessionFileName($0) }),
            let data = try? Data(contentsOf: directory.appendingPathComponent(name))
        else { return nil }
        return try? SessionRecord.decode(from: data)
    }
}
