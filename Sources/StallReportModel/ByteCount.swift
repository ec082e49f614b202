import Foundation

/// Human-readable byte counts.
public enum ByteCount {
    /// Formats a byte count as `B`, `KiB` or `MiB` with one decimal.
    public static func format(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return String(format: "%.1f KiB", Double(bytes) / 1024) }
        return String(format: "%.1f MiB", Double(bytes) / 1024 / 1024)
    }
}
