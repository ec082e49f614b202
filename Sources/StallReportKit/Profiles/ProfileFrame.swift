import Foundation

/// One function in a stall profile: what flame graphs, call trees and exports show as a box.
///
/// Frames of a report are reduced to their function: two samples in the same function at
/// different lines are the same ``ProfileFrame``. A frame without a symbol is named by its image
/// and link-time address (`libfoo.so+0x1a2b`), which stays the same across runs of one build
/// (unlike the run-time address). Samples without a full stack get a synthetic frame in brackets.
/// Equality ignores ``file``.
public struct ProfileFrame: Hashable, Sendable, Codable {
    /// The demangled symbol, `image+0x…` for an unnamed frame, or `[…]` for a synthetic frame.
    public var name: String
    /// Source file of the function, when known.
    public var file: String?
    /// File name of the image the frame lies in, when known.
    public var image: String?
    /// True for the app's own code.
    public var inApp: Bool
    /// True for a frame that stands for missing information (`[no stack]`, `[syscall …]`).
    public var isSynthetic: Bool

    /// Creates a frame.
    public init(name: String, file: String? = nil, image: String? = nil, inApp: Bool = false, isSynthetic: Bool = false) {
        self.name = name
        self.file = file
        self.image = image
        self.inApp = inApp
        self.isSynthetic = isSynthetic
    }

    /// The profile frame of frame `index` of `report`; nil when the index is out of range.
    package static func of(_ index: Int, in report: StallReport) -> ProfileFrame? {
        guard report.frames.indices.contains(index) else { return nil }
        let frame = report.frames[index]
        let image = frame.image.flatMap { report.images.indices.contains($0) ? report.images[$0] : nil }
        let imageName = image.map { ($0.path as NSString).lastPathComponent }
        if let symbol = frame.symbol, !symbol.isEmpty {
            return ProfileFrame(name: symbol, file: frame.file, image: imageName, inApp: frame.inApp)
        }
        return ProfileFrame(name: unnamed(frame, image: image), file: frame.file, image: imageName, inApp: frame.inApp)
    }

    /// `image+0x<link-time address>` when the image is known, else the run-time address.
    static func unnamed(_ frame: StallReport.Frame, image: StallReport.Image?) -> String {
        guard let image, let address = ReportCoding.parseAddress(frame.address),
              let bias = ReportCoding.parseAddress(image.loadBias), address >= bias else { return frame.address }
        return "\((image.path as NSString).lastPathComponent)+\(ReportCoding.formatAddress(address - bias))"
    }

    /// The synthetic frame of a sample taken while the thread sat in a syscall, not unwound.
    package static func syscall(_ name: String?) -> ProfileFrame {
        ProfileFrame(name: "[syscall \(name ?? "?"), not unwound]", isSynthetic: true)
    }

    /// The synthetic frame of a sample without any stack.
    package static let noStack = ProfileFrame(name: "[no stack]", isSynthetic: true)

    /// Frames are the same function when name, image and kind agree; ``file`` is only shown
    /// (the monitor knows the file of some addresses of a function and not of others).
    public static func == (a: ProfileFrame, b: ProfileFrame) -> Bool {
        a.name == b.name && a.image == b.image && a.inApp == b.inApp && a.isSynthetic == b.isSynthetic
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(image)
        hasher.combine(inApp)
        hasher.combine(isSynthetic)
    }
}
