import Foundation
import StallReportKitTestSupport
import Testing

@testable import StallReportKit

@Suite("Gate config, baseline and suppressions files")
struct ConfigFileTests {
    let directory: URL

    init() throws {
        directory = try ReportFixtures.temporaryDirectory()
    }

    private func file(_ name: String, _ text: String) throws -> String {
        try ReportFixtures.write(Data(text.utf8), to: directory, name: name).path
    }

    @Test("Every key is read, comments are ignored, relative paths resolve against the file")
    func config() throws {
        let path = try file(
            "gate.json",
            """
            {"_comment": "budgets", "maxStalls": 5, "maxStallsPerFingerprint": 2, "maxStallMs": 2000, "maxP95Ms": 800,
             "maxTotalStallMs": 6000, "ignoreShorterThanMs": 300, "baseline": "stall-baseline.json",
             "suppressions": "/etc/s.json", "tolerance": 0.5, "minOccurrences": 3}
            """)
        let config = try GateConfig.load(path: path)
        #expect(
            config
                == GateConfig(
                    maxStalls: 5, maxStallsPerFingerprint: 2, maxStallMs: 2_000, maxP95Ms: 800, maxTotalStallMs: 6_000,
                    ignoreShorterThanMs: 300, baseline: directory.path + "/stall-baseline.json",
                    suppressions: "/etc/s.json", tolerance: 0.5, minOccurrences: 3))
        let merged = config.merging(GateConfig(maxStalls: 1, tolerance: 0.1))
        #expect(merged.maxStalls == 1 && merged.tolerance == 0.1 && merged.maxP95Ms == 800)
    }

    @Test("The example config in Reports/ is valid and sets every key")
    func example() throws {
        let root = PackageRoot.url
        let path = root.appendingPathComponent("Reports/stallreport-gate.example.json").path
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(Set(object.keys.filter { !$0.hasPrefix("_") }) == GateConfig.knownKeys)
        _ = try GateConfig.load(path: path)
        _ = try SuppressionList.load(
            path: root.appendingPathComponent("Reports/stallreport-suppressions.example.json").path)
        _ = try Baseline.load(path: root.appendingPathComponent("Reports/stallreport-baseline.example.json").path)
    }

    @Test("Typos, wrong types, bad values and non-objects are errors that name the problem")
    func configErrors() throws {
        #expect(throws: ConfigFileError.self) { try GateConfig.load(path: try file("a.json", #"{"maxStall": 3}"#)) }
        do {
            _ = try GateConfig.load(path: try file("b.json", #"{"maxStall": 3, "maxStalls": 1}"#))
            Issue.record("unknown key accepted")
        } catch let error as ConfigFileError {
            #expect(error.message.hasPrefix("unknown key 'maxStall' in gate config"))
        } catch {
            Issue.record(error)
        }
        for (text, expected) in [
            (#"{"maxStalls": "three"}"#, "gate config: wrong type at maxStalls"),
            (#"{"tolerance": -1}"#, "tolerance must be 0 or more (0.25 means 25 %)"),
            (#"{"minOccurrences": 0}"#, "minOccurrences must be 1 or more"),
            ("[1]", "gate config must be a JSON object"),
            ("", "gate config file is empty"),
        ] {
            do {
                _ = try GateConfig.load(path: try file("c.json", text))
                Issue.record("accepted \(text)")
            } catch let error as ConfigFileError {
                #expect(error.message == expected)
            } catch {
                Issue.record(error)
            }
        }
    }

    @Test("Suppressions need a date, a reason and unique fingerprints")
    func suppressionErrors() throws {
        let good = try SuppressionList.load(
            path: try file("s.json", #"{"suppressions":[{"fingerprint":"a","reason":"APP-1","expires":"2026-06-30"}]}"#)
        )
        #expect(good.suppressions.first?.expiryInstant == ReportCoding.parseDate("2026-07-01T00:00:00Z"))
        for (text, fragment) in [
            (#"{"suppressions":[{"fingerprint":"a","reason":"r","expires":"soon"}]}"#, "is not a date"),
            (#"{"suppressions":[{"fingerprint":"a","expires":"2026-01-01"}]}"#, "missing key 'reason'"),
            (#"{"suppressions":[{"fingerprint":"a","reason":" ","expires":"2026-01-01"}]}"#, "must not be empty"),
            (
                #"{"suppressions":[{"fingerprint":"a","reason":"r","expires":"2026-01-01"},{"fingerprint":"a","reason":"r","expires":"2026-01-01"}]}"#,
                "listed twice"
            ),
        ] {
            do {
                _ = try SuppressionList.load(path: try file("t.json", text))
                Issue.record("accepted \(text)")
            } catch let error as ConfigFileError {
                #expect(error.message.contains(fragment))
            } catch {
                Issue.record(error)
            }
        }
    }

    @Test("A baseline round-trips through its file; other files are refused")
    func baselineFile() throws {
        let stats = ReportFixtures.collection([
            ReportFixtures.record("b", 300), ReportFixtures.record("a", 500), ReportFixtures.record("a", 700),
        ]).stats()
        let baseline = Baseline(stats: stats, createdAt: Date(timeIntervalSince1970: 1_772_366_400))
        #expect(baseline.fingerprints.map(\.fingerprint) == ["a", "b"])
        #expect(
            baseline.fingerprints[0]
                == Baseline.Entry(
                    fingerprint: "a", count: 2, p50Ms: 500, p95Ms: 700, maxMs: 700, totalMs: 1_200, topFrame: "App.a()")
        )
        let path = directory.appendingPathComponent("baseline.json").path
        try baseline.encoded().write(to: URL(fileURLWithPath: path))
        #expect(try Baseline.load(path: path) == baseline)
        do {
            _ = try Baseline.load(
                path: try file(
                    "v9.json",
                    #"{"baselineVersion":9,"createdAt":"2026-01-01T00:00:00Z","reports":0,"fingerprints":[]}"#))
            Issue.record("accepted version 9")
        } catch let error as ConfigFileError {
            #expect(error.message == "unsupported baselineVersion 9 (this tool reads 1)")
        } catch {
            Issue.record(error)
        }
        #expect(throws: ConfigFileError.self) {
            try Baseline.load(path: directory.appendingPathComponent("missing.json").path)
        }
    }
}
