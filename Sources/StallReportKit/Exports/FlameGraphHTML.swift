import Foundation

/// A self-contained HTML page with an interactive flame graph of merged stall samples.
///
/// Everything is inline (CSS, JavaScript and the data as JSON in a `<script type=
/// "application/json">` element); the page loads nothing from the network. The data is escaped
/// so that no frame name can close the script element (`<`, `>` and `&` become `\u003c`, …).
public enum FlameGraphHTML {
    /// The page for the given profiles.
    public static func render(
        _ profiles: [StallProfile], title: String = "Stall flame graph", names: FrameNameStyle = .simplified
    ) throws -> String {
        try render(FlameGraphData(profiles: profiles, title: title, names: names))
    }

    /// The page for the given stalls (reduced from reports as they are read: no profiles kept).
    package static func render(
        _ stalls: [FlameGraphStall], title: String = "Stall flame graph", names: FrameNameStyle = .simplified
    ) throws -> String {
        try render(FlameGraphData(stalls: stalls, title: title, names: names))
    }

    /// The page for prepared data.
    package static func render(_ data: FlameGraphData) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(data), as: UTF8.self)
        // Fill the title into the template parts first, so nothing in the data is ever substituted.
        let parts = FlameGraphTemplate.page.components(separatedBy: "{{DATA}}")
            .map { $0.replacingOccurrences(of: "{{TITLE}}", with: escapeHTML(data.title)) }
        return parts.joined(separator: escapeScript(json))
    }

    /// JSON made safe inside a `<script>` element.
    package static func escapeScript(_ json: String) -> String {
        json.replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: ">", with: "\\u003e")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }

    /// Text made safe in HTML element content and attribute values.
    package static func escapeHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
