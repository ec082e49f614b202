import Foundation
import StallReportModel

/// The session record as the bytes `ReportCoding.makeEncoder()` writes for it (pretty, sorted
/// keys, slashes unescaped), built by hand: the monitor writes the record at start and on every
/// heartbeat, and `JSONEncoder` was the biggest part of the Foundation code an idle monitor
/// touched (about 0.2 MiB of code pages in a host that does not encode JSON itself). A test
/// checks the bytes against `JSONEncoder` for every field.
enum SessionRecordJSON {
    static func encode(_ record: SessionRecord) -> [UInt8] {
        var out = JSONText()
        out.open()
        if let aliveMs = record.aliveMs {
            out.key("aliveMs")
            out.string(aliveMs.text)
        }
        if let appVersion = record.appVersion {
            out.key("appVersion")
            out.string(appVersion)
        }
        out.key("cleanStop")
        out.raw(record.cleanStop ? "true" : "false")
        out.key("executableName")
        out.string(record.executableName)
        out.key("hostName")
        out.string(record.hostName)
        out.key("kind")
        out.string(record.kind)
        out.key("lastHeartbeatAt")
        out.string(ReportCoding.formatDate(record.lastHeartbeatAt))
        out.key("monitoredMs")
        out.double(record.monitoredMs)
        out.key("pid")
        out.raw(String(record.pid))
        out.key("processStartTicks")
        out.raw(String(record.processStartTicks))
        out.key("reportsDropped")
        out.open()
        for (reason, count) in record.reportsDropped.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        {
            out.key(reason)
            out.raw(String(count))
        }
        out.close()
        out.key("reportsWritten")
        out.raw(String(record.reportsWritten))
        out.key("schemaVersion")
        out.raw(String(record.schemaVersion))
        out.key("spans")
        out.raw(String(record.spans))
        out.key("stalls")
        out.raw(String(record.stalls))
        out.key("startedAt")
        out.string(ReportCoding.formatDate(record.startedAt))
        if let stoppedAt = record.stoppedAt {
            out.key("stoppedAt")
            out.string(ReportCoding.formatDate(stoppedAt))
        }
        out.key("thresholdMs")
        out.double(record.thresholdMs)
        out.close()
        return out.bytes
    }

    /// Where the digits of `aliveMs` start in `bytes` (written by ``encode(_:)``), nil when the
    /// record has none. The key cannot appear elsewhere: quotes inside string values are escaped.
    static func aliveDigitsOffset(in bytes: [UInt8]) -> Int? {
        let key = Array("\"aliveMs\" : \"".utf8)
        guard bytes.count >= key.count else { return nil }
        for start in 0...(bytes.count - key.count) where bytes[start..<(start + key.count)].elementsEqual(key) {
            let digits = start + key.count
            return digits + AliveMilliseconds.digits < bytes.count ? digits : nil
        }
        return nil
    }
}

/// Pretty-printed JSON objects in `JSONEncoder`'s layout: two spaces per level, `"key" : value`,
/// an empty object as `{`, blank line, `}`.
private struct JSONText {
    var bytes: [UInt8] = []
    /// Members written so far in each open object.
    private var members: [Int] = []

    init() {
        bytes.reserveCapacity(512)
    }

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        members.append(0)
    }

    mutating func close() {
        let count = members.removeLast()
        bytes.append(UInt8(ascii: "\n"))
        if count == 0 { bytes.append(UInt8(ascii: "\n")) }
        indent()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func key(_ name: String) {
        if members[members.count - 1] > 0 { bytes.append(UInt8(ascii: ",")) }
        members[members.count - 1] += 1
        bytes.append(UInt8(ascii: "\n"))
        indent()
        string(name)
        bytes.append(contentsOf: " : ".utf8)
    }

    private mutating func indent() {
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * members.count))
    }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Finite numbers as `JSONEncoder` writes them (``JSONScalarText/double(_:)``).
    mutating func double(_ value: Double) {
        raw(JSONScalarText.double(value))
    }

    mutating func string(_ text: String) {
        JSONScalarText.appendString(text, to: &bytes)
    }
}
