import Foundation

/// A problem with a file the user gave as configuration (gate config, baseline, suppressions): a
/// path and what is wrong with it, like a ``ReportProblem``, but unlike a bad report it stops the
/// command (exit status 2).
public typealias ConfigFileError = ReportProblem

/// Reading the configuration files: bounded, with short error messages.
enum ConfigFile {
    /// Reads a small configuration file (at most 16 MiB, nesting at most 64 levels).
    static func read(path: String, what: String) throws(ConfigFileError) -> Data {
        let data: Data
        switch BoundedFileReader.contents(of: path, limit: 16 * 1024 * 1024) {
        case .success(let contents): data = contents
        case .failure(.tooLarge): throw ConfigFileError(path: path, message: "\(what) file larger than 16 MiB")
        case .failure(.unreadable(let why)):
            throw ConfigFileError(path: path, message: "cannot read \(what) file: \(why)")
        }
        if data.isEmpty { throw ConfigFileError(path: path, message: "\(what) file is empty") }
        if JSONNesting.maxDepth(of: data, limit: 64) > 64 {
            throw ConfigFileError(path: path, message: "\(what) file nested deeper than 64 levels")
        }
        return data
    }

    /// A short description of a decoding error.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
            let underlying = (context.underlyingError as NSError?)?.debugDescription
            return "invalid JSON" + (underlying.map { " (\($0))" } ?? "")
        }
        return error.summary()
    }
}
