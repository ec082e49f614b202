import Foundation
import StallReportKit
import StallReportKitTestSupport
import Testing

/// Hostile strings (terminal escape sequences, OSC, a newline followed by a GitHub workflow
/// command, Markdown and HTML syntax) in every string field of a report and in its file name,
/// through every subcommand and format: the bytes written never hold a control character from
/// report data, no line of report data starts a workflow command, and Markdown tables keep their
/// shape.
@Suite("stallreport: hostile strings are printed harmlessly")
struct StallReportCLIHostileStringTests {
    /// ESC sequences (clear screen, OSC window title ended by BEL), a newline starting a workflow
    /// command, Markdown table, link and code syntax, and HTML.
    static let hostile =
        "x\u{1B}[2J\u{1B}]0;pwned\u{07}\n::add-mask::secret\r\n::warning file=a.swift::boom|col|[link](http://e.invalid)<b>bold</b>`tick`\u{9B}31m"

    /// A report with `hostile` in its symbols, file, thread name, loop kind, mode, scene, syscall
    /// and process strings.
    static func report() -> StallReport {
        var report = DemoScenario.report(
            ["App.\(hostile)()", "App.caller\(hostile)()"], 600, minute: 1, syscall: "nanosleep\(hostile)")
        for index in report.frames.indices where report.frames[index].inApp {
            report.frames[index].file = "/work/app/\(hostile).swift"
        }
        report.loop.threadName = "main\(hostile)"
        report.loop.mode = "mode\(hostile)"
        report.scene = "scene\(hostile)"
        report.process.executableName = "App\(hostile)"
        report.process.hostName = "host\(hostile)"
        report.sampling.unwinderNote = "note\(hostile)"
        report.symbolication.note = "sym\(hostile)"
        return report
    }

    @Test("No control character nor workflow command from report data reaches any output")
    func everyCommand() throws {
        let directory = try ReportDirectory()
        let reports = try directory.subdirectory("reports")
        let scratch = try directory.subdirectory("out")
        try EveryCommand.prepare(scratch: scratch)
        let name = "stall-\(Self.hostile.replacingOccurrences(of: "/", with: "∕")).json"
        let hostileFile = try ReportFixtures.write(Self.report(), to: reports, name: name)
        let plain = try ReportFixtures.write(
            DemoScenario.report(DemoScenario.spinSymbols, 300, minute: 0), to: reports, name: "plain.json")
        // A broken file with a hostile name: its stderr line must be harmless too.
        try directory.file("reports/broken-\(Self.hostile.replacingOccurrences(of: "/", with: "∕")).json", "{")

        for invocation in EveryCommand.invocations(
            directory: reports.path, files: [hostileFile.path, plain.path], scratch: scratch)
        {
            let run = try StallReportCLI.run(invocation.arguments, environment: invocation.environment)
            #expect([0, 1, 2].contains(run.status), "\(invocation): \(run)")
            if ["summarize", "show", "gate"].contains(invocation.name) {
                #expect(run.stdout.contains("\\u{1B}[2J"), "\(invocation): escapes shown visibly: \(run)")
            }
            var outputs = [("stdout", Data(run.stdout.utf8)), ("stderr", Data(run.stderr.utf8))]
            if let file = invocation.outputFile, let data = FileManager.default.contents(atPath: file.path) {
                outputs.append((file.lastPathComponent, data))
            }
            for (what, data) in outputs {
                // JSON and HTML escape C0 controls themselves; C1 controls are plain characters there.
                let structured =
                    what == "stdout"
                    && ["json", "speedscope", "chrome-trace"].contains { invocation.name.hasSuffix($0) }
                Self.checkBytes(data, "\(invocation) \(what)", allowC1: structured || what.hasSuffix(".html"))
                let text = String(decoding: data, as: UTF8.self)
                if (invocation.name.contains("markdown") && what == "stdout") || what.hasSuffix(".md") {
                    Self.checkMarkdown(text, "\(invocation) \(what)")
                }
                if invocation.name == "export folded" && what == "stdout" {
                    for line in text.split(separator: "\n") {
                        #expect(
                            line.range(of: #" [0-9]+$"#, options: .regularExpression) != nil, "folded line: \(line)")
                    }
                }
            }
        }
    }

    /// No C0 control other than newline, no DEL, no C1 control; no line starts a workflow
    /// command other than the annotations stallreport writes itself.
    static func checkBytes(_ data: Data, _ context: String, allowC1: Bool) {
        let text = String(decoding: data, as: UTF8.self)
        let bad = text.unicodeScalars.filter { scalar in
            (scalar.value < 0x20 && scalar != "\n") || scalar.value == 0x7F
                || (!allowC1 && (0x80...0x9F).contains(scalar.value))
        }
        #expect(
            bad.isEmpty,
            "\(context): control characters \(bad.map { String($0.value, radix: 16) }) in \(text.prefix(3000))")
        for line in text.split(separator: "\n") where line.hasPrefix("::") {
            #expect(
                line.hasPrefix("::error ") || line.hasPrefix("::warning ") || line.hasPrefix("::notice "),
                "\(context): \(line)")
            // Properties (before the second `::`) have every `:` and `,` of data escaped.
            let properties = line.dropFirst(2).components(separatedBy: "::").first ?? ""
            #expect(!properties.contains(":"), "\(context): \(line)")
        }
    }

    /// Outside code spans, no raw HTML tag or link, and no unescaped pipe inside a table row's cells
    /// beyond the header's column count.
    static func checkMarkdown(_ text: String, _ context: String) {
        var columns = 0
        for line in text.split(separator: "\n").map(String.init) {
            let outsideCode = line.replacingOccurrences(of: #"`[^`]*`"#, with: "", options: .regularExpression)
            #expect(!outsideCode.contains("<b>"), "\(context): \(line)")
            #expect(
                outsideCode.range(of: #"(^|[^\\])\[link"#, options: .regularExpression) == nil, "\(context): \(line)")
            guard line.hasPrefix("|") else {
                columns = 0
                continue
            }
            let pipes = line.replacingOccurrences(of: "\\|", with: "").filter { $0 == "|" }.count
            if columns == 0 { columns = pipes } else { #expect(pipes == columns, "\(context): \(line)") }
        }
    }
}
