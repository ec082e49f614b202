/// Report data made safe to print: strings in reports (symbols, file names, thread names, scenes,
/// report file names) come from programs and file systems, and a hostile one may hold escape
/// sequences (clearing the screen, setting the window title) or a newline that starts a line a CI
/// runner reads as a command (`::add-mask::…`). Text output shows such characters visibly
/// instead: `\u{1B}` for ESC, `\n` for a newline.
enum PrintableText {
    /// `text` with every control character (C0, DEL, C1), line or paragraph separator and
    /// bidirectional-override character replaced by a visible escape (`\n`, `\r`, `\t`,
    /// `\u{1B}`, `\u{202E}`). Text without them is returned unchanged.
    package static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 >= 0xC2 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                switch scalar {
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// True for the scalars ``escape(_:)`` replaces.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1 (0x9B is a one-byte CSI)
        case 0x2028, 0x2029: return true  // line and paragraph separators
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional marks and overrides
        default: return false
        }
    }
}
