import Foundation

/// ANSI colours for text output, or none. Colour is used only when output goes to a terminal and
/// `NO_COLOR` is not set (see ``TextStyle/automatic(isTerminal:environment:)``).
package struct TextStyle: Sendable, Equatable {
    /// Whether escape sequences are written at all.
    package var colors: Bool

    /// Creates a style.
    package init(colors: Bool) {
        self.colors = colors
    }

    /// Plain text, no escape sequences.
    package static let plain = TextStyle(colors: false)

    /// Colour when `isTerminal` and `NO_COLOR` is absent or empty (https://no-color.org).
    package static func automatic(isTerminal: Bool, environment: [String: String]) -> TextStyle {
        TextStyle(colors: isTerminal && !noColor(environment))
    }

    /// True when `NO_COLOR` is set to a non-empty value.
    package static func noColor(_ environment: [String: String]) -> Bool {
        if let value = environment["NO_COLOR"], !value.isEmpty { return true }
        return false
    }

    private func wrap(_ text: String, _ code: String) -> String {
        colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Bold.
    package func bold(_ text: String) -> String { wrap(text, "1") }
    /// Dim (secondary information).
    package func dim(_ text: String) -> String { wrap(text, "2") }
    /// Red (failures).
    package func red(_ text: String) -> String { wrap(text, "31") }
    /// Yellow (warnings).
    package func yellow(_ text: String) -> String { wrap(text, "33") }
    /// Green (success, good news).
    package func green(_ text: String) -> String { wrap(text, "32") }
    /// Cyan (names).
    package func cyan(_ text: String) -> String { wrap(text, "36") }
}
