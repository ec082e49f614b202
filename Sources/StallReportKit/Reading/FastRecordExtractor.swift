import Foundation

/// Reduces the JSON bytes of a report straight to a ``StallRecord``, without building the report.
///
/// It walks the whole document once and checks everything the full decoder checks (JSON grammar,
/// UTF-8, every required key of every object and its type, duplicate keys, the schema's value
/// ranges and table indices), materialising only the few strings a record needs. It is
/// conservative: whatever it does not accept with certainty (a problem, or merely something
/// unusual such as an exponent in an integer, `-0`, a NUL escape, a date in another ISO 8601
/// form that does not parse) throws ``FastPathMiss``, and the caller decodes the file with the
/// full decoder, whose result and error messages are the reference. Keys may come in any order,
/// unknown keys are skipped (validated), and older reports without the newer optional keys read.
struct FastRecordExtractor {
    /// Nesting limit for skipped (unknown) values.
    var depthLimit: Int
    /// Reused between files: byte offset of each frame object, indices of the representative stack.
    private var frameOffsets: [Int] = []
    private var representative: [Int] = []

    init(depthLimit: Int) {
        self.depthLimit = depthLimit
        frameOffsets.reserveCapacity(256)
        representative.reserveCapacity(64)
    }

    private static func names(_ list: [String]) -> KeyTable { KeyTable(list) }

    // The keys of each object the fast path reads, in the order its switches number them; a
    // trailing `?` marks an optional key (``KeyTable``), which must agree with the report's
    // JSON Schema and model (FastRecordExtractorSchemaTests, SchemaModelAgreementTests).
    private static let topKeys = names([
        "schemaVersion", "id", "fingerprint", "status", "startedAt", "durationMs", "thresholdMs", "classification",
        "mainThreadCPUMs", "cpuObservedMs", "loop", "process", "sampling", "samples", "representativeStack", "frames",
        "images", "symbolication", "tags?", "scene?", "processStoppedMs?", "machineSuspendedMs?", "rateLimited?",
        "omittedSamples?", "kind?", "representativeAsyncCallers?",
    ])
    private static let loopKeys = names([
        "kind", "threadName", "threadID", "isMainThread", "mode?", "passes", "longestPassMs", "armingProblems?",
    ])
    private static let processKeys = names([
        "pid", "executableName", "executablePath", "appVersion?", "hostName", "os", "osVersion", "architecture",
        "startTicks?",
    ])
    private static let samplingKeys = names([
        "unwinder", "unwinderNote?", "intervalMs", "effectiveIntervalMs", "maxSamples", "attempted", "taken",
        "timedOut", "skipped", "thinned", "dropped",
    ])
    private static let sampleKeys = names([
        "offsetMs", "kind", "threadState", "syscall?", "note?", "frames", "truncated?", "unwinder?", "interrupted?",
    ])
    private static let frameKeys = names([
        "address", "image?", "symbol?", "offset?", "file?", "line?", "inApp", "monitor?",
    ])
    private static let imageKeys = names(["path", "loadAddress", "loadBias", "buildID?", "isMainExecutable"])
    private static let symbolicationKeys = names(["symbolicator", "note?"])

    /// The key tables by the schema object they read (`""`: the report itself, otherwise the
    /// report's property holding the object or array of objects), with the bits of their required
    /// keys: a test checks them against `Reports/stall-report.schema.json`, so a field added to the
    /// schema cannot be missed here.
    package static var keyTables: [String: (keys: [String], required: UInt64)] {
        func strings(_ table: KeyTable) -> [String] { table.names.map { String(decoding: $0, as: UTF8.self) } }
        let tables: [String: KeyTable] = [
            "": topKeys, "loop": loopKeys, "process": processKeys, "sampling": samplingKeys, "samples": sampleKeys,
            "frames": frameKeys, "images": imageKeys, "symbolication": symbolicationKeys,
        ]
        return tables.mapValues { (strings($0), $0.required) }
    }

    /// Marks key `index` as seen; a key seen twice is a miss (decoders differ on duplicates).
    @inline(__always) private static func see(_ index: Int, _ seen: inout UInt64) throws(FastPathMiss) {
        let bit: UInt64 = 1 << UInt64(index)
        guard seen & bit == 0 else { throw FastPathMiss() }
        seen |= bit
    }

