import Foundation

/// Better advice than ArgumentParser's nearest-spelling guess for options people try that no
/// subcommand has: `--json` is spelled `--format json` (summarize, diff), and the guess for it
/// (`--top`, `--jobs`) is never what was meant.
enum UsageHints {
    /// `message` (ArgumentParser's full usage error) with the advice for `--json` in place of
    /// its "Did you mean" guess; any other message unchanged.
    static func improve(_ message: String, arguments: [String] = CommandLine.arguments) -> String {
        guard let range = message.range(of: "Unknown option '--json'") else { return message }
        let rest = String(message[range.upperBound...]).replacingOccurrences(
            of: #"^\. Did you mean '[^']*'\?"#, with: "", options: .regularExpression)
        let subcommand = arguments.dropFirst().first { !$0.hasPrefix("-") } ?? ""
        let advice: String
        switch subcommand {
        case "summarize", "diff":
            advice = ". JSON output is '--format json'."
        case "export":
            advice =
                ". Choose the export's format with '--format' (folded, speedscope, chrome-trace, pprof); 'summarize' and 'diff' take '--format json'."
        default:
            advice = ". This subcommand has no JSON output; 'summarize' and 'diff' take '--format json'."
        }
        return String(message[..<range.upperBound]) + advice + rest
    }
}
