import Foundation

/// Brendan Gregg's folded ("collapsed") stack format, as read by `flamegraph.pl`, inferno and
/// speedscope: one line per distinct stack, `root;caller;…;leaf COUNT`.
///
/// - COUNT is the stack's time in **microseconds** (sample weights are the effective sampling
///   interval), rounded to a whole number per line; lines with a count of 0 are left out.
/// - Frame names are cleaned so that they cannot change the structure: `;` (the frame separator)
///   becomes U+FF1B FULLWIDTH SEMICOLON `；`, which looks alike but is not a separator; line
///   breaks and tabs become spaces. A name never ends a line, so spaces in names
///   are safe (readers split the count off at the last space).
/// - Lines are sorted by stack, so output does not depend on reading order.
public enum FoldedExport {
    /// The character that replaces `;` inside a frame name.
    public static let semicolonReplacement: Character = "\u{FF1B}"

    /// A frame name made safe for a folded line.
    package static func clean(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count)
        for character in name {
            switch character {
            case ";": result.append(semicolonReplacement)
            case "\n", "\r", "\r\n", "\t": result.append(" ")
            default: result.append(character)
            }
        }
        return result.isEmpty ? "?" : result
    }

    /// The folded text of the given profiles' samples.
    public static func render(_ profiles: [StallProfile], names style: FrameNameStyle = .simplified) -> String {
        var weights: [String: Double] = [:]
        var names: [ProfileFrame: String] = [:]
        for profile in profiles {
            for sample in profile.samples {
                let line = sample.stack.map { frame in
                    if let known = names[frame] { return known }
                    let cleaned = clean(style.display(frame))
                    names[frame] = cleaned
                    return cleaned
                }.joined(separator: ";")
                weights[line, default: 0] += sample.weightMs
            }
        }
        var output = ""
        for stack in weights.keys.sorted() {
            let microseconds = Int(saturating: (weights[stack]! * 1000).rounded())
            guard microseconds > 0 else { continue }
            output += "\(stack) \(microseconds)\n"
        }
        return output
    }
}
