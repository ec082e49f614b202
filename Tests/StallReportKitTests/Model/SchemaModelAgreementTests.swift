import Foundation
import StallReportKitTestSupport
import StallReportModel
import Testing

/// The report's keys are described twice, by the Codable model (`StallReport`) and by
/// `Reports/stall-report.schema.json`: these tests fail when the two disagree on a key or on a
/// required flag, at every object of the report. The model's side is read from its own behaviour,
/// never from a list kept here: a report with every key is decoded and encoded again (the keys
/// that come back are the model's), and each key is removed in turn (the model's decoder refuses
/// the report exactly when the key is required).
@Suite("The report model against its JSON Schema")
struct SchemaModelAgreementTests {
    /// A report with every key of every object the model knows (each optional set, each list and
    /// table non-empty): `everyValueIsSet` keeps it so when the model gains a field.
    static let fullReport = """
        {
          "schemaVersion": 1, "id": "0BF81F2B-0A02-4C01-99F1-3254E9819EB1", "fingerprint": "219ed8cfa00ccf73",
          "status": "ended", "startedAt": "2026-11-29T04:00:00.125Z", "durationMs": 500.5, "thresholdMs": 250,
          "classification": "blocked", "mainThreadCPUMs": 2.5, "cpuObservedMs": 380.25,
          "loop": {
            "kind": "concurrencyPool", "threadName": "worker", "threadID": 17, "isMainThread": false,
            "mode": "kCFRunLoopDefaultMode", "passes": 2, "longestPassMs": 500.5, "armingProblems": ["late"]
          },
          "process": {
            "pid": 17, "executableName": "app", "executablePath": "/app", "appVersion": "1.0", "hostName": "vm",
            "os": "Linux", "osVersion": "6.18", "architecture": "x86_64", "startTicks": 1234
          },
          "sampling": {
            "unwinder": "libdw", "unwinderNote": "note", "intervalMs": 50, "effectiveIntervalMs": 50,
            "maxSamples": 20, "attempted": 2, "taken": 1, "timedOut": 0, "skipped": {"sendFailed": 1},
            "thinned": true, "dropped": 1, "asyncCallersNote": "note"
          },
          "samples": [
            {
              "offsetMs": 125.5, "kind": "stack", "threadState": "S", "syscall": "futex", "note": "note",
              "frames": [0, 1], "truncated": true, "unwinder": "libdw", "interrupted": true,
              "asyncCallers": [2], "asyncJobFrames": 1, "asyncJobCallers": 1, "asyncCallersFromJobStart": true
            }
          ],
          "representativeAsyncCallers": [2], "representativeAsyncCallersInJob": 1, "representativeStack": [0, 1],
          "frames": [
            {
              "address": "0x7f45276cb129", "image": 0, "symbol": "wait", "offset": 41, "file": "a.c", "line": 146,
              "inApp": false, "monitor": true
            },
            {"address": "0x560d21c5ab75", "image": 0, "symbol": "App.run()", "offset": 3, "file": "App.swift",
             "line": 34, "inApp": true, "monitor": false},
            {"address": "0x560d21c5ab80", "image": 0, "symbol": "App.caller()", "offset": 0, "file": "App.swift",
             "line": 40, "inApp": true, "monitor": false}
          ],
          "images": [
            {
              "path": "/app", "loadAddress": "0x560d219d2000", "loadBias": "0x560d219d2000", "buildID": "0c403f87",
              "isMainExecutable": true
            }
          ],
          "symbolication": {"symbolicator": "libdw", "note": "note"},
          "tags": {"suite": "schema"}, "scene": "checkout", "processStoppedMs": 1.5,
          "starvation": {
            "waitedMs": 300, "ongoing": true,
            "workers": [{"threadID": 17, "threadName": "worker", "heldMs": 300, "sample": 0}]
          },
          "machineSuspendedMs": 2.5, "rateLimited": true, "omittedSamples": 1
        }
        """

