import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One worker's reader of report files into ``StallRecord``s: the fast path first
/// (``FastRecordExtractor`` over the bytes, read into a buffer reused from file to file), and the
/// full ``ReportLoader`` for every file the fast path does not accept, so that results and error
/// messages are exactly those of the full decoder. Not shared between threads.
struct FastRecordReader {
    /// The full reader: limits, and the reference for anything unusual.
    let loader: ReportLoader
    private var extractor: FastRecordExtractor
    private var buffer: UnsafeMutableRawBufferPointer
    /// Files read by the fast path, and by the full decoder.
    private(set) var fastCount = 0
    private(set) var fullCount = 0

    init(loader: ReportLoader) {
        self.loader = loader
        extractor = FastRecordExtractor(depthLimit: loader.maxNestingDepth)
        buffer = .allocate(byteCount: 1 << 17, alignment: 16)
    }

    /// Frees the buffer; the reader must not be used afterwards.
    mutating func release() {
        buffer.deallocate()
        buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    /// The record of the report at `path`, or why it could not be read (the full loader's words).
    mutating func record(path: String) -> Result<StallRecord, ReportLoadError> {
        if let size = readFile(path) {
            do {
                let record = try extractor.record(from: UnsafeRawBufferPointer(rebasing: buffer[0..<size]), path: path)
                fastCount += 1
                return .success(record)
            } catch {
                // Not certain: the full decoder decides below.
            }
        }
        fullCount += 1
        return loader.load(path: path).map { StallRecord(report: $0, path: path) }
    }

    /// What ``report(path:skipping:)`` found.
    enum ReportOutcome {
        /// The report, fully decoded.
        case report(StallReport)
        /// A valid report that `skipping` turned down from its record, not decoded further.
        case skipped
        /// Why the file could not be read (the full loader's words).
        case failure(ReportLoadError)
    }

    /// The report at `path`, fully decoded (for readers that need every sample), unless
    /// `skipping` turns it down from its record first; the file is read once either way.
    mutating func report(path: String, skipping: (StallRecord) -> Bool) -> ReportOutcome {
        guard let size = readFile(path) else {
            fullCount += 1
            switch loader.load(path: path) {
            case .success(let report):
                return skipping(StallRecord(report: report, path: path)) ? .skipped : .report(report)
            case .failure(let error): return .failure(error)
            }
        }
        // A buffer grown for a large file is freed once it is read, not kept for the next one.
        defer { if buffer.count > Self.keptBufferSize { resetBuffer() } }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<size])
        if let record = try? extractor.record(from: bytes, path: path) {
            fastCount += 1
            if skipping(record) { return .skipped }
        } else {
            fullCount += 1
        }
        // Decoded from the buffer itself, not a copy of it (the decoder keeps no part of `data`).
        let data = Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: size, deallocator: .none)
        switch loader.load(data: data) {
        case .success(let report): return skipping(StallRecord(report: report, path: path)) ? .skipped : .report(report)
        case .failure(let error): return .failure(error)
        }
    }

    /// The largest buffer kept from one file to the next.
    private static let keptBufferSize = 1 << 24

    /// Replaces the buffer with a new one of the initial size.
    private mutating func resetBuffer() {
        buffer.deallocate()
        buffer = .allocate(byteCount: 1 << 17, alignment: 16)
    }

    /// Reads a regular file within the size limit into the buffer; nil on anything unusual
    /// (the full loader then reads it again and says what is wrong).
    private mutating func readFile(_ path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let expected = Int(st.st_size)
        guard expected > 0, expected <= loader.maxFileSize else { return nil }
        if buffer.count < expected + 1 {
            buffer.deallocate()
            buffer = .allocate(byteCount: max(expected + 1, buffer.count * 2), alignment: 16)
        }
        var size = 0
        while size < buffer.count {
            let count = read(fd, buffer.baseAddress! + size, buffer.count - size)
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            size += count
            // The size fstat gave: done, without another read to see the end (a file still being
            // written is caught by the scanner as truncated, and the full loader reads it again).
            if size == expected { break }
        }
        // Grew while being read, or shrank to nothing: let the full loader deal with it.
        guard size > 0, size < buffer.count, size <= loader.maxFileSize else { return nil }
        return size
    }
}
