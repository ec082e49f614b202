import Foundation

/// Builds a ``PprofProfile`` from stalls: the string table, mappings, locations and functions,
/// each deduplicated, and one sample per report sample.
///
/// - Strings: one entry per distinct string, "" at index 0.
/// - Mappings: one per distinct (image path, build ID, load address) that a sampled frame lies
///   in (another process loads the same file elsewhere), main executables first (pprof expects
///   the main binary at `mapping[0]`); ranges per ``PprofMappingRange``. `has_functions`,
///   `has_filenames` and `has_line_numbers` say whether the mapping's locations carry function
///   names, files and lines: true when at least one does, as pprof's own symbolizer sets them.
///   pprof reads any of them as "already symbolized" and otherwise symbolizes the mapping from
///   the file, replacing every line of its locations; true only when all were named would make
///   it throw away the report's names (pprof does not demangle Swift) for one unnamed address.
/// - Locations: one per distinct (mapping, address), with one `Line` when the report named the
///   frame (none otherwise, so a backend can symbolize the address). A frame outside every known
///   image (or outside its mapping's range) gets a location without a mapping. The synthetic
///   frames of samples without a full stack (`[no stack]`, `[syscall NAME, not unwound]`, as in
///   the other exports) are locations without mapping or address whose line names them.
/// - Functions: one per distinct (name, file).
struct PprofProfileBuilder {
    /// Where the layout of an image file comes from.
    let layouts: PprofExport.ImageLayouts
    /// How function names are shown.
    let names: FrameNameStyle

    var profile = PprofProfile()
    private var strings: [String: Int64] = ["": 0]
    private var functionIDs: [FunctionKey: UInt64] = [:]
    private var locationIndex: [LocationKey: Int] = [:]
    private var mappingIDs: [MappingKey: UInt64] = [:]
    private var mappingRanges: [UInt64: PprofMappingRange] = [:]
    private var mappingCoverage: [UInt64: (functions: Bool, files: Bool, lines: Bool)] = [:]

    struct MappingKey: Hashable {
        var path: String
        var buildID: String?
        var loadAddress: UInt64
    }

    private struct FunctionKey: Hashable {
        var name: String
        var file: String?
    }

    private enum LocationKey: Hashable {
        case address(mapping: UInt64, address: UInt64)
        case synthetic(String)
    }

    init(layouts: @escaping PprofExport.ImageLayouts, names: FrameNameStyle = .simplified) {
        self.names = names
        self.layouts = layouts
    }

    /// The profile of `stalls`, in the order given.
    mutating func build(_ stalls: [PprofStall], comment: String?) -> PprofProfile {
        setValueTypes(count: "samples", weight: "wall")
        addMappings(stalls)
        let keys = LabelKeys(builder: &self)
        for stall in stalls {
            let weight = Self.nanoseconds(stall.intervalMs)
            let common = keys.labels(of: stall, builder: &self)
            // Locations of each frame table entry, made once per report.
            var frameLocations: [UInt64?] = Array(repeating: nil, count: stall.frames.count)
            // Samples repeat few stacks: equal ones share one location list (up to a bound), and
            // all share one values array.
            var knownIDs: [SampleStackKey: [UInt64]] = [:]
            let values: [Int64] = [1, weight]
            for sample in stall.samples {
                var labels = common
                if let syscall = sample.syscall { labels.append(.init(key: string("syscall"), str: string(syscall))) }
                let key = SampleStackKey(kind: sample.kind, frames: sample.frameIndices, syscall: sample.syscall)
                if let ids = knownIDs[key] {
                    profile.append(.init(locationIDs: ids, values: values, labels: labels))
                    continue
                }
                var ids: [UInt64] = []
                ids.reserveCapacity(sample.frameIndices.count + 1)
                for index in sample.frameIndices where stall.frames.indices.contains(index) {
                    if let known = frameLocations[index] {
                        ids.append(known)
                    } else {
                        let id = location(of: stall.frames[index], in: stall)
                        frameLocations[index] = id
                        ids.append(id)
                    }
                }
                switch sample.kind {
                case .stack:
                    if ids.isEmpty { ids = [syntheticLocation(ProfileFrame.noStack.name)] }
                case .syscall:
                    ids.append(syntheticLocation(ProfileFrame.syscall(sample.syscall).name))
                default:  // .none, or a kind a newer monitor wrote: a sample without a stack
                    ids = [syntheticLocation(ProfileFrame.noStack.name)]
                }
                if knownIDs.count < 4096 { knownIDs[key] = ids }
                profile.append(.init(locationIDs: ids, values: values, labels: labels))
            }
        }
        for index in profile.mappings.indices {
            let coverage = mappingCoverage[profile.mappings[index].id] ?? (false, false, false)
            profile.mappings[index].hasFunctions = coverage.functions
            profile.mappings[index].hasFilenames = coverage.files
            profile.mappings[index].hasLineNumbers = coverage.lines
        }
        profile.period = Self.period(of: stalls)
        return finish(spans: stalls.map { ($0.startedAt, $0.durationMs) }, comment: comment)
    }