    /// Runs `member` with the index in `keys` of each key of an object, known keys once each (a key
    /// seen twice is a miss), unknown keys skipped; a miss too when a required key of `keys` is absent.
    @inline(__always) private static func forEachKnownMember(
        _ cursor: inout JSONByteCursor, in keys: KeyTable,
        _ member: (inout JSONByteCursor, Int) throws(FastPathMiss) -> Void
    ) throws(FastPathMiss) {
        var seen: UInt64 = 0
        try cursor.forEachMember { cursor, key throws(FastPathMiss) in
            guard let index = try cursor.keyIndex(key, in: keys) else { return try cursor.skipValue() }
            try see(index, &seen)
            try member(&cursor, index)
        }
        guard seen & keys.required == keys.required else { throw FastPathMiss() }
    }

    @inline(__always) private static func optionalString(_ cursor: inout JSONByteCursor) throws(FastPathMiss) -> String?
    {
        try cursor.takeNull() ? nil : cursor.string()
    }

    @inline(__always) private static func skipOptionalString(_ cursor: inout JSONByteCursor) throws(FastPathMiss) {
        if try !cursor.takeNull() { _ = try cursor.stringSpan() }
    }

    /// The record of the report in `bytes`, read from `path`.
    mutating func record(from bytes: UnsafeRawBufferPointer, path: String) throws(FastPathMiss) -> StallRecord {
        var cursor = try JSONByteCursor(bytes, depthLimit: depthLimit)
        frameOffsets.removeAll(keepingCapacity: true)
        representative.removeAll(keepingCapacity: true)
        var fingerprint = ""
        var status = ""
        var startedAt = Date(timeIntervalSince1970: 0)
        var durationMs = 0.0
        var classification = ""
        var loopKind = ""
        var threadName = ""
        var process = ProcessFacts()
        var syscall: String?
        var scene: String?
        var rateLimited = false
        var imageCount = 0
        var asyncCallerIndices: [Int] = []
        var largestFrameReference = -1
        var largestImageReference = -1
        var frameOffsets = self.frameOffsets
        var representative = self.representative
        defer {
            self.frameOffsets = frameOffsets
            self.representative = representative
        }
        guard cursor.peek() == UInt8(ascii: "{") else { throw FastPathMiss() }
        try Self.forEachKnownMember(&cursor, in: Self.topKeys) {
            cursor, index throws(FastPathMiss) in
            switch index {
            case 0: guard try cursor.int() == StallReport.currentSchemaVersion else { throw FastPathMiss() }
            case 1: _ = try cursor.stringSpan()
            case 2: fingerprint = try cursor.string()
            case 3: status = try cursor.string()
            case 4: startedAt = try Self.date(cursor.string())
            case 5: durationMs = try cursor.double()
            case 6: _ = try cursor.double(positive: true)
            case 7: classification = try cursor.string()
            case 8, 9: _ = try cursor.double()
            case 10: (loopKind, threadName) = try Self.loop(&cursor)
            case 11: process = try Self.process(&cursor)
            case 12: try Self.sampling(&cursor)
            case 13:
                try cursor.forEachElement { cursor throws(FastPathMiss) in
                    let found = try Self.sample(&cursor, largestFrameReference: &largestFrameReference)
                    if syscall == nil { syscall = found }
                }
            case 14:
                try cursor.forEachElement { cursor throws(FastPathMiss) in
                    let frame = try cursor.int()
                    representative.append(frame)
                    largestFrameReference = max(largestFrameReference, frame)
                }
            case 15:
                try cursor.forEachElement { cursor throws(FastPathMiss) in
                    _ = cursor.peek()
                    frameOffsets.append(cursor.position)
                    _ = try Self.frame(&cursor, extract: false, largestImageReference: &largestImageReference)
                }
            case 16:
                try cursor.forEachElement { cursor throws(FastPathMiss) in
                    try Self.image(&cursor)
                    imageCount += 1
                }
            case 17: try Self.symbolication(&cursor)
            case 18:
                if try !cursor.takeNull() {
                    try cursor.forEachMember { cursor, _ throws(FastPathMiss) in _ = try cursor.stringSpan() }
                }
            case 19: scene = try Self.optionalString(&cursor)
            case 20, 21: if try !cursor.takeNull() { _ = try cursor.double() }
            case 22: rateLimited = try cursor.takeNull() ? false : cursor.bool()
            case 23: if try !cursor.takeNull() { _ = try cursor.int() }
            case 25:
                if try !cursor.takeNull() {
                    try cursor.forEachElement { cursor throws(FastPathMiss) in
                        let frame = try cursor.int()
                        asyncCallerIndices.append(frame)
                        largestFrameReference = max(largestFrameReference, frame)
                    }
                }
            default:
                // `kind` is read by the version probe: anything but a string or null fails it there.
                try Self.skipOptionalString(&cursor)
            }
        }
        guard cursor.peek() == 0, largestFrameReference < frameOffsets.count, largestImageReference < imageCount else {
            throw FastPathMiss()
        }

        var frames: [StackFrameSummary] = []
        frames.reserveCapacity(representative.count)
        for index in representative {
            cursor.position = frameOffsets[index]
            var ignored = -1
            if let frame = try Self.frame(&cursor, extract: true, largestImageReference: &ignored) {
                frames.append(frame)
            }
        }
        let app = frames.filter(\.inApp)
        let stack = Array((app.isEmpty ? frames : app).prefix(StackFrameSummary.defaultLimit))
        var asyncCallers: [StackFrameSummary] = []
        for index in asyncCallerIndices where asyncCallers.count < StackFrameSummary.defaultLimit {
            cursor.position = frameOffsets[index]
            var ignored = -1
            if let frame = try Self.frame(&cursor, extract: true, largestImageReference: &ignored), frame.inApp,
                !AsyncCallerNames.isThunk(frame.symbol)
            {
                asyncCallers.append(frame)
            }
        }
        let effective = StaleStatus.effectiveStatus(
            status: StallStatus(rawValue: status), hostName: process.hostName, pid: process.pid,
            startTicks: process.startTicks,
            executableName: process.executableName)
        return StallRecord(
            fingerprint: fingerprint, durationMs: durationMs, startedAt: startedAt, status: effective,
            classification: StallClassification(rawValue: classification), path: path, stack: stack, syscall: syscall,
            scene: scene,
            rateLimited: rateLimited, hostName: process.hostName, pid: process.pid, loop: "\(loopKind) \(threadName)",
            asyncCallers: asyncCallers)
    }

