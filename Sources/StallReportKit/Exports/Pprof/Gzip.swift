import CStallMonitorZlib

/// gzip compression (RFC 1952) with zlib: deflate with zlib's gzip wrapper, as pprof files are
/// stored on disk.
///
/// The header carries no file name and a modification time of 0, so the same input always gives
/// the same bytes. Every zlib return code is checked; a failure is a ``Gzip/Failure`` naming the
/// call and zlib's code and message.
package enum Gzip {
    /// A zlib call that did not succeed.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        /// The zlib function.
        package var call: String
        /// zlib's return code (`Z_…`).
        package var code: Int32
        /// zlib's message, when it gave one.
        package var message: String?

        /// `deflate failed: zlib error -2 (stream error)`.
        package var description: String {
            "gzip compression failed: \(call) returned zlib error \(code)" + (message.map { " (\($0))" } ?? "")
        }
    }

    /// zlib's windowBits for a gzip wrapper: the largest window (15) plus 16.
    static let gzipWindowBits: Int32 = MAX_WBITS + 16
    /// zlib's default memory level (zlib.h documents 8 as the default; DEF_MEM_LEVEL is internal).
    static let memoryLevel: Int32 = 8
    /// Output is produced in pieces of this size.
    static let chunkSize = 64 * 1024

    /// `data` compressed as one gzip member.
    package static func compress(_ data: [UInt8], level: Int32 = Z_DEFAULT_COMPRESSION) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        let initialized = CStallMonitorZlib_deflateInit2(
            &stream, level, Z_DEFLATED, gzipWindowBits, memoryLevel, Z_DEFAULT_STRATEGY)
        guard initialized == Z_OK else { throw failure("deflateInit2", initialized, stream) }
        var output: [UInt8] = []
        output.reserveCapacity(data.count / 4 + 64)
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var result: Result<Void, Failure> = .success(())
        data.withUnsafeBufferPointer { input in
            var consumed = 0
            var finished = false
            while !finished {
                // avail_in is 32 bits: feed larger inputs in pieces, finishing with the last.
                let piece = min(input.count - consumed, Int(UInt32.max))
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress.map { $0 + consumed })
                stream.avail_in = UInt32(piece)
                let flush = consumed + piece == input.count ? Z_FINISH : Z_NO_FLUSH
                repeat {
                    let code: Int32 = chunk.withUnsafeMutableBufferPointer { buffer in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = UInt32(buffer.count)
                        return deflate(&stream, flush)
                    }
                    let produced = chunkSize - Int(stream.avail_out)
                    // Z_BUF_ERROR only means no progress was possible, which cannot happen while
                    // output space is offered; treat it, like any other code, as a failure.
                    guard code == Z_OK || code == Z_STREAM_END else {
                        result = .failure(failure("deflate", code, stream))
                        return
                    }
                    output += chunk[0..<produced]
                    if code == Z_STREAM_END { finished = true }
                } while stream.avail_out == 0 && !finished
                consumed += piece - Int(stream.avail_in)
                if flush != Z_FINISH && stream.avail_in != 0 {
                    result = .failure(Failure(call: "deflate", code: Z_BUF_ERROR, message: "input not consumed"))
                    return
                }
                if flush == Z_FINISH && !finished {
                    // Z_FINISH with output space left must end the stream.
                    result = .failure(Failure(call: "deflate", code: Z_BUF_ERROR, message: "stream did not end"))
                    return
                }
            }
        }
        let ended = deflateEnd(&stream)
        if case .failure(let error) = result { throw error }
        guard ended == Z_OK else { throw failure("deflateEnd", ended, stream) }
        return output
    }

    private static func failure(_ call: String, _ code: Int32, _ stream: z_stream) -> Failure {
        Failure(call: call, code: code, message: stream.msg.map { String(cString: $0) })
    }
}