    /// Sets the two value types of every sample, `<count>`/`count` and `<weight>`/`nanoseconds`,
    /// the second the default and the `period_type`.
    mutating func setValueTypes(count: String, weight: String) {
        let countType = PprofProfile.ValueType(type: string(count), unit: string("count"))
        let weightType = PprofProfile.ValueType(type: string(weight), unit: string("nanoseconds"))
        profile.setSampleTypes([countType, weightType])
        profile.periodType = weightType
        profile.defaultSampleType = weightType.type
    }

    /// Sets the times (`time_nanos`: the first span's start; `duration_nanos`: from then to the
    /// last span's end) and the comment, and hands the profile over (not shared: encoding it then
    /// appends to the samples' bytes in place).
    mutating func finish(spans: [(start: Date, durationMs: Double)], comment: String?) -> PprofProfile {
        if let first = spans.map(\.start).min() {
            let end =
                spans.map { $0.start.addingTimeInterval(($0.durationMs.isFinite ? max(0, $0.durationMs) : 0) / 1000) }
                .max() ?? first
            profile.timeNanos = Self.nanoseconds(first.timeIntervalSince1970 * 1000)
            profile.durationNanos = Self.nanoseconds(end.timeIntervalSince(first) * 1000)
        }
        if let comment { profile.comments = [string(comment)] }
        var built = PprofProfile()
        swap(&built, &profile)
        return built
    }

    /// The string's index in the table, adding it when new.
    mutating func string(_ value: String) -> Int64 {
        if let known = strings[value] { return known }
        let index = Int64(profile.stringTable.count)
        profile.stringTable.append(value)
        strings[value] = index
        return index
    }

    /// Milliseconds as whole nanoseconds (0 for values that are not finite or not positive).
    static func nanoseconds(_ milliseconds: Double) -> Int64 {
        guard milliseconds.isFinite, milliseconds > 0 else { return 0 }
        let value = (milliseconds * 1_000_000).rounded()
        return value >= Double(Int64.max) ? Int64.max : Int64(value)
    }

    /// The most common sample weight in nanoseconds (the smaller one on a tie); 0 without stalls.
    static func period(of stalls: [PprofStall]) -> Int64 {
        var counts: [Int64: Int] = [:]
        for stall in stalls where !stall.samples.isEmpty {
            counts[nanoseconds(stall.intervalMs), default: 0] += stall.samples.count
        }
        return counts.max { a, b in a.value != b.value ? a.value < b.value : a.key > b.key }?.key ?? 0
    }

