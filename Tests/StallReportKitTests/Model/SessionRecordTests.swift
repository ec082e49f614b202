import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Session records")
struct SessionRecordTests {
    /// A record as the monitor writes it, with a key this reader does not know.
    static let monitorText = """
        {
          "aliveMs" : "000001799998",
          "appVersion" : "1.4.2",
          "cleanStop" : true,
          "executableName" : "stall-demo",
          "futureKey" : {"nested" : [1, 2]},
          "hostName" : "ci-runner",
          "kind" : "session",
          "lastHeartbeatAt" : "2026-03-01T12:30:00.000Z",
          "monitoredMs" : 1799998.5,
          "pid" : 4242,
          "processStartTicks" : 98765,
          "reportsDropped" : {"deletedForQuota" : 2, "rateLimitedToSummary" : 5},
          "reportsWritten" : 12,
          "schemaVersion" : 1,
          "spans" : 88000,
          "stalls" : 14,
          "startedAt" : "2026-03-01T12:00:00.000Z",
          "stoppedAt" : "2026-03-01T12:30:00.000Z",
          "thresholdMs" : 250
        }
        """

    @Test("A record as the monitor writes it decodes; unknown keys are ignored; it encodes back to the same keys")
    func decode() throws {
        let record = try SessionRecord.decode(from: Data(Self.monitorText.utf8))
        #expect(record.pid == 4242)
        #expect(record.processStartTicks == 98_765)
        #expect(record.executableName == "stall-demo")
        #expect(record.appVersion == "1.4.2")
        #expect(record.cleanStop)
        #expect(record.monitoredMs == 1_799_998.5)
        #expect(record.stoppedAt == SessionFixtures.start.addingTimeInterval(1_800))
        #expect(record.reportsDropped == ["deletedForQuota": 2, "rateLimitedToSummary": 5])
        #expect(record.effectiveMonitoredMs == 1_799_998.5)
        let keys = try #require(try JSONSerialization.jsonObject(with: record.encoded()) as? [String: Any]).keys
        let monitorKeys = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.monitorText.utf8)) as? [String: Any]
        ).keys
        #expect(Set(keys) == Set(monitorKeys).subtracting(["futureKey"]))
        #expect(try SessionRecord.decode(from: record.encoded()) == record)
    }

    @Test("The JSON Schema in Reports/ names exactly the record's keys and requires all but the optional ones")
    func schema() throws {
        let root = PackageRoot.url
        let data = try Data(contentsOf: root.appendingPathComponent("Reports/stall-session.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        let record = try SessionRecord.decode(from: Data(Self.monitorText.utf8))
        let keys = Set(try #require(try JSONSerialization.jsonObject(with: record.encoded()) as? [String: Any]).keys)
        #expect(Set(properties.keys) == keys)
        #expect(Set(schema["required"] as? [String] ?? []) == keys.subtracting(["aliveMs", "appVersion", "stoppedAt"]))
    }

    @Test("Monitored time: monitoredMs after a clean stop, else last heartbeat minus start")
    func monitoredTime() {
        let clean = SessionFixtures.session(pid: 1, minutes: 30)
        #expect(clean.effectiveMonitoredMs == 1_800_000)
        #expect(clean.endedAt == SessionFixtures.start.addingTimeInterval(1_800))
        let crashed = SessionFixtures.session(pid: 1, minutes: 45, clean: false)
        #expect(crashed.monitoredMs == 1_000)
        #expect(crashed.effectiveMonitoredMs == 2_700_000)
        #expect(crashed.endedAt == crashed.lastHeartbeatAt)
        var backwards = crashed
        backwards.lastHeartbeatAt = backwards.startedAt.addingTimeInterval(-5)
        #expect(backwards.effectiveMonitoredMs == 0)
    }

    @Test("A crashed session's alive mark dates it when later than its last heartbeat; a clean stop's monitoredMs wins")
    func aliveMark() {
        var crashed = SessionFixtures.session(pid: 1, minutes: 2, clean: false)
        crashed.aliveMs = AliveMilliseconds(170_500)
        #expect(crashed.effectiveMonitoredMs == 170_500)
        #expect(crashed.endedAt == SessionFixtures.start.addingTimeInterval(170.5))
        crashed.aliveMs = AliveMilliseconds(60_000)  // older than the heartbeat: the heartbeat counts
        #expect(crashed.effectiveMonitoredMs == 120_000)
        #expect(crashed.endedAt == crashed.lastHeartbeatAt)
        var clean = SessionFixtures.session(pid: 1, minutes: 30)
        clean.aliveMs = AliveMilliseconds(1_900_000)
        #expect(clean.effectiveMonitoredMs == 1_800_000)
    }

    @Test(
        "aliveMs: twelve digits; any mix of two values' digits (an overwrite met half done) decodes; other strings are refused"
    )
    func aliveMilliseconds() throws {
        #expect(AliveMilliseconds(42).text == "000000000042")
        #expect(AliveMilliseconds(UInt64.max).value == AliveMilliseconds.largest)
        func decode(_ text: String) throws -> AliveMilliseconds {
            try JSONDecoder().decode(AliveMilliseconds.self, from: Data("\"\(text)\"".utf8))
        }
        let old = Array(AliveMilliseconds(99_999).text.utf8)
        let new = Array(AliveMilliseconds(100_000).text.utf8)
        for cut in 0...AliveMilliseconds.digits {
            let mixed = String(decoding: new[..<cut] + old[cut...], as: UTF8.self)
            #expect(try decode(mixed).text == mixed)
            let reversed = String(decoding: old[..<cut] + new[cut...], as: UTF8.self)
            #expect(try decode(reversed).text == reversed)
        }
        #expect(try decode("7").value == 7)
        for bad in ["", "12a", " 12", "-1", "1e3", "1234567890123456789"] {
            #expect(throws: DecodingError.self, "\(bad)") { try decode(bad) }
        }
    }

    @Test(
        "Broken records: each failure says what is wrong",
        arguments: [
            ("", "session record is empty"),
            ("{\"kind\": \"session\", \"schemaVersion\": 1, \"pid\": 4", "session record is not valid JSON"),
            ("\u{0}\u{1}binary", "session record is not valid JSON: binary data"),
            ("[1, 2]", "not a session record: top level is not a JSON object"),
            ("{\"schemaVersion\": 1, \"kind\": \"report\"}", "not a session record: kind is \"report\""),
            ("{\"schemaVersion\": 1}", "not a session record: no kind \"session\""),
            ("{\"kind\": \"session\"}", "not a session record: no schemaVersion"),
            ("{\"kind\": \"session\", \"schemaVersion\": 2}", "unsupported session schemaVersion 2"),
            ("{\"kind\": \"session\", \"schemaVersion\": 1, \"pid\": 1}", "not a session record: missing key"),
        ])
    func broken(_ text: String, _ expected: String) {
        switch SessionLoader().load(data: Data(text.utf8)) {
        case .success: Issue.record("decoded: \(text)")
        case .failure(let error): #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }

    @Test("Values no monitor writes are refused: negative counts and times")
    func negativeValues() throws {
        var record = SessionFixtures.session(pid: 1, minutes: 1)
        record.stalls = -1
        #expect(throws: SessionReadError.notASession("stalls must be 0 or more")) {
            try SessionRecord.decode(from: record.encoded())
        }
        record = SessionFixtures.session(pid: 1, minutes: 1, dropped: ["reportWrite": -3])
        #expect(throws: SessionReadError.notASession("reportsDropped.reportWrite must be 0 or more")) {
            try SessionRecord.decode(from: record.encoded())
        }
    }

    @Test("Limits: a file above the size limit and JSON nested too deep are refused before decoding")
    func limits() throws {
        let record = try SessionFixtures.session(pid: 1, minutes: 1).encoded()
        guard case .failure(let error) = SessionLoader(maxFileSize: 100).load(data: record), error.code == .read,
            case .tooLarge? = error.fileFailure
        else {
            Issue.record("size limit not applied")
            return
        }
        let deep = Data((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8)
        #expect(SessionLoader().load(data: deep) == .failure(.tooDeep(limit: JSONNesting.defaultLimit)))
    }

    @Test("A process that still runs is recognised by pid and start ticks on this host; a reused pid is not")
    func liveness() throws {
        let pid = Int(ProcessInfo.processInfo.processIdentifier)
        let ticks = try #require(ProcessLiveness.startTicks(pid: pid))
        var record = SessionFixtures.session(
            pid: pid, minutes: 1, clean: false, host: StaleStatus.hostName, ticks: ticks)
        #expect(record.processIsRunning())
        record.processStartTicks = ticks + 1  // same pid, another process
        #expect(!record.processIsRunning())
        record.processStartTicks = ticks
        record.hostName = "another-host"
        #expect(!record.processIsRunning())
        #expect(ProcessLiveness.startTicks(pid: 0) == nil)
    }

    @Test("The scanner finds *.session files next to reports, and a *.session file named on the command line")
    func scanner() throws {
        let directory = try ReportFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try ReportFixtures.write(
            ReportFixtures.report(appSymbols: ["App.spin()"], durationMs: 300), to: directory, name: "r1.json")
        try SessionFixtures.write(
            SessionFixtures.session(pid: 1, minutes: 1).encoded(), to: directory,
            name: "session-20260301T120000.000Z-p1.session")
        let sub = directory.appendingPathComponent("only-sessions")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let named = try SessionFixtures.write(Data("{}".utf8), to: sub, name: "session-b.SESSION")
        try SessionFixtures.write(Data("ignored".utf8), to: sub, name: "notes.txt")

        let scan = ReportScanner().scan([directory.path])
        #expect(scan.files.map { URL(fileURLWithPath: $0).lastPathComponent } == ["r1.json"])
        #expect(
            scan.sessionFiles.map { URL(fileURLWithPath: $0).lastPathComponent } == [
                "session-b.SESSION", "session-20260301T120000.000Z-p1.session",
            ])
        #expect(scan.problems.isEmpty)

        // A directory with session records only is not "empty"; a named *.session file is a session record.
        let onlySessions = ReportScanner().scan([sub.path, named.path])
        #expect(onlySessions.problems.isEmpty)
        #expect(onlySessions.files.isEmpty)
        #expect(onlySessions.sessionFiles == [sub.path + "/session-b.SESSION"])
    }
}
