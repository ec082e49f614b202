// libFuzzer entry point for the report decoder that `stallreport` uses on every file it reads:
// size and nesting checks, the schema-version probe, and the full Codable decode; and the fast
// path of summaries (FastRecordExtractor), which must agree with it.
// Built by Scripts/fuzz together with the StallReportKit sources (one module, no package).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func stallReportFuzzOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let loader = ReportLoader(maxFileSize: 1 << 20, maxNestingDepth: 512)
    // The fast path of summaries must give the full decoder's record, or leave the input to it.
    var extractor = FastRecordExtractor(depthLimit: 512)
    if count <= 1 << 20, let fast = data.withUnsafeBytes({ try? extractor.record(from: $0, path: "fuzz") }) {
        guard case .success(let report) = loader.load(data: data) else {
            fatalError("the fast path accepted a report the full decoder rejects")
        }
        if fast != StallRecord(report: report, path: "fuzz") {
            fatalError("the fast path's record differs from the full decoder's")
        }
    }
    if case .success(let report) = loader.load(data: data) {
        // Whatever decodes must encode to a fixed point: decoding and encoding the encoding again
        // gives the same bytes (the first encoding may normalize, e.g. dates to milliseconds).
        guard let encoded = try? report.encoded() else { fatalError("a decoded report does not encode") }
        guard case .success(let again) = loader.load(data: encoded) else {
            fatalError("an encoded report does not decode")
        }
        if (try? again.encoded()) != encoded { fatalError("report changed after an encode/decode round trip") }
        _ = StallRecord(report: report, path: "fuzz")
    }
    return 0
}
