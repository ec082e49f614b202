/// A thread's scheduler state, the letter of `/proc/<pid>/task/<tid>/stat` (`R`, `S`, `D`, `T`,
/// …) as samples carry it. Open: any letter the kernel writes is kept as it is.
struct SchedulerState: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The letter written in reports.
    var rawValue: String

    /// A state by the letter reports carry.
    init(rawValue: String) { self.rawValue = rawValue }

    /// A state by its letter (as tests spell it).
    init(stringLiteral value: String) { self.rawValue = value }

    /// The letter written in reports.
    var description: String { rawValue }

    /// Runnable: on a CPU or waiting for one.
    static let running = SchedulerState(rawValue: "R")
    /// Not read (the file could not be read or parsed).
    static let unknown = SchedulerState(rawValue: "?")
}
