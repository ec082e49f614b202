/// A report field whose set of values may grow: a newer monitor may write a value this version
/// does not know, and the report must still read. Such a value keeps what was written in
/// `rawValue`; ``isKnown`` tells it apart from the values this version writes (``known``).
public protocol OpenReportValue: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible
where RawValue == String {
    /// The values this version writes, in display order.
    static var known: [Self] { get }
}

extension OpenReportValue {
    /// Whether this version of the model knows the value.
    public var isKnown: Bool { Self.known.contains(self) }

    /// The value as written in reports.
    public var description: String { rawValue }
}