    /// The image a frame lies in, with its parsed addresses; nil when unknown or unparsable.
    static func image(
        of frame: StallReport.Frame, in stall: PprofStall
    ) -> (key: MappingKey, bias: UInt64, image: StallReport.Image)? {
        guard let index = frame.image, stall.images.indices.contains(index) else { return nil }
        let image = stall.images[index]
        guard let load = ReportCoding.parseAddress(image.loadAddress),
            let bias = ReportCoding.parseAddress(image.loadBias)
        else { return nil }
        return (MappingKey(path: image.path, buildID: image.buildID, loadAddress: UInt64(load)), UInt64(bias), image)
    }

    /// One mapping per distinct image key that a sampled frame lies in.
    private mutating func addMappings(_ stalls: [PprofStall]) {
        var order: [MappingKey] = []
        var found: [MappingKey: (bias: UInt64, image: StallReport.Image, addresses: Set<UInt64>)] = [:]
        for stall in stalls {
            // Which frame table entries the samples use (without an array of every index used).
            var used = Array(repeating: false, count: stall.frames.count)
            for sample in stall.samples {
                for index in sample.frameIndices where used.indices.contains(index) { used[index] = true }
            }
            for index in used.indices where used[index] {
                let frame = stall.frames[index]
                guard let (key, bias, image) = Self.image(of: frame, in: stall),
                    let address = ReportCoding.parseAddress(frame.address)
                else { continue }
                if found[key] == nil {
                    order.append(key)
                    found[key] = (bias, image, [])
                }
                found[key]!.addresses.insert(UInt64(address))
            }
        }
        // Main executables first, otherwise in order of first appearance (stable sort).
        let sorted = order.enumerated().sorted { a, b in
            let mainA = found[a.element]!.image.isMainExecutable
            let mainB = found[b.element]!.image.isMainExecutable
            return mainA != mainB ? mainA : a.offset < b.offset
        }.map(\.element)
        var layoutCache: [String: ELFLoadSegments.Layout?] = [:]
        for key in sorted {
            let entry = found[key]!
            let cacheKey = key.path + "\u{0}" + (key.buildID ?? "")
            let layout: ELFLoadSegments.Layout?
            if let cached = layoutCache[cacheKey] {
                layout = cached
            } else {
                layout = layouts(entry.image)
                layoutCache[cacheKey] = layout
            }
            let range = PprofMappingRange.derive(
                loadAddress: key.loadAddress, bias: entry.bias, addresses: Array(entry.addresses), layout: layout)
            // An image none of whose addresses lie in it (a damaged report) gets no mapping.
            guard entry.addresses.contains(where: range.contains) else { continue }
            let id = UInt64(profile.mappings.count + 1)
            mappingIDs[key] = id
            mappingRanges[id] = range
            profile.mappings.append(
                .init(
                    id: id, memoryStart: range.start, memoryLimit: range.limit, fileOffset: range.fileOffset,
                    filename: string(key.path), buildID: string(key.buildID ?? ""),
                    hasFunctions: false, hasFilenames: false, hasLineNumbers: false, hasInlineFrames: false))
        }
    }

    /// The location of a report frame, created when new.
    private mutating func location(of frame: StallReport.Frame, in stall: PprofStall) -> UInt64 {
        let address = ReportCoding.parseAddress(frame.address).map(UInt64.init) ?? 0
        var mappingID: UInt64 = 0
        if let (key, _, _) = Self.image(of: frame, in: stall), let id = mappingIDs[key],
            mappingRanges[id]?.contains(address) == true
        {
            mappingID = id
        }
        return location(
            address: address, mappingID: mappingID, symbol: frame.symbol, file: frame.file, line: frame.line)
    }

