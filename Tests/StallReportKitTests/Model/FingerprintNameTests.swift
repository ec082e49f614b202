import StallReportModel
import Testing

/// Names as a fingerprint takes them: an optimizer's clones as the function, forwarders as what
/// they forward to, other glue not at all, so debug and release builds of the same code agree.
@Suite("fingerprint names across build modes")
struct FingerprintNameTests {
    @Test(
        "clones, forwarders and thunks",
        arguments: [
            (
                "function signature specialization <Arg[1] = Dead> of static demo.Scenarios.spin(milliseconds: Swift.Int) -> ()",
                "static demo.Scenarios.spin(milliseconds: Swift.Int) -> ()"
            ),
            ("generic specialization <Swift.Int> of demo.work<A>(A) -> ()", "demo.work<A>(A) -> ()"),
            (
                "function signature specialization <Arg[0] = Closure Propagated : closure #1 () -> () in demo.f() -> ()> of generic specialization <Swift.Int> of demo.g<A>(A) -> ()",
                "demo.g<A>(A) -> ()"
            ),
            ("merged demo.h() -> ()", "demo.h() -> ()"),
            (
                "partial apply forwarder for closure #1 () -> () in demo.f() -> ()",
                "closure #1 () -> () in demo.f() -> ()"
            ),
            ("demo.plain() -> ()", "demo.plain() -> ()"),
            ("function signature specialization <Arg[1] = Dead", "function signature specialization <Arg[1] = Dead"),
        ])
    func names(_ symbol: String, _ expected: String) {
        #expect(FingerprintName.of(symbol) == expected)
    }

    @Test("compiler glue has no name; a forwarder and its function in a row count once")
    func glue() {
        #expect(
            FingerprintName.of(
                "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_unowned @convention(block) () -> ()"
            ) == nil)
        #expect(FingerprintName.collapsed(["a", "a", "b", "a"]) == ["a", "b", "a"])
    }

    @Test("a debug stack (forwarder, thunk) and a release stack (clones) of the same code get one fingerprint")
    func debugAndRelease() {
        func frame(_ symbol: String) -> StallReport.Frame {
            StallReport.Frame(address: "0x1000", image: 0, symbol: symbol, offset: 0, file: nil, line: nil, inApp: true)
        }
        let debug = [
            "static demo.S.leaf() -> ()", "partial apply forwarder for closure #1 () -> () in demo.S.run() -> ()",
            "closure #1 () -> () in demo.S.run() -> ()", "reabstraction thunk helper from A to B", "demo.main() -> ()",
        ]
        let release = [
            "function signature specialization <Arg[1] = Dead> of static demo.S.leaf() -> ()",
            "partial apply forwarder for closure #1 () -> () in demo.S.run() -> ()", "demo.main() -> ()",
        ]
        let make = { (names: [String]) in
            Fingerprint.make(Fingerprint.components(stack: names.map(frame), classification: .cpu, syscall: nil))
        }
        #expect(make(debug) == make(release))
        #expect(make(debug) != make(["static demo.S.other() -> ()"] + debug.dropFirst()))
    }
}
