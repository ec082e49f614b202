import Foundation

/// Writes a gate result as JUnit XML: one test case per configured budget (suite
/// `stallreport.budgets`) and one per fingerprint (suite `stallreport.fingerprints`). A fingerprint
/// case fails when it breaks a per-fingerprint budget or is new/regressed against the baseline;
/// suppressed fingerprints are skipped; fixed ones pass with a note.
package struct JUnitWriter: Sendable {
    /// How frame names are shown: simplified (default) or full.
    package var names: FrameNameStyle

    /// Creates a writer.
    package init(names: FrameNameStyle = .simplified) {
        self.names = names
    }

    private struct Case {
        var classname: String
        var name: String
        var failure: (message: String, body: String)?
        var skipped: String?
        var output: String?
    }

    /// A budget's case: passes with the verdict as output, or fails with it and one line per offender.
    private static func budgetCase(_ name: String, passed: Bool, verdict: String, offenders: [String]) -> Case {
        var test = Case(classname: "stallreport.budgets", name: name)
        if passed {
            test.output = verdict
        } else {
            test.failure = (verdict, offenders.joined(separator: "\n"))
        }
        return test
    }

    /// The XML document.
    package func render(_ result: GateResult) -> String {
        var budgetCases: [Case] = result.checks.map { check in
            Self.budgetCase(
                "\(check.kind.rawValue) ≤ \(check.kind.format(check.limit))", passed: check.passed,
                verdict: check.verdictLine,
                offenders: check.offenders.map {
                    "\($0.fingerprint)  \(check.kind.format(check.value(of: $0)))  \(names.display($0.headline))"
                })
        }
        budgetCases += result.blockingChecks.map { check in
            Self.budgetCase(
                "\(check.kind.rawValue) ≤ \(Durations.format(check.limit))", passed: check.passed,
                verdict: check.verdictLine,
                offenders: check.offenders.map {
                    "\($0.fingerprint)  \(Durations.format($0.totalMs))  \(BlockingBudgetCheck.describe($0, names: names))"
                })
        }

        var fingerprintCases: [Case] = []
        let perFingerprint = result.checks.filter {
            $0.kind == .maxStallsPerFingerprint || $0.kind == .maxStallMs || $0.kind == .maxP95Ms
        }
        let changes = Dictionary((result.changes ?? []).map { ($0.fingerprint, $0) }, uniquingKeysWith: { a, _ in a })
        for group in result.counted {
            var test = Case(
                classname: "stallreport.fingerprints", name: "\(group.fingerprint) \(names.display(group.headline))")
            var reasons: [String] = []
            for check in perFingerprint where check.offenders.contains(where: { $0.fingerprint == group.fingerprint }) {
                reasons.append(
                    "\(check.kind.title): \(check.kind.format(check.value(of: group))) > \(check.kind.format(check.limit))"
                )
            }
            if let change = changes[group.fingerprint], change.isFailure {
                reasons.append(
                    change.kind == .new
                        ? "new fingerprint (not in the baseline)"
                        : "regressed: " + change.reasons.joined(separator: ", "))
            }
            let stack = group.worst.stack.map {
                "at \(names.display($0.symbol))" + ($0.location.map { " (\($0))" } ?? "")
            }.joined(separator: "\n")
            let facts =
                "\(group.count) stalls, total \(Durations.format(group.totalMs)), p95 \(Durations.format(group.p95Ms)), max \(Durations.format(group.maxMs))\nexample: \(group.worst.path)\n\(stack)"
            if reasons.isEmpty {
                test.output = facts
            } else {
                test.failure = (reasons.joined(separator: "; "), facts)
            }
            fingerprintCases.append(test)
        }
        for match in result.suppressed {
            var test = Case(
                classname: "stallreport.fingerprints",
                name: "\(match.suppression.fingerprint) \(match.group.map { names.display($0.headline) } ?? "")")
            test.skipped = "suppressed until \(match.suppression.expires): \(match.suppression.reason)"
            fingerprintCases.append(test)
        }
        for change in result.fixed {
            var test = Case(
                classname: "stallreport.fingerprints", name: "\(change.fingerprint) \(names.display(change.headline))")
            test.output = "fixed: in the baseline (\(change.base?.count ?? 0) stalls) but not in this run"
            fingerprintCases.append(test)
        }

        func suite(_ name: String, _ cases: [Case]) -> String {
            let failures = cases.filter { $0.failure != nil }.count
            let skipped = cases.filter { $0.skipped != nil }.count
            var lines = [
                "  <testsuite name=\"\(escape(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\">"
            ]
            for test in cases {
                lines.append("    <testcase classname=\"\(escape(test.classname))\" name=\"\(escape(test.name))\">")
                if let failure = test.failure {
                    lines.append(
                        "      <failure message=\"\(escape(failure.message))\" type=\"stallreport\">\(escape(failure.body))</failure>"
                    )
                }
                if let skipped = test.skipped {
                    lines.append("      <skipped message=\"\(escape(skipped))\"/>")
                }
                if let output = test.output {
                    lines.append("      <system-out>\(escape(output))</system-out>")
                }
                lines.append("    </testcase>")
            }
            lines.append("  </testsuite>")
            return lines.joined(separator: "\n")
        }
        let all = budgetCases + fingerprintCases
        let failures = all.filter { $0.failure != nil }.count
        let skipped = all.filter { $0.skipped != nil }.count
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="stallreport gate" tests="\(all.count)" failures="\(failures)" errors="0" skipped="\(skipped)">
            \(suite("stallreport.budgets", budgetCases))
            \(suite("stallreport.fingerprints", fingerprintCases))
            </testsuites>

            """
    }

    /// Escapes text for XML attributes and character data; drops characters XML 1.0 forbids.
    package func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
