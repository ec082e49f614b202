import Foundation
import StallReportModel

/// google/pprof's profile format (`proto/profile.proto`), gzip-compressed as pprof files are on
/// disk: read by `go tool pprof`, Pyroscope, Parca and Grafana.
///
/// - Two sample values: `samples`/`count` (1 per sample) and `wall`/`nanoseconds` (the report's
///   effective sampling interval, so the values add up to the sampled time); `wall` is the default
///   and the `period_type`, the most common interval the `period`.
/// - Labels on every sample: `loop` (the loop kind), `thread` (its name), `thread_id` and `pid`
///   (numbers), `stall_id`, `fingerprint`, `classification`, and `syscall` when the sample names one.
/// - `time_nanos` is the first stall's start, `duration_nanos` the time to the last stall's end.
/// - Mappings carry the image's path and GNU build ID, so a backend can symbolize addresses the
///   report left unnamed. See `PprofProfileBuilder` and `PprofMappingRange` for the tables.
public enum PprofExport {
    /// The ELF layout of a report's image file, or nil when it is not at hand (or not the same file).
    package typealias ImageLayouts = @Sendable (StallReport.Image) -> ELFLoadSegments.Layout?

    /// Reads the image's file on this machine, used only when its build ID is the report's.
    package static let localImageLayouts: ImageLayouts = { image in
        guard let buildID = image.buildID, !buildID.isEmpty, let layout = ELFLoadSegments.read(path: image.path),
            layout.buildID == buildID
        else { return nil }
        return layout
    }

    /// The serialized, uncompressed `Profile` message of `stalls` (in the order given).
    package static func encode(
        _ stalls: [PprofStall], comment: String? = nil, names: FrameNameStyle = .simplified,
        layouts: @escaping ImageLayouts = localImageLayouts
    ) -> [UInt8] {
        var builder = PprofProfileBuilder(layouts: layouts, names: names)
        var profile = builder.build(stalls, comment: comment)
        return profile.encoded()
    }

    /// The gzip-compressed profile of `stalls`: the bytes of a `.pb.gz` file. Function names are
    /// shown `names` style (`system_name` always keeps the full name); mappings take the images'
    /// layouts from the files on this machine whose build IDs match.
    public static func render(
        _ stalls: [PprofStall], comment: String? = nil, names: FrameNameStyle = .simplified
    ) throws -> Data {
        try render(stalls, comment: comment, names: names, layouts: localImageLayouts)
    }

    /// The gzip-compressed profile of blocking-calls reports: one sample per call site and report,
    /// valued in calls and in nanoseconds blocked (see `PprofProfileBuilder.build(blockingCalls:comment:)`).
    public static func render(
        blockingCalls reports: [BlockingCallsReport], comment: String? = nil, names: FrameNameStyle = .simplified
    ) throws -> Data {
        var builder = PprofProfileBuilder(layouts: { _ in nil }, names: names)
        var profile = builder.build(blockingCalls: reports, comment: comment)
        return Data(try Gzip.compress(profile.encoded()))
    }

    /// The same, with the images' layouts from `layouts`.
    package static func render(
        _ stalls: [PprofStall], comment: String? = nil, names: FrameNameStyle = .simplified,
        layouts: @escaping ImageLayouts
    ) throws -> Data {
        Data(try Gzip.compress(encode(stalls, comment: comment, names: names, layouts: layouts)))
    }
}
