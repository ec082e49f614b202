import Foundation
import StallReportModel

/// Turns a watchdog recording into a schema-1 report: symbolicates every distinct address once,
/// builds the shared frame table, picks the representative stack, fingerprints and classifies.
struct ReportBuilder {
    let symbolicator: Symbolicator
    let process: StallReport.Process
    let tags: [String: String]
    /// False: never load libdw into the host; reports carry addresses, images and build IDs.
    let symbolicateInProcess: Bool

    /// How frames are named.
    enum Naming {
        /// Addresses and images only.
        case none
        /// Names already known (cached from earlier reports), no lookups: fast, for an
        /// in-progress version that must reach the disk now.
        case cached
        /// Every address looked up (the first lookups of a session can take a while).
        case full
    }

    /// A built report, and whether every frame got what `naming` can give at best (false when
    /// `.cached` left addresses to look up, or names were left out).
    struct Built {
        var report: StallReport
        var complete: Bool
    }

    /// Builds the report, naming frames as `naming` says.
    func build(_ recording: StallRecording, status: StallStatus = .ended, naming: Naming) -> Built {
        let images = LoadedImages.capture()
        // Caller frames hold return addresses: look up the call instruction (address - 1).
        func lookupAddress(_ sample: RawSample, _ position: Int) -> UInt {
            sample.kind == .stack && position > 0 ? sample.addresses[position] &- 1 : sample.addresses[position]
        }
        var addresses: [UInt] = []
        var frameIndex: [UInt: Int] = [:]
        func add(_ address: UInt) {
            if frameIndex[address] == nil {
                frameIndex[address] = addresses.count
                addresses.append(address)
            }
        }
        for sample in recording.samples {
            for position in sample.addresses.indices { add(lookupAddress(sample, position)) }
            // Resume functions are entry points, not return addresses: looked up as they are.
            for caller in sample.asyncChain?.callers ?? [] { add(caller) }
        }
        let naming = symbolicateInProcess ? naming : .none
        let imageKeys = images.entries.map { "\($0.path)@\($0.start)" }
        let symbols: [UInt: Symbolicator.Symbol]
        switch naming {
        case .none: symbols = [:]
        case .cached: symbols = symbolicator.cachedSymbols(addresses, images: imageKeys)
        case .full: symbols = symbolicator.symbolicate(addresses, images: imageKeys)
        }
        let unnamed = addresses.count - symbols.count
        let frames = addresses.map { address -> StallReport.Frame in
            let image = images.index(containing: address)
            let symbol = symbols[address]
            return StallReport.Frame(
                address: ReportCoding.formatAddress(address), image: image, symbol: symbol?.name,
                offset: symbol?.offset, file: symbol?.file, line: symbol?.line,
                inApp: image.map { images.entries[$0].isApp } ?? false,
                monitor: MonitorOwnCode.contains(address) ? true : nil)
        }
        let samples = recording.samples.map { sample in
            StallReport.Sample(
                offsetMs: milliseconds(sample.offset), kind: sample.kind, threadState: sample.threadState.rawValue,
                syscall: sample.syscall, note: sample.note,
                frames: sample.addresses.indices.map { frameIndex[lookupAddress(sample, $0)]! },
                truncated: sample.truncated ? true : nil, unwinder: sample.unwinder?.rawValue,
                interrupted: sample.interrupted,
                asyncCallers: sample.asyncChain.map { $0.callers.map { frameIndex[$0]! } },
                asyncJobFrames: sample.asyncChain?.jobFrames,
                asyncCallersFromJobStart: sample.asyncChain.map { $0.fromJobStart ? true : nil } ?? nil,
                asyncJobCallers: sample.asyncChain.map { min($0.jobCallers, $0.callers.count) })
        }
        let duration = recording.end &- recording.spanStart
        let observed = recording.trackingEnd &- recording.trackingStart
        let cpu =
            recording.cpuAtTrackingStart >= 0 && recording.cpuAtTrackingEnd >= recording.cpuAtTrackingStart
            ? recording.cpuAtTrackingEnd - recording.cpuAtTrackingStart : -1
        let classification = StallClassifier.classify(
            duration: duration, passes: recording.passes, longestPass: recording.longestPass,
            cpu: cpu, observed: observed, states: recording.samples.map(\.threadState))
        let reportImages = images.reportImages
        let identity = StallIdentity.derive(
            samples: samples, frames: frames, classification: classification, images: reportImages)
        let stack = identity.stack
        let asyncCallers = identity.asyncCallers
        let fingerprint = identity.fingerprint
        let symbolication = describeSymbolication(naming: naming, named: symbols.count, of: addresses.count)
        let report = StallReport(
            id: UUID().uuidString, fingerprint: fingerprint, status: status,
            startedAt: recording.wallClockStart, durationMs: milliseconds(duration),
            thresholdMs: milliseconds(recording.threshold), classification: classification,
            mainThreadCPUMs: cpu >= 0 ? milliseconds(UInt64(cpu)) : 0,
            cpuObservedMs: cpu >= 0 ? milliseconds(observed) : 0,
            loop: StallReport.Loop(
                kind: recording.thread.loopKind, threadName: recording.thread.name,
                threadID: Int(recording.thread.tid), isMainThread: recording.thread.isMainThread,
                mode: recording.mode, passes: recording.passes, longestPassMs: milliseconds(recording.longestPass),
                armingProblems: recording.thread.armingProblems.isEmpty ? nil : recording.thread.armingProblems),
            process: process,
            sampling: sampling(of: recording),
            samples: samples, representativeStack: stack, frames: frames, images: reportImages,
            symbolication: StallReport.Symbolication(
                symbolicator: symbolication.name.rawValue, note: symbolication.note),
            tags: tags.isEmpty ? nil : tags, scene: recording.scene,
            processStoppedMs: recording.stoppedNanos > 0 ? milliseconds(recording.stoppedNanos) : nil,
            machineSuspendedMs: recording.machineSuspendedNanos > 0
                ? milliseconds(recording.machineSuspendedNanos) : nil,
            starvation: recording.starvation, representativeAsyncCallers: asyncCallers,
            representativeAsyncCallersInJob: asyncCallers == nil ? nil : identity.asyncCallersInJob)
        return Built(
            report: report, complete: naming == .full || (naming == .cached && unnamed == 0) || !symbolicateInProcess)
    }

