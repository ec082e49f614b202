/// A thread's scheduler state, the letter of `/proc/<pid>/task/<tid>/stat` (`R`, `S`, `D`, `T`,
/// …) as samples carry it. Open: any letter the kernel writes is kept as it is.
struct SchedulerState: OpenName {
    /// The letter written in reports.
    var rawValue: String

    /// Runnable: on a CPU or waiting for one.
    static let running = SchedulerState(rawValue: "R")
    /// Asleep in an interruptible wait (an idle worker's).
    static let sleeping = SchedulerState(rawValue: "S")
    /// Not read (the file could not be read or parsed).
    static let unknown = SchedulerState(rawValue: "?")
}
