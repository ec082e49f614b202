import Foundation
import StallReportKitTestSupport
import Testing

/// Validates JSON files against the schemas in `Reports/` with Python's `jsonschema` (an
/// independent implementation of JSON Schema, draft 2020-12, with format checks).
enum SchemaValidation {
    /// The repository root.
    static var root: URL { PackageRoot.url }

    /// Validates every stall report (`*.json`) in `directory` against `stall-report.schema.json`;
    /// there must be at least one.
    static func validate(directory: URL) throws {
        try validate(schema: "stall-report.schema.json", files: directory.path + "/*.json", expected: nil)
    }

    /// Validates the files matching the glob `pattern` against `Reports/<schema>`; with `expected`,
    /// exactly that many files must match, else at least one.
    static func validate(schema: String, files pattern: String, expected: Int?) throws {
        let script = """
            import glob, json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
            files = sorted(glob.glob(sys.argv[2]))
            bad = 0
            for name in files:
                for error in validator.iter_errors(json.load(open(name))):
                    bad += 1
                    print(name, "/".join(map(str, error.absolute_path)), error.message)
            print("validated", len(files))
            expected = int(sys.argv[3])
            sys.exit(1 if bad or not files or (expected >= 0 and len(files) != expected) else 0)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script, root.appendingPathComponent("Reports/\(schema)").path, pattern,
            "\(expected ?? -1)",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "schema validation failed:\n\(String(decoding: data, as: UTF8.self))")
    }
}