    static func schema() throws -> [String: Any] {
        let url = PackageRoot.url.appendingPathComponent("Reports/stall-report.schema.json")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// The report decoded by the model and encoded again, as JSON objects.
    static func modelRoundTrip() throws -> (report: StallReport, json: [String: Any]) {
        let report = try StallReport.decode(from: Data(fullReport.utf8))
        let encoded = try ReportCoding.makeEncoder(pretty: false).encode(report)
        return (report, try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any]))
    }

    @Test("the full report sets every value the model has (no optional left nil, no list or table empty)")
    func everyValueIsSet() throws {
        let unset = Self.unsetValues(Mirror(reflecting: try Self.modelRoundTrip().report), path: "report")
        #expect(unset.isEmpty, "add these to fullReport (and to the schema if new): \(unset)")
    }

    @Test("every object of the report has the schema's keys, and the schema every key the model writes")
    func keysAgree() throws {
        let json = try Self.modelRoundTrip().json
        var problems: [String] = []
        Self.forEachObject(json, schema: try Self.schema(), path: "report") { object, node, path in
            let properties = Set((node["properties"] as? [String: Any] ?? [:]).keys)
            let keys = Set(object.keys)
            for key in properties.subtracting(keys).sorted() { problems.append("\(path).\(key): in the schema only") }
            for key in keys.subtracting(properties).sorted() { problems.append("\(path).\(key): in the model only") }
        }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("a key is required by the schema exactly when the model's decoder refuses a report without it")
    func requiredFlagsAgree() throws {
        let json = try Self.modelRoundTrip().json
        var problems: [String] = []
        var checked = 0
        Self.forEachObject(json, schema: try Self.schema(), path: "report") { object, node, path in
            let required = Set(node["required"] as? [String] ?? [])
            for key in object.keys.sorted() {
                checked += 1
                let without = Self.removing(key, at: path, from: json)
                let decodes =
                    (try? JSONSerialization.data(withJSONObject: without)).map { data in
                        (try? StallReport.decode(from: data)) != nil
                    } ?? false
                if decodes == required.contains(key) {
                    problems.append(
                        "\(path).\(key): \(decodes ? "optional in the model, required" : "required in the model, optional") in the schema"
                    )
                }
            }
        }
        #expect(checked > 80, "\(checked) keys checked")
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("the checks see a disagreement: a schema that requires an optional key, or lacks a key, is caught")
    func checksFail() throws {
        var schema = try Self.schema()
        var properties = try #require(schema["properties"] as? [String: Any])
        properties["scene"] = nil
        schema["properties"] = properties
        schema["required"] = (schema["required"] as? [String] ?? []) + ["tags"]
        let json = try Self.modelRoundTrip().json
        var missing: [String] = []
        var requiredButOptional: [String] = []
        Self.forEachObject(json, schema: schema, path: "report") { object, node, path in
            guard path == "report" else { return }
            let properties = Set((node["properties"] as? [String: Any] ?? [:]).keys)
            missing = Set(object.keys).subtracting(properties).sorted()
            let required = Set(node["required"] as? [String] ?? [])
            requiredButOptional = required.filter { key in
                let data = try? JSONSerialization.data(withJSONObject: Self.removing(key, at: path, from: json))
                return data.map { (try? StallReport.decode(from: $0)) != nil } ?? false
            }
        }
        #expect(missing == ["scene"])
        #expect(requiredButOptional == ["tags"])
    }

    // MARK: Walking the report and its schema side by side

    /// Calls `body` with each object of `value` (the first element of each array of objects) and
    /// the schema node that describes it.
    static func forEachObject(
        _ value: Any, schema node: [String: Any], path: String,
        _ body: (_ object: [String: Any], _ node: [String: Any], _ path: String) -> Void
    ) {
        if let array = value as? [Any], let items = node["items"] as? [String: Any], let first = array.first {
            forEachObject(first, schema: items, path: path + "[0]", body)
            return
        }
        guard let object = value as? [String: Any], let properties = node["properties"] as? [String: Any] else {
            return
        }
        body(object, node, path)
        for (key, child) in object.sorted(by: { $0.key < $1.key }) {
            guard let childNode = properties[key] as? [String: Any] else { continue }
            forEachObject(child, schema: childNode, path: path + "." + key, body)
        }
    }

    /// `json` without `key` in the object at `path` (as `forEachObject` names it).
    static func removing(_ key: String, at path: String, from json: [String: Any]) -> [String: Any] {
        let steps = path.split(separator: ".").dropFirst().map(String.init)
        func remove(_ value: Any, _ steps: ArraySlice<String>) -> Any {
            guard var object = value as? [String: Any] else { return value }
            guard let step = steps.first else {
                object[key] = nil
                return object
            }
            let name = step.hasSuffix("[0]") ? String(step.dropLast(3)) : step
            guard let child = object[name] else { return object }
            if step.hasSuffix("[0]"), var array = child as? [Any], !array.isEmpty {
                array[0] = remove(array[0], steps.dropFirst())
                object[name] = array
            } else {
                object[name] = remove(child, steps.dropFirst())
            }
            return object
        }
        return remove(json, steps[...]) as? [String: Any] ?? json
    }

    /// The paths of the model's values left nil or empty in `mirror`'s subject.
    static func unsetValues(_ mirror: Mirror, path: String) -> [String] {
        var unset: [String] = []
        for child in mirror.children {
            let childPath = path + "." + (child.label ?? "?")
            let inner = Mirror(reflecting: child.value)
            if inner.displayStyle == .optional {
                guard let some = inner.children.first else {
                    unset.append(childPath)
                    continue
                }
                unset += unsetValues(Mirror(reflecting: some.value), path: childPath)
            } else if inner.displayStyle == .collection || inner.displayStyle == .dictionary {
                if inner.children.isEmpty { unset.append(childPath) }
                if let first = inner.children.first {
                    unset += unsetValues(Mirror(reflecting: first.value), path: childPath + "[0]")
                }
            } else if inner.displayStyle == .struct || inner.displayStyle == .enum {
                unset += unsetValues(inner, path: childPath)
            }
        }
        return unset
    }
}
