import ToolSupport

/// The tests' small deterministic random number generator is the tools' SplitMix64, so a
/// randomized test's failure can be replayed from its seed.
typealias SplitMix64 = ToolSupport.SplitMix64