    /// The location of `address` in mapping `mappingID` (0: none), named `symbol` when known,
    /// created when new.
    mutating func location(address: UInt64, mappingID: UInt64, symbol: String?, file: String?, line: Int?) -> UInt64 {
        let symbol = symbol.flatMap { $0.isEmpty ? nil : $0 }
        let key = LocationKey.address(mapping: mappingID, address: address)
        if let index = locationIndex[key] {
            // The same address may be named in one report and not in another: keep the name.
            if profile.locations[index].lines.isEmpty, let symbol {
                profile.locations[index].lines = [self.line(symbol, file: file, line: line)]
                noteCoverage(mappingID, named: true, file: file != nil, line: line != nil)
            }
            return profile.locations[index].id
        }
        let lines = symbol.map { [self.line($0, file: file, line: line)] } ?? []
        let id = UInt64(profile.locations.count + 1)
        locationIndex[key] = profile.locations.count
        profile.locations.append(.init(id: id, mappingID: mappingID, address: address, lines: lines))
        noteCoverage(
            mappingID, named: symbol != nil, file: symbol != nil && file != nil, line: symbol != nil && line != nil)
        return id
    }

    /// Notes that a location of `mapping` carries a function name, a file or a line.
    private mutating func noteCoverage(_ mapping: UInt64, named: Bool, file: Bool, line: Bool) {
        guard mapping != 0 else { return }
        var coverage = mappingCoverage[mapping] ?? (false, false, false)
        coverage.functions = coverage.functions || named
        coverage.files = coverage.files || file
        coverage.lines = coverage.lines || line
        mappingCoverage[mapping] = coverage
    }

    /// A location for a synthetic frame: no mapping, no address, a line naming it.
    mutating func syntheticLocation(_ name: String) -> UInt64 {
        let key = LocationKey.synthetic(name)
        if let index = locationIndex[key] { return profile.locations[index].id }
        let id = UInt64(profile.locations.count + 1)
        locationIndex[key] = profile.locations.count
        profile.locations.append(.init(id: id, mappingID: 0, address: 0, lines: [line(name, file: nil, line: nil)]))
        return id
    }

    private mutating func line(_ symbol: String, file: String?, line: Int?) -> PprofProfile.Line {
        PprofProfile.Line(functionID: function(symbol, file: file), line: Int64(max(0, line ?? 0)))
    }

    private mutating func function(_ symbol: String, file: String?) -> UInt64 {
        let key = FunctionKey(name: symbol, file: file)
        if let known = functionIDs[key] { return known }
        let names = PprofFunctionNames.names(forSymbol: symbol, style: self.names)
        let id = UInt64(profile.functions.count + 1)
        profile.functions.append(
            .init(
                id: id, name: string(names.display), systemName: string(names.system),
                filename: file.map { string($0) } ?? 0, startLine: 0))
        functionIDs[key] = id
        return id
    }

    /// The label keys, interned once.
    private struct LabelKeys {
        let loop, thread, threadID, pid, stallID, fingerprint, classification: Int64

        init(builder: inout PprofProfileBuilder) {
            loop = builder.string("loop")
            thread = builder.string("thread")
            threadID = builder.string("thread_id")
            pid = builder.string("pid")
            stallID = builder.string("stall_id")
            fingerprint = builder.string("fingerprint")
            classification = builder.string("classification")
        }

        /// The labels every sample of `stall` carries.
        func labels(of stall: PprofStall, builder: inout PprofProfileBuilder) -> [PprofProfile.Label] {
            [
                .init(key: loop, str: builder.string(stall.loopKind)),
                .init(key: thread, str: builder.string(stall.threadName)),
                .init(key: threadID, num: Int64(stall.threadID)),
                .init(key: pid, num: Int64(stall.pid)),
                .init(key: stallID, str: builder.string(stall.id)),
                .init(key: fingerprint, str: builder.string(stall.fingerprint)),
                .init(key: classification, str: builder.string(stall.classification.rawValue)),
            ]
        }
    }
}

/// What a pprof sample's location list is made of.
private struct SampleStackKey: Hashable {
    var kind: StallReport.Sample.Kind
    var frames: FrameIndices
    var syscall: String?
}
