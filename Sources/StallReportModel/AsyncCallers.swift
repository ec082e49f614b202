import Foundation

extension StallReport.Sample {
    /// The sample's logical stack (frame indices, leaf first): where it carries async callers,
    /// the frames that ran in the task's current job (up to the job's first partial function)
    /// followed by the async callers; otherwise its physical ``frames``.
    ///
    /// Without ``asyncJobFrames`` the job's frames are taken to end at the outermost in-app
    /// frame. A first caller with the same name as the last job frame (the job's start function
    /// when the chain was read from the job start) is not repeated.
    public func logicalFrames(in table: [StallReport.Frame]) -> [Int] {
        guard let callers = asyncCallers, !callers.isEmpty else { return frames }
        let valid = callers.filter { table.indices.contains($0) }
        let cut: Int
        if let jobFrames = asyncJobFrames {
            cut = min(max(jobFrames, 0), frames.count)
        } else if let outermost = frames.lastIndex(where: { table.indices.contains($0) && table[$0].inApp }) {
            cut = outermost + 1
        } else {
            cut = frames.count
        }
        var logical = Array(frames.prefix(cut))
        var rest = valid[...]
        if let last = logical.last, let first = rest.first, table.indices.contains(last),
            let name = table[last].symbol, name == table[first].symbol
        {
            rest = rest.dropFirst()
        }
        logical.append(contentsOf: rest)
        return logical
    }
}

/// Picks the async call chain that stands for a whole stall (see
/// ``StallReport/representativeAsyncCallers``).
public enum RepresentativeAsyncCallers {
    /// The chain (frame indices, innermost caller first) that most stack samples with a chain
    /// carry, compared by function name, when at least half of them agree; nil otherwise.
    /// `inJob`: how many of its callers, from the innermost, were entered in the stalled job.
    ///
    /// Samples are compared by the callers that awaited before the current job began
    /// (``StallReport/Sample/asyncCallersBeforeJob``): a chain read from the running frame holds
    /// every function entered in the job, one read from the job start only the one it started in,
    /// and which way a sample was read depends on the build and the moment. Past them the two
    /// agree, so the stall's identity is the same either way. Of the samples that agree, the
    /// first read from the running frame (the whole chain) stands for them.
    public static func choose(
        samples: [StallReport.Sample], frames: [StallReport.Frame]
    ) -> (callers: [Int], inJob: Int?)? {
        let chains = samples.compactMap { sample -> (sample: StallReport.Sample, key: [String])? in
            guard sample.kind == .stack, let callers = sample.asyncCallers, !callers.isEmpty,
                callers.allSatisfy({ frames.indices.contains($0) }), let before = sample.asyncCallersBeforeJob
            else { return nil }
            return (sample, before.map { frames[$0].symbol ?? frames[$0].address })
        }
        guard !chains.isEmpty else { return nil }
        var counts: [[String]: (count: Int, first: Int, running: Int?)] = [:]
        for (index, chain) in chains.enumerated() {
            var entry = counts[chain.key] ?? (0, index, nil)
            entry.count += 1
            if entry.running == nil, chain.sample.asyncCallersFromJobStart != true { entry.running = index }
            counts[chain.key] = entry
        }
        guard let best = counts.values.max(by: { ($0.count, -$0.first) < ($1.count, -$1.first) }),
            best.count * 2 >= chains.count
        else { return nil }
        let chosen = chains[best.running ?? best.first].sample
        let callers = chosen.asyncCallers ?? []
        return (callers, chosen.asyncJobCallers.map { min(max($0, 0), callers.count) })
    }

    /// The chain ``choose(samples:frames:)`` picks, without how many of its callers were entered
    /// in the stalled job.
    public static func find(samples: [StallReport.Sample], frames: [StallReport.Frame]) -> [Int]? {
        choose(samples: samples, frames: frames)?.callers
    }
}

/// Names in async call chains.
public enum AsyncCallerNames {
    /// Whether `symbol` names compiler-made glue between async functions (a reabstraction thunk,
    /// a partial apply forwarder), not a function of the app: left out of fingerprints and of the
    /// nearest caller.
    public static func isThunk(_ symbol: String) -> Bool {
        symbol.contains("reabstraction thunk") || symbol.contains("partial apply forwarder")
            || symbol.hasPrefix("thunk for ")
            || symbol.contains("resume partial function for thunk for ")
    }

    /// The async function a resume function belongs to: `symbol` without the demangler's
    /// `(2) await resume partial function for ` (or `suspend resume`) prefix.
    public static func function(of symbol: String) -> String {
        guard symbol.hasPrefix("("), let range = symbol.range(of: " resume partial function for ") else {
            return symbol
        }
        return String(symbol[range.upperBound...])
    }
}

extension StallReport {
    /// The representative logical stack (frame indices, leaf first): the representative stack up
    /// to its outermost in-app frame followed by ``representativeAsyncCallers``; the
    /// representative stack itself when there are none.
    public var representativeLogicalStack: [Int] {
        Sample(
            offsetMs: 0, kind: .stack, threadState: "?", frames: representativeStack,
            asyncCallers: representativeAsyncCallers
        )
        .logicalFrames(in: frames)
    }

    /// The first in-app async caller of the representative chain (the function that awaited
    /// the stalling code), or nil.
    public var nearestAppAsyncCaller: String? {
        guard let callers = representativeAsyncCallers else { return nil }
        return callers.lazy.compactMap { index -> String? in
            guard self.frames.indices.contains(index), self.frames[index].inApp, let symbol = self.frames[index].symbol,
                !Fingerprint.isIgnored(symbol), !AsyncCallerNames.isThunk(symbol)
            else { return nil }
            return symbol
        }.first
    }
}
