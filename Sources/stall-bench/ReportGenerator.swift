import Foundation
import StallReportKit
import ToolSupport

/// Makes many realistic reports from a few real ones: each copy of a real report gets a new id,
/// fingerprint, duration and start time, and keeps everything else (samples, frames, images).
/// The template is encoded once; copies splice the new values into the encoded bytes.
struct ReportGenerator {
    /// One real report, encoded, cut where the varying values go.
    struct Template {
        var pieces: [Data]
        var order: [Field]
    }

    enum Field { case id, fingerprint, duration, startedAt }

    let templates: [Template]
    let fingerprints: [String]

    private static let idMark = "@@ID-MARK@@"
    private static let fingerprintMark = "@@FINGERPRINT-MARK@@"
    private static let durationMark = 987654.125
    private static let dateMark = Date(timeIntervalSince1970: 1_234_567_890.123)

    /// Templates from the reports in `directory`; `fingerprintCount` distinct fingerprints.
    init(templatesIn directory: URL, fingerprintCount: Int) throws {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
        guard !files.isEmpty else { throw BenchError("no reports in \(directory.path) to copy") }
        templates = try files.map { file in
            var report = try StallReport.read(from: file)
            report.id = Self.idMark
            report.fingerprint = Self.fingerprintMark
            report.durationMs = Self.durationMark
            report.startedAt = Self.dateMark
            // Encoded as the monitor writes its files.
            return try Self.cut(report.fileData())
        }
        var random = SplitMix64(seed: 0xf1a9)
        fingerprints = (0..<fingerprintCount).map { _ in
            let hex = String(random.next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
    }

    private static func cut(_ data: Data) throws -> Template {
        let marks: [(Field, String)] = [
            (.id, "\"\(idMark)\""), (.fingerprint, "\"\(fingerprintMark)\""),
            (.duration, "\(durationMark)"), (.startedAt, "\"\(ReportCoding.formatDate(dateMark))\""),
        ]
        var found: [(Range<Data.Index>, Field)] = []
        for (field, mark) in marks {
            guard let range = data.range(of: Data(mark.utf8)) else {
                throw BenchError("template: \(mark) not found in the encoded report")
            }
            found.append((range, field))
        }
        found.sort { $0.0.lowerBound < $1.0.lowerBound }
        var pieces: [Data] = []
        var position = data.startIndex
        for (range, _) in found {
            pieces.append(data[position..<range.lowerBound])
            position = range.upperBound
        }
        pieces.append(data[position...])
        return Template(pieces: pieces, order: found.map(\.1))
    }

    /// Writes `count` reports into `directory`; returns the bytes written.
    func write(count: Int, into directory: URL, seed: UInt64 = 1) throws -> Int {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var random = SplitMix64(seed: seed)
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        var bytes = 0
        for index in 0..<count {
            let template = templates[index % templates.count]
            // Skewed: a few fingerprints are common, most are rare.
            let fingerprint = fingerprints[Int(pow(random.uniform(0...0.999_999), 3) * Double(fingerprints.count))]
            let duration = (250 * exp(random.uniform(0...log(20.0))) * 1_000).rounded() / 1_000
            let startedAt = start.addingTimeInterval(Double(index) * 26 + random.uniform(0...20))
            var data = Data()
            data.reserveCapacity(template.pieces.reduce(0) { $0 + $1.count } + 64)
            for (piece, field) in zip(template.pieces, template.order) {
                data.append(piece)
                switch field {
                case .id: data.append(contentsOf: Array("\"\(uuid(&random))\"".utf8))
                case .fingerprint: data.append(contentsOf: Array("\"\(fingerprint)\"".utf8))
                case .duration: data.append(contentsOf: Array("\(duration)".utf8))
                case .startedAt: data.append(contentsOf: Array("\"\(ReportCoding.formatDate(startedAt))\"".utf8))
                }
            }
            data.append(template.pieces.last!)
            let name = String(format: "stall-gen-%07d.json", index)
            try data.write(to: directory.appendingPathComponent(name))
            bytes += data.count
        }
        return bytes
    }

    private func uuid(_ random: inout SplitMix64) -> String {
        let high = random.next()
        let low = random.next()
        var bytes: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString
    }
}