    /// Which symbolicator named the frames (and why not all), for `named` of `count` addresses
    /// named as `naming` says.
    private func describeSymbolication(
        naming: Naming, named: Int, of count: Int
    ) -> (name: SymbolicatorName, note: String?) {
        let unnamed = count - named
        let symbolication: (name: SymbolicatorName, note: String?)
        switch naming {
        case .full:
            symbolication = symbolicator.describe()
        case .cached where named > 0:
            let used = symbolicator.describeIfOpen() ?? (name: .noSymbolicator, note: nil)
            symbolication =
                unnamed == 0
                ? used
                : (
                    used.name,
                    "\(unnamed) of \(count) frames written before symbolication (the stall was still in progress)"
                )
        case .cached, .none:
            symbolication = (
                name: .noSymbolicator,
                note: symbolicateInProcess
                    ? "written before symbolication (the stall was still in progress)"
                    : "symbolicateInProcess is off: name the frames with `stallreport symbolicate`"
            )
        }
        return symbolication
    }

    /// How the stall was sampled.
    private func sampling(of recording: StallRecording) -> StallReport.Sampling {
        StallReport.Sampling(
            unwinder: recording.unwinder.name.rawValue,
            unwinderNote: recording.unwinder.note, intervalMs: milliseconds(recording.requestedInterval),
            effectiveIntervalMs: milliseconds(recording.interval), maxSamples: recording.maxSamples,
            attempted: recording.attempted, taken: recording.taken, timedOut: recording.timedOut,
            skipped: Dictionary(uniqueKeysWithValues: recording.skipped.map { ($0.key.rawValue, $0.value) }),
            thinned: recording.thinned, dropped: recording.dropped,
            asyncCallersNote: Self.asyncCallersNote(recording.asyncChainOmissions))
    }

    /// The sampling note for samples whose async callers were not read: each reason, with how many.
    static func asyncCallersNote(_ omissions: [String: Int]) -> String? {
        guard !omissions.isEmpty else { return nil }
        return omissions.sorted { $0.key < $1.key }
            .map { "\($0.value) sample\($0.value == 1 ? "" : "s") without async callers: \($0.key)" }
            .joined(separator: "; ")
    }

    private func milliseconds(_ nanoseconds: UInt64) -> Double {
        (Double(nanoseconds) / 1e6 * 1000).rounded() / 1000
    }
}
