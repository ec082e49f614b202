import Foundation

/// A cheap pre-check of JSON nesting depth, so that deeply nested input (e.g. 100 000 `[`) is
/// rejected before a recursive decoder sees it.
public enum JSONNesting {
    /// The deepest nesting the reader accepts by default. Real reports nest about 4 levels.
    public static let defaultLimit = 512

    /// What one pass over the bytes found.
    public struct Shape: Sendable, Equatable {
        /// Deepest nesting seen (stops counting just above the limit).
        public var maxDepth: Int
        /// Nesting still open at the end of the data (above 0 for a truncated document).
        public var endDepth: Int
        /// True when the data ends inside a string.
        public var endsInsideString: Bool
        /// True when the scan stopped early because `maxDepth` went above the limit.
        public var stoppedAtLimit: Bool
    }

    /// The maximum depth of `[`/`{` nesting in `data`, counting only brackets outside strings;
    /// stops early and returns a value above `limit` as soon as `limit` is exceeded.
    /// Malformed input is not diagnosed here: the decoder does that.
    public static func maxDepth(of data: Data, limit: Int = .max) -> Int {
        shape(of: data, limit: limit).maxDepth
    }

    /// Scans `data` once (linear, no allocation), stopping as soon as nesting exceeds `limit`.
    public static func shape(of data: Data, limit: Int = .max) -> Shape {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Shape in
            var depth = 0
            var deepest = 0
            var inString = false
            var escaped = false
            for byte in buffer {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                    if depth > deepest {
                        deepest = depth
                        if deepest > limit {
                            return Shape(
                                maxDepth: deepest, endDepth: depth, endsInsideString: false, stoppedAtLimit: true)
                        }
                    }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth = max(0, depth - 1)
                default:
                    break
                }
            }
            return Shape(maxDepth: deepest, endDepth: depth, endsInsideString: inString, stoppedAtLimit: false)
        }
    }

    /// True when the data holds a NUL byte or is not UTF-8: binary, not JSON text.
    public static func looksBinary(_ data: Data) -> Bool {
        if data.contains(0) { return true }
        return String(data: data, encoding: .utf8) == nil
    }
}
