import Foundation

/// What the stuck thread was doing during a stall.
public enum StallClassification: String, Codable, Sendable, CaseIterable {
    /// Mostly running on a CPU (a long computation).
    case cpu
    /// Mostly off CPU: waiting on a lock, I/O or a sleep.
    case blocked
    /// Neither clearly on nor clearly off CPU.
    case mixed
    /// Many short loop passes, none long on its own: the loop was flooded with work.
    case congestion
}

