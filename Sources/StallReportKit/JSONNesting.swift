import Foundation

/// A cheap pre-check of JSON nesting depth, so that deeply nested input (e.g. 100 000 `[`) is
/// rejected before a recursive decoder sees it.
public enum JSONNesting {
    /// The deepest nesting the reader accepts by default. Real reports nest about 4 levels.
    public static let defaultLimit = 512

    /// The maximum depth of `[`/`{` nesting in `data`, counting only brackets outside strings;
    /// stops early and returns a value above `limit` as soon as `limit` is exceeded.
    /// Malformed input is not diagnosed here: the decoder does that.
    public static func maxDepth(of data: Data, limit: Int = .max) -> Int {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Int in
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
                        if deepest > limit { return deepest }
                    }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth = max(0, depth - 1)
                default:
                    break
                }
            }
            return deepest
        }
    }
}
