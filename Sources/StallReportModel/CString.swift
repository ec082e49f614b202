#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decoding of C strings: NUL-terminated buffers, fixed-size `char` arrays imported as tuples,
/// and `errno` messages. Shared by the monitor and the readers.
package enum CString {
    /// The UTF-8 text before the first NUL of `buffer`.
    package static func decode(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBytes { decode(bytes: $0) }
    }

    /// The UTF-8 text before the first NUL of a fixed-size C array (imported as a tuple), such as
    /// `utsname.release` or `dirent.d_name`.
    package static func decode<Array>(fixed array: Array) -> String {
        withUnsafeBytes(of: array) { decode(bytes: $0) }
    }

    /// The UTF-8 text before the first NUL of `bytes` (all of them when there is none).
    package static func decode(bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The system's message for error number `code` (`strerror`).
    package static func errorMessage(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
