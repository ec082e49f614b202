import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The width text tables fit in: `COLUMNS` when set to a number, else the terminal's width when
/// standard output is a terminal, else 120. Never below 40, so tables stay legible.
enum TerminalWidth {
    /// The default when neither `COLUMNS` nor a terminal says otherwise.
    static let fallback = 120
    /// The narrowest width used.
    static let minimum = 40

    /// The width for this process's standard output.
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        if let text = environment["COLUMNS"], let columns = Int(text.trimmingCharacters(in: .whitespaces)), columns > 0
        {
            return max(minimum, columns)
        }
        if Output.stdoutIsTerminal {
            var size = winsize()
            if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
                return max(minimum, Int(size.ws_col))
            }
        }
        return fallback
    }
}
