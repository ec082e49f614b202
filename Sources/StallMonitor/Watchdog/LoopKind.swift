/// The kind of loop a probe watches, as reports (`loop.kind`), metrics (`loop.kind`) and
/// ``StallMonitor/WatchedLoop`` name it. Open: polled loops name their own kinds.
struct LoopKind: OpenName {
    /// The name written in reports.
    var rawValue: String

    /// A `RunLoop` (CFRunLoop), watched by its observers.
    static let runLoop = LoopKind(rawValue: "runLoop")
    /// The MainActor (the Dispatch main queue).
    static let mainActor = LoopKind(rawValue: "mainActor")
    /// The Swift concurrency pool.
    static let concurrencyPool = LoopKind(rawValue: "concurrencyPool")
}