    private struct ProcessFacts {
        var pid = 0
        var executableName = ""
        var hostName = ""
        var startTicks: UInt64?
    }

    private static func loop(_ cursor: inout JSONByteCursor) throws(FastPathMiss) -> (String, String) {
        var kind = ""
        var threadName = ""
        try forEachKnownMember(&cursor, in: loopKeys) { cursor, index throws(FastPathMiss) in
            switch index {
            case 0: kind = try cursor.string()
            case 1: threadName = try cursor.string()
            case 2: _ = try cursor.int(minimum: 1)
            case 3: _ = try cursor.bool()
            case 4: try skipOptionalString(&cursor)
            case 5: _ = try cursor.int()
            case 6: _ = try cursor.double()
            default:
                if try !cursor.takeNull() {
                    try cursor.forEachElement { cursor throws(FastPathMiss) in _ = try cursor.stringSpan() }
                }
            }
        }
        return (kind, threadName)
    }

    private static func process(_ cursor: inout JSONByteCursor) throws(FastPathMiss) -> ProcessFacts {
        var facts = ProcessFacts()
        try forEachKnownMember(&cursor, in: processKeys) {
            cursor, index throws(FastPathMiss) in
            switch index {
            case 0: facts.pid = try cursor.int(minimum: 1)
            case 1: facts.executableName = try cursor.string()
            case 4: facts.hostName = try cursor.string()
            case 3: try skipOptionalString(&cursor)
            case 8: facts.startTicks = try cursor.takeNull() ? nil : cursor.uint64()
            default: _ = try cursor.stringSpan()
            }
        }
        return facts
    }

