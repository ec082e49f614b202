import Foundation

/// Something wrong with one input path: a file that is not a readable report, a dangling link,
/// a symlink loop, a directory without reports. Problems never stop the rest from being processed.
/// As ``ConfigFileError`` it names a bad configuration file instead, which stops the command.
public struct ReportProblem: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// The path as found (given on the command line or reached while walking a directory).
    public var path: String
    /// What is wrong, in one line.
    public var message: String

    /// Creates a problem.
    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, the form printed on stderr, with control characters escaped visibly
    /// (an escape character as `\u{1B}`): a file name may hold any byte but a newline or an escape sequence.
    public var description: String { PrintableText.escape("\(path): \(message)") }
}
