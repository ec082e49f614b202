import ToolSupport

/// What one worker thread does: a fixed list of stalls, each clearly above the threshold, each
/// followed by an idle gap in which the loop sleeps. Deterministic (seeded), so runs compare.
struct StressPlan: Sendable {
    /// One stall and the idle time before it.
    struct Step: Sendable {
        enum Kind: String, Sendable {
            /// Spin on the CPU (the monitor samples full stacks).
            case spin
            /// Sleep in `usleep` (the monitor records the syscall without interrupting it).
            case sleep
        }

        var kind: Kind
        var stallMs: Int
        var gapMs: Int
    }

    var steps: [Step]

    /// `count` steps with stalls in `stallMs` and gaps in `gapMs`, spins and sleeps mixed.
    init(count: Int, stallMs: ClosedRange<Int>, gapMs: ClosedRange<Int>, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        steps = (0..<count).map { _ in
            Step(
                kind: generator.next() % 2 == 0 ? .spin : .sleep,
                stallMs: Int.random(in: stallMs, using: &generator),
                gapMs: Int.random(in: gapMs, using: &generator))
        }
    }

    /// Splits `total` stalls over `workers` plans (the first ones get one more when uneven).
    static func split(
        total: Int, workers: Int, stallMs: ClosedRange<Int>, gapMs: ClosedRange<Int>, seed: UInt64
    ) -> [StressPlan] {
        (0..<workers).map { index in
            let count = total / workers + (index < total % workers ? 1 : 0)
            return StressPlan(count: count, stallMs: stallMs, gapMs: gapMs, seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        }
    }
}
