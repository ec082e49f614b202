/// How frame names are shown to people: simplified (the default) or as the full demangled names
/// stored in reports (`--full-names`). Reports, fingerprints and JSON always keep the full names.
public enum FrameNameStyle: String, Sendable, Equatable, CaseIterable {
    /// `static Scenarios.spinOnCPU(milliseconds:)`, as `swift demangle --simplified` prints it.
    case simplified
    /// `static stall_demo.Scenarios.spinOnCPU(milliseconds: Swift.Int) -> ()`, as stored.
    case full

    /// The name to show for the full name `name` (C, C++ and unknown names are shown as they are),
    /// with control characters escaped visibly (``PrintableText``).
    package func display(_ name: String) -> String {
        switch self {
        case .simplified: return PrintableText.escape(SimplifiedSwiftName.simplify(name))
        case .full: return PrintableText.escape(name)
        }
    }
}

extension FrameNameStyle {
    /// The name to show for a profile frame; synthetic frames (`all`, `[syscall …]`) keep theirs.
    package func display(_ frame: ProfileFrame) -> String {
        frame.isSynthetic ? PrintableText.escape(frame.name) : display(frame.name)
    }
}
