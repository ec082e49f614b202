import Foundation
import Glibc
import StallMonitor
import StallReportKit
import StallReportKitTestSupport
import Testing

@Suite("Reports against the JSON Schema", .serialized)
struct SchemaValidationTests {
    static let schema = PackageRoot.url.appendingPathComponent("Reports/stall-report.schema.json")

    @Test(
        "real reports (interrupted and sleeping full stacks, no stack) validate against Reports/stall-report.schema.json"
    )
    func reportsValidate() throws {
        try withMonitoredLoop(
            "schema",
            configure: { configuration in
                configuration.appVersion = "1.2.3"
                configuration.tags = ["suite": "schema"]
            }
        ) { directory, loop, monitor in
            let signal = monitor.signal

            try loop.run { StallingWork.spinOnCPUForStallTest(milliseconds: 320) }
            #expect(monitor.waitForStalls(1), "\(monitor.statistics)")
            try loop.run { StallingWork.sleepInUsleepForStallTest(microseconds: 320_000) }
            #expect(monitor.waitForStalls(2), "\(monitor.statistics)")
            try loop.run {
                var mask = sigset_t()
                sigemptyset(&mask)
                sigaddset(&mask, signal)
                pthread_sigmask(SIG_BLOCK, &mask, nil)
                StallingWork.spinOnCPUForStallTest(milliseconds: 320)
                pthread_sigmask(SIG_UNBLOCK, &mask, nil)
            }
            #expect(monitor.waitForStalls(3), "\(monitor.statistics)")

            let files = directory.reportFiles()
            try #require(files.count == 3)
            let kinds = Set(try directory.reports().flatMap { $0.samples.map(\.kind) })
            // Full stacks (interrupted and not: the usleep stall is unwound without a signal) and
            // samples without a stack (the masked signal).
            #expect(kinds.isSuperset(of: [.stack, .none]), "\(kinds)")

            try #require(FileManager.default.fileExists(atPath: Self.schema.path), "missing \(Self.schema.path)")
            let result = try runPython(
                """
                import json, sys, jsonschema
                schema = json.load(open(sys.argv[1]))
                jsonschema.validators.validator_for(schema).check_schema(schema)
                validator = jsonschema.validators.validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())
                failed = 0
                for path in sys.argv[2:]:
                    for error in validator.iter_errors(json.load(open(path))):
                        failed += 1
                        print(path, "/".join(str(p) for p in error.absolute_path), error.message)
                sys.exit(1 if failed else 0)
                """,
                arguments: [Self.schema.path] + files.map(\.path))
            #expect(result.status == 0, "\(result.output)")
        }
    }

    @Test("the schema rejects a report with a required key missing (the validator really validates)")
    func schemaRejectsBrokenReport() throws {
        try #require(FileManager.default.fileExists(atPath: Self.schema.path), "missing \(Self.schema.path)")
        let result = try runPython(
            """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            try:
                jsonschema.validate({"schemaVersion": 1, "id": "x"}, schema)
            except jsonschema.ValidationError:
                sys.exit(0)
            sys.exit(1)
            """,
            arguments: [Self.schema.path])
        #expect(result.status == 0, "\(result.output)")
    }
}

/// Runs `python3 -c script arguments…`, waiting at most `timeout`; returns its status and its
/// output (standard output, then standard error).
func runPython(
    _ script: String, arguments: [String], timeout: Duration = .seconds(60)
) throws -> (status: Int32, output: String) {
    let run = try runTool(["python3", "-c", script] + arguments, timeout: timeout)
    return (run.status, run.output + run.errors)
}
