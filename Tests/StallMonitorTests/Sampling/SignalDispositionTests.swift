import Foundation
import Glibc
import StallMonitor
import Testing

/// The disposition of `signal`: `nil` for SIG_DFL, otherwise whether it is an SA_SIGINFO handler.
private enum Disposition: Equatable {
    case defaultAction
    case ignored
    case handler(siginfo: Bool)

    static func of(_ signal: Int32) -> Disposition {
        var action = sigaction()
        sigaction(signal, nil, &action)
        if action.sa_flags & SA_SIGINFO != 0 { return .handler(siginfo: true) }
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        if handler == 0 { return .defaultAction }  // SIG_DFL
        if handler == 1 { return .ignored }  // SIG_IGN
        return .handler(siginfo: false)
    }
}

/// A handler the test installs on a signal the monitor must then refuse.
private func testHandler(_ signal: Int32) {}

@Suite("The sampling signal's disposition", .serialized)
struct SignalDispositionTests {
    private static var realTimeSignals: ClosedRange<Int32> { realTimeSignalMin...realTimeSignalMax }

    @Test("stop() restores SIG_DFL on the signal the monitor picked, which was SIG_DFL before start")
    func stopRestoresDefault() throws {
        let before = Dictionary(uniqueKeysWithValues: Self.realTimeSignals.map { ($0, Disposition.of($0)) })
        try withMonitoredLoop("signal-restore") { directory, loop, monitor in
            let signal = monitor.signal
            #expect(Self.realTimeSignals.contains(signal))
            #expect(before[signal] == .defaultAction)
            #expect(Disposition.of(signal) == .handler(siginfo: true))
            monitor.stop()
            #expect(Disposition.of(signal) == .defaultAction)
            monitor.stop()  // a second stop does nothing
            #expect(Disposition.of(signal) == .defaultAction)
            for candidate in Self.realTimeSignals {
                #expect(Disposition.of(candidate) == before[candidate], "signal \(candidate)")
            }
        }
    }

    @Test("an explicitly configured signal that already has a handler is refused with signalUnavailable")
    func takenSignalIsRefused() throws {
        try withLoopThread("signal-taken") { directory, loop in
            let taken = firstSignalPicked  // the first one the monitor would pick
            try #require(Disposition.of(taken) == .defaultAction)
            let previous = Glibc.signal(taken, testHandler)
            defer { Glibc.signal(taken, previous) }
            try #require(Disposition.of(taken) == .handler(siginfo: false))

            var configuration = directory.configuration()
            configuration.signal = taken
            #expect {
                _ = try loop.startMonitor(configuration)
            } throws: { error in
                guard let error = error as? StallMonitorError, error.code == .signalUnavailable else { return false }
                return error.reason.contains("\(taken)")
            }
            #expect(
                Disposition.of(taken) == .handler(siginfo: false), "the refused start left the host's handler alone")

            // Left to choose, the monitor picks another signal and leaves the taken one alone.
            let monitor = try loop.startMonitor(directory.configuration())
            #expect(monitor.signal != taken)
            monitor.stop()
            #expect(Disposition.of(taken) == .handler(siginfo: false))
        }
    }

    @Test("a signal that is not a real-time signal is refused")
    func nonRealTimeSignalIsRefused() throws {
        let directory = ReportDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.signal = SIGUSR1
        #expect {
            _ = try StallMonitor.start(configuration, loop: .current)
        } throws: { error in
            (error as? StallMonitorError)?.code == .signalUnavailable
        }
        #expect(Disposition.of(SIGUSR1) == .defaultAction)
    }
}
