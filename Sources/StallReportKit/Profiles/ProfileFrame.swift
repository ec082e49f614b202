import Foundation

/// One function in a stall profile: what flame graphs, call trees and exports show as a box.
///
/// Frames of a report are reduced to their function: two samples in the same function at
/// different lines are the same ``ProfileFrame``. A frame without a symbol is named by its image
/// and link-time address (`libfoo.so+0x1a2b`), which stays the same across runs of one build
/// (unlike the run-time address). Samples without a full stack get a synthetic frame in brackets.
/// Equality ignores ``file``.
///
/// A frame is one reference (its fields live in a shared, immutable box, copied on write): a
/// profile holds a frame per sample and stack level, a million samples of a deep stack are tens
/// of millions of frames, and five inline fields made that gigabytes.
public struct ProfileFrame: Hashable, Sendable, Codable {
    /// The fields, shared by every copy of the frame.
    private final class Storage: Sendable {
        let name: String
        let file: String?
        let image: String?
        let inApp: Bool
        let isSynthetic: Bool

        init(name: String, file: String?, image: String?, inApp: Bool, isSynthetic: Bool) {
            self.name = name
            self.file = file
            self.image = image
            self.inApp = inApp
            self.isSynthetic = isSynthetic
        }
    }

    private var storage: Storage

    /// The demangled symbol, `image+0x…` for an unnamed frame, or `[…]` for a synthetic frame.
    public var name: String {
        get { storage.name }
        set { storage = Storage(name: newValue, file: file, image: image, inApp: inApp, isSynthetic: isSynthetic) }
    }
    /// Source file of the function, when known.
    public var file: String? {
        get { storage.file }
        set { storage = Storage(name: name, file: newValue, image: image, inApp: inApp, isSynthetic: isSynthetic) }
    }
    /// File name of the image the frame lies in, when known.
    public var image: String? {
        get { storage.image }
        set { storage = Storage(name: name, file: file, image: newValue, inApp: inApp, isSynthetic: isSynthetic) }
    }
    /// True for the app's own code.
    public var inApp: Bool {
        get { storage.inApp }
        set { storage = Storage(name: name, file: file, image: image, inApp: newValue, isSynthetic: isSynthetic) }
    }
    /// True for a frame that stands for missing information (`[no stack]`, `[syscall …]`).
    var isSynthetic: Bool {
        get { storage.isSynthetic }
        set { storage = Storage(name: name, file: file, image: image, inApp: inApp, isSynthetic: newValue) }
    }

    /// Creates a frame.
    package init(
        name: String, file: String? = nil, image: String? = nil, inApp: Bool = false, isSynthetic: Bool = false
    ) {
        storage = Storage(name: name, file: file, image: image, inApp: inApp, isSynthetic: isSynthetic)
    }

    private enum CodingKeys: String, CodingKey {
        case name, file, image, inApp, isSynthetic
    }

    /// Decodes the keys ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            file: try container.decodeIfPresent(String.self, forKey: .file),
            image: try container.decodeIfPresent(String.self, forKey: .image),
            inApp: try container.decode(Bool.self, forKey: .inApp),
            isSynthetic: try container.decode(Bool.self, forKey: .isSynthetic))
    }

    /// Encodes `name`, `file` and `image` (when known), `inApp` and `isSynthetic`, as the
    /// synthesized conformance of the former plain struct did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(file, forKey: .file)
        try container.encodeIfPresent(image, forKey: .image)
        try container.encode(inApp, forKey: .inApp)
        try container.encode(isSynthetic, forKey: .isSynthetic)
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
            let bias = ReportCoding.parseAddress(image.loadBias), address >= bias
        else { return frame.address }
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
        if a.storage === b.storage { return true }
        return a.name == b.name && a.image == b.image && a.inApp == b.inApp && a.isSynthetic == b.isSynthetic
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(image)
        hasher.combine(inApp)
        hasher.combine(isSynthetic)
    }
}
