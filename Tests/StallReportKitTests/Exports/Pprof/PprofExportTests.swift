import Foundation
import StallReportKitTestSupport
import Testing
import ToolSupport

@testable import StallReportKit

@Suite("pprof export")
struct PprofExportTests {
    static let appLoadA: UInt = 0x5555_0000_0000
    static let appLoadB: UInt = 0x5656_0000_0000
    static let libcLoad: UInt = 0x7f00_0000_0000
    static let foundationLoad: UInt = 0x7f10_0000_0000

    /// The two stalls of ``ProfileFixtures`` with frame addresses inside their images: `spin`
    /// (pid 4242, App at `appLoadA`; 8 stack + 2 none samples of 12.5 ms) and `wait` (pid 5151,
    /// App at `appLoadB`; 4 stack + 3 syscall samples of 10 ms, its `App.wait()` frame unnamed).
    static func stalls() -> [PprofStall] {
        func placed(_ report: StallReport, appLoad: UInt) -> StallReport {
            var report = report
            report.images[0].loadAddress = ReportCoding.formatAddress(appLoad)
            report.images[0].loadBias = ReportCoding.formatAddress(appLoad)
            let loads = [appLoad, libcLoad, foundationLoad]
            for index in report.frames.indices {
                let image = report.frames[index].image!
                report.frames[index].address = ReportCoding.formatAddress(loads[image] + 0x2040 + UInt(index) * 0x40)
            }
            return report
        }
        let spin = placed(ProfileFixtures.report(["App.spin()", "App.tick()"], stack: 8, none: 2), appLoad: appLoadA)
        var wait = placed(
            ProfileFixtures.report(
                ["App.wait()", "App.tick()"], stack: 4, syscall: 3, intervalMs: 10,
                startedAt: Date(timeIntervalSince1970: 1_772_366_460), pid: 5151, tid: 5152), appLoad: appLoadB)
        wait.frames[1].symbol = nil
        wait.frames[1].file = nil
        wait.frames[1].line = nil
        return [PprofStall(report: spin, path: "/r/spin.json"), PprofStall(report: wait, path: "/r/wait.json")]
    }

    static func decode(
        _ stalls: [PprofStall], layouts: @escaping PprofExport.ImageLayouts = { _ in nil }
    ) throws -> DecodedPprof {
        try DecodedPprof(PprofExport.encode(stalls, comment: "test export", layouts: layouts))
    }

    @Test("String table: \"\" first, no duplicates; value types, period, times and comment")
    func header() throws {
        let profile = try Self.decode(Self.stalls())
        #expect(profile.strings.first == "")
        #expect(Set(profile.strings).count == profile.strings.count)
        #expect(profile.sampleTypes.map { "\($0.type)/\($0.unit)" } == ["samples/count", "wall/nanoseconds"])
        #expect(profile.periodType.map { "\($0.type)/\($0.unit)" } == "wall/nanoseconds")
        #expect(profile.defaultSampleType == "wall")
        #expect(profile.period == 12_500_000)  // 10 samples of 12.5 ms against 7 of 10 ms
        #expect(profile.timeNanos == 1_772_366_400 * 1_000_000_000)
        #expect(profile.durationNanos == 61_000_000_000)  // second stall starts 60 s later and lasts 1 s
        #expect(profile.comments == ["test export"])
    }

