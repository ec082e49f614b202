import ArgumentParser

/// The figures of issue 6, in the order they run.
enum FigureKind: String, CaseIterable, Codable, Sendable {
    case observerOverhead = "observer-overhead"
    case idleCost = "idle-cost"
    case samplePause = "sample-pause"
    case samplingCost = "sampling-cost"
    case detectionLatency = "detection-latency"
    case accuracy = "accuracy"
    case memory = "memory"
    case summarizeThroughput = "summarize-throughput"
    case reportSize = "report-size"
    case blockingStacks = "blocking-stacks"
    case nioServer = "nio-server"
    case mainActor = "main-actor"
    case poolServer = "pool-server"
    case asyncChains = "async-chains"
    case idlePerLoop = "idle-per-loop"
    case samplesUnderLoad = "samples-under-load"
    case blockingCallCost = "blocking-call-cost"
    case serverInstructions = "server-instructions"

    var number: Int { Self.allCases.firstIndex(of: self)! + 1 }

    var title: String {
        switch self {
        case .observerOverhead: return "Observer overhead (loop passes/s with vs without the monitor)"
        case .idleCost: return "Idle cost (watchdog wake-ups and CPU while the loop sleeps)"
        case .samplePause: return "Main-thread pause per sample"
        case .samplingCost: return "Cost of sampling during a stall"
        case .detectionLatency: return "Detection latency"
        case .accuracy: return "Accuracy of reported durations"
        case .memory: return "Memory (RSS) of the host"
        case .summarizeThroughput: return "stallreport summarize throughput vs a Python orjson script and jq"
        case .reportSize: return "Report size"
        case .blockingStacks: return "Stacks of threads asleep in a syscall, and their cost to the watchdog"
        case .nioServer: return "SwiftNIO server: throughput, idle wake-ups, stalls in handlers"
        case .mainActor: return "MainActor under async main: idle wake-ups, stall timing"
        case .poolServer:
            return
                "Concurrency pool under a Hummingbird 2 server: CPU per request, idle wake-ups, stalls in async handlers"
        case .asyncChains: return "Async call chains: cost per sample against the stack unwinding"
        case .idlePerLoop:
            return
                "Idle cost per loop kind: the monitor's own threads' wake-ups and CPU, the host's wake-ups monitored vs not"
        case .samplesUnderLoad:
            return
                "Samples with a stack on a loaded machine (two CPU-bound processes per core) against the machine as it is"
        case .blockingCallCost:
            return "Blocking-call detection: instructions a watched call gains (callgrind), time a record takes"
        case .serverInstructions:
            return
                "SwiftNIO and Hummingbird 2 servers: instructions per request on their serving threads (callgrind), monitor and blocking calls on vs off"
        }
    }

    func run(_ context: BenchContext) throws -> FigureResult {
        switch self {
        case .observerOverhead: return try ObserverOverheadFigure.run(context)
        case .idleCost: return try IdleCostFigure.run(context)
        case .samplePause: return try SamplePauseFigure.run(context)
        case .samplingCost: return try SamplingCostFigure.run(context)
        case .detectionLatency: return try DetectionLatencyFigure.run(context)
        case .accuracy: return try AccuracyFigure.run(context)
        case .memory: return try MemoryFigure.run(context)
        case .summarizeThroughput: return try SummarizeThroughputFigure.run(context)
        case .reportSize: return try ReportSizeFigure.run(context)
        case .blockingStacks: return try BlockingStacksFigure.run(context)
        case .nioServer: return try NIOServerFigure.run(context)
        case .mainActor: return try MainActorFigure.run(context)
        case .poolServer: return try PoolServerFigure.run(context)
        case .asyncChains: return try AsyncChainsFigure.run(context)
        case .idlePerLoop: return try IdlePerLoopFigure.run(context)
        case .samplesUnderLoad: return try SamplesUnderLoadFigure.run(context)
        case .blockingCallCost: return try BlockingCallCostFigure.run(context)
        case .serverInstructions: return try ServerInstructionsFigure.run(context)
        }
    }

    /// Figures named by number or name (comma-separated allowed); all when `names` is empty.
    static func parse(_ names: [String]) throws -> [FigureKind] {
        let pieces = names.flatMap { $0.split(separator: ",").map(String.init) }
        if pieces.isEmpty { return allCases }
        var chosen = Set<FigureKind>()
        for piece in pieces {
            if let number = Int(piece), (1...allCases.count).contains(number) {
                chosen.insert(allCases[number - 1])
            } else if let figure = FigureKind(rawValue: piece) {
                chosen.insert(figure)
            } else {
                throw ValidationError(
                    "unknown figure '\(piece)'; known: 1–\(allCases.count) or \(allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }
        return allCases.filter(chosen.contains)
    }
}
