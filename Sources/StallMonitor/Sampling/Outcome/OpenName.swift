/// A name that reports (or metrics, or session records) carry as a string, typed in the monitor
/// but open: a report from another version may carry names this one does not know, and they are
/// kept as they are. A conforming struct has one stored `rawValue` and static known values.
protocol OpenName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String {
    /// A value by the name written in reports.
    init(rawValue: String)
}

extension OpenName {
    /// A value by its raw name (as tests and known constants spell it).
    init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The name written in reports.
    var description: String { rawValue }
}