    @Test("Samples: one per report sample, weighted by the interval in ns, with the stall's labels")
    func samples() throws {
        let stalls = Self.stalls()
        let profile = try Self.decode(stalls)
        #expect(profile.samples.count == 17)
        #expect(
            profile.samples.map(\.values) == Array(repeating: [1, 12_500_000], count: 10)
                + Array(repeating: [1, 10_000_000], count: 7))
        #expect(profile.samples.reduce(0) { $0 + $1.values[1] } == Int64(ProfileFixtures.sampledMs * 1_000_000))
        let first = profile.samples[0]
        #expect(first.string("loop") == "runLoop")
        #expect(first.string("thread") == "main")
        #expect(first.number("thread_id") == 4243)
        #expect(first.number("pid") == 4242)
        #expect(first.string("stall_id") == stalls[0].id)
        #expect(first.string("fingerprint") == stalls[0].fingerprint)
        #expect(first.string("classification") == "cpu")
        #expect(first.string("syscall") == nil)
        let last = profile.samples[16]
        #expect(last.string("stall_id") == stalls[1].id)
        #expect(last.number("thread_id") == 5152)
        #expect(last.string("syscall") == "nanosleep")
        // Leaf first: the leaf frame is __lll_lock_wait, the root CFRunLoopRunSpecific.
        #expect(
            first.locationIDs.compactMap(profile.functionName(ofLocation:)) == [
                "__lll_lock_wait", "App.spin()", "App.tick()", "__CFRunLoopDoTimer", "CFRunLoopRunSpecific",
            ])
        // Samples without a full stack, as in the other exports.
        #expect(profile.samples[8].locationIDs.compactMap(profile.functionName(ofLocation:)) == ["[no stack]"])
        #expect(
            last.locationIDs.compactMap(profile.functionName(ofLocation:)) == [
                "__lll_lock_wait", "[syscall nanosleep, not unwound]",
            ])
        let synthetic = try #require(
            profile.locations.first { profile.functionName(ofLocation: $0.id) == "[no stack]" })
        #expect(synthetic.mappingID == 0 && synthetic.address == 0)
    }

    @Test(
        "Mappings: one per (path, build ID, load address), main executables first, build IDs, every location inside its mapping"
    )
    func mappings() throws {
        let profile = try Self.decode(Self.stalls())
        #expect(
            profile.mappings.map(\.filename) == [
                "/work/app/.build/debug/App", "/work/app/.build/debug/App",
                "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/swift/linux/libFoundation.so",
            ])
        #expect(profile.mappings.map(\.buildID) == ["9f1c0ffee", "9f1c0ffee", "c0ffee01", ""])
        #expect(profile.mappings.map(\.id) == [1, 2, 3, 4])
        // Without the file: from the load address, file offset 0, to the page after the last address.
        let app = profile.mappings[0]
        #expect(app.start == UInt64(Self.appLoadA) && app.offset == 0 && app.limit == UInt64(Self.appLoadA) + 0x3000)
        #expect(profile.mappings[1].start == UInt64(Self.appLoadB))
        #expect(app.hasFunctions && app.hasFilenames && app.hasLineNumbers && !app.hasInlineFrames)
        #expect(profile.mappings[3].hasFunctions && !profile.mappings[3].hasFilenames)
        for location in profile.locations where location.mappingID != 0 {
            let mapping = try #require(profile.mappings.first { $0.id == location.mappingID })
            #expect(
                mapping.start <= location.address && location.address < mapping.limit,
                "location \(location.id) outside mapping \(mapping.id)")
        }
        // One location per (mapping, address): 5 frames of the first stall, the second stall's 2 App
        // frames (its libc and Foundation frames are at the same addresses in the same mappings),
        // 2 synthetic.
        #expect(profile.locations.count == 9)
        #expect(Set(profile.locations.map(\.id)) == Set(1...9))
    }

    @Test("Functions: deduplicated by name and file, with file and line; an unnamed frame's location has no line")
    func functions() throws {
        let profile = try Self.decode(Self.stalls())
        let tick = profile.functions.filter { $0.name == "App.tick()" }
        #expect(tick.count == 1)
        #expect(tick.first?.systemName == "App.tick()")
        #expect(tick.first?.filename == ReportFixtures.appFile)
        let spin = try #require(profile.functions.first { $0.name == "App.spin()" })
        let spinLocation = try #require(profile.locations.first { $0.lines.first?.functionID == spin.id })
        #expect(spinLocation.lines.map(\.line) == [40])
        #expect(spinLocation.mappingID == 1)
        #expect(profile.functions.first { $0.name == "__lll_lock_wait" }?.filename == "")
        // The second stall's App.wait() frame has no name: a bare address in the second App mapping.
        let unnamed = profile.locations.filter { $0.lines.isEmpty }
        #expect(unnamed.count == 1)
        #expect(unnamed.first?.mappingID == 2)
        #expect(unnamed.first?.address == UInt64(Self.appLoadB) + 0x2040 + 0x40)
        #expect(Set(profile.functions.map(\.id)).count == profile.functions.count)
    }

    @Test("With the ELF file at hand, the mapping is its executable segment with the segment's file offset")
    func mappingFromSegments() throws {
        let layout = ELFLoadSegments.Layout(
            buildID: "9f1c0ffee",
            segments: [
                .init(fileOffset: 0, virtualAddress: 0, memorySize: 0x1000, isExecutable: false),
                .init(fileOffset: 0x1000, virtualAddress: 0x2000, memorySize: 0x3000, isExecutable: true),
                .init(fileOffset: 0x4000, virtualAddress: 0x6000, memorySize: 0x800, isExecutable: false),
            ])
        let profile = try Self.decode(Self.stalls()) { image in image.buildID == "9f1c0ffee" ? layout : nil }
        let app = profile.mappings[0]
        #expect(app.start == UInt64(Self.appLoadA) + 0x2000)
        #expect(app.limit == UInt64(Self.appLoadA) + 0x5000)
        #expect(app.offset == 0x1000)
        // An address maps to file offset address - start + offset = address - bias - 0x1000.
        let location = try #require(profile.locations.first { $0.mappingID == 1 })
        #expect(location.address - app.start + app.offset == location.address - UInt64(Self.appLoadA) - 0x1000)
        // Addresses outside every executable segment: the whole image.
        let outside = PprofMappingRange.derive(
            loadAddress: 0x10000, bias: 0x10000, addresses: [0x10000 + 0x6100], layout: layout)
        #expect(outside == PprofMappingRange(start: 0x10000, limit: 0x10000 + 0x7000, fileOffset: 0))
    }

    @Test("The file is gzip: magic bytes, and gzip -d gives back the encoded profile")
    func gzip() throws {
        let stalls = Self.stalls()
        let data = try PprofExport.render(stalls, layouts: { _ in nil })
        #expect(Array(data.prefix(3)) == [0x1f, 0x8b, 0x08])
        let (status, decompressed) = try runFilter("/bin/sh", ["-c", "exec gzip -dc"], input: data)
        #expect(status == 0)
        #expect(Array(decompressed) == PprofExport.encode(stalls, layouts: { _ in nil }))
        // Large, barely compressible input crosses several output chunks.
        var generator = SystemRandomNumberGenerator()
        let random = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let compressed = try Gzip.compress(random)
        #expect(compressed.count > Gzip.chunkSize)
    }

    @Test("Protobuf encoding: varints, negative int64, packed fields, proto3 defaults left out")
    func wire() throws {
        var writer = ProtobufWriter()
        writer.uint64(1, 300)
        writer.int64(2, -1)
        writer.uint64(3, 0)
        writer.packedUInt64(4, [1, 150])
        writer.string(5, "")
        #expect(
            writer.bytes == [0x08, 0xAC, 0x02, 0x10] + Array(repeating: 0xFF, count: 9) + [
                0x01, 0x22, 0x03, 0x01, 0x96, 0x01, 0x2A, 0x00,
            ])
    }

    @Test("ELF load segments of this test binary: the executable segment and the build ID")
    func elfSegments() throws {
        let path = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let layout = try #require(ELFLoadSegments.read(path: path))
        #expect(layout.buildID == ELFBuildID.read(path: path))
        #expect(layout.segments.contains { $0.isExecutable && $0.memorySize > 0 })
        #expect(ELFLoadSegments.read(path: "/proc/self/status") == nil)
    }
}