    private static func sampling(_ cursor: inout JSONByteCursor) throws(FastPathMiss) {
        try forEachKnownMember(&cursor, in: samplingKeys) {
            cursor, index throws(FastPathMiss) in
            switch index {
            case 0: _ = try cursor.stringSpan()
            case 1: try skipOptionalString(&cursor)
            case 2, 3: _ = try cursor.double(positive: true)
            case 4: _ = try cursor.int(minimum: 1)
            case 8:
                var keys: [JSONStringSpan] = []
                try cursor.forEachMember { cursor, key throws(FastPathMiss) in
                    // Escaped or duplicate keys in a dictionary: leave to the full decoder.
                    guard !key.hasEscapes, !keys.contains(where: { cursor.sameBytes($0, key) }) else {
                        throw FastPathMiss()
                    }
                    keys.append(key)
                    _ = try cursor.int()
                }
            case 9: _ = try cursor.bool()
            default: _ = try cursor.int()
            }
        }
    }

    /// Passes one sample; returns its syscall, if any.
    private static func sample(
        _ cursor: inout JSONByteCursor, largestFrameReference: inout Int
    ) throws(FastPathMiss) -> String? {
        var syscall: String?
        var largest = largestFrameReference
        try forEachKnownMember(&cursor, in: sampleKeys) {
            cursor, index throws(FastPathMiss) in
            switch index {
            case 0: _ = try cursor.double()
            case 1, 2: _ = try cursor.stringSpan()
            case 3: syscall = try optionalString(&cursor)
            case 4, 7: try skipOptionalString(&cursor)
            case 5:
                try cursor.forEachElement { cursor throws(FastPathMiss) in largest = max(largest, try cursor.int()) }
            default: if try !cursor.takeNull() { _ = try cursor.bool() }
            }
        }
        largestFrameReference = largest
        return syscall
    }

    /// Passes one frame; with `extract`, returns its summary.
    private static func frame(
        _ cursor: inout JSONByteCursor, extract: Bool, largestImageReference: inout Int
    ) throws(FastPathMiss) -> StackFrameSummary? {
        var address: JSONStringSpan?
        var symbol: JSONStringSpan?
        var file: JSONStringSpan?
        var line: Int?
        var inApp = false
        var largest = largestImageReference
        try forEachKnownMember(&cursor, in: frameKeys) { cursor, index throws(FastPathMiss) in
            switch index {
            case 0: address = try cursor.stringSpan()
            case 1: if try !cursor.takeNull() { largest = max(largest, try cursor.int()) }
            case 2: symbol = try cursor.takeNull() ? nil : cursor.stringSpan()
            case 3: if try !cursor.takeNull() { _ = try cursor.int() }
            case 4: file = try cursor.takeNull() ? nil : cursor.stringSpan()
            case 5: line = try cursor.takeNull() ? nil : cursor.int(minimum: 1)
            case 6: inApp = try cursor.bool()
            default: if try !cursor.takeNull() { _ = try cursor.bool() }
            }
        }
        guard let address else { throw FastPathMiss() }
        largestImageReference = largest
        guard extract else { return nil }
        let symbolText = try symbol.map { span throws(FastPathMiss) in try cursor.value(of: span) }
        let name: String
        if let symbolText, !symbolText.isEmpty { name = symbolText } else { name = try cursor.value(of: address) }
        return StackFrameSummary(
            symbol: name, file: try file.map { span throws(FastPathMiss) in try cursor.value(of: span) }, line: line,
            inApp: inApp)
    }

    private static func image(_ cursor: inout JSONByteCursor) throws(FastPathMiss) {
        try forEachKnownMember(&cursor, in: imageKeys) { cursor, index throws(FastPathMiss) in
            switch index {
            case 3: try skipOptionalString(&cursor)
            case 4: _ = try cursor.bool()
            default: _ = try cursor.stringSpan()
            }
        }
    }

    private static func symbolication(_ cursor: inout JSONByteCursor) throws(FastPathMiss) {
        try forEachKnownMember(&cursor, in: symbolicationKeys) {
            cursor, index throws(FastPathMiss) in
            if index == 0 { _ = try cursor.stringSpan() } else { try skipOptionalString(&cursor) }
        }
    }

    /// The date, parsed by the full decoder's own function (``ReportCoding/parseDate(_:)``, whose
    /// writer's-form path does no Foundation work), so both paths give the very same `Date`.
    static func date(_ text: String) throws(FastPathMiss) -> Date {
        guard let date = ReportCoding.parseDate(text) else { throw FastPathMiss() }
        return date
    }
}
