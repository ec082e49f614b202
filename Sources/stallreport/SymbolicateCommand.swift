import ArgumentParser
import Foundation
import StallReportKit

#if canImport(Glibc)
import Glibc
#endif

/// `stallreport symbolicate`: names the frames of reports offline.
struct SymbolicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "symbolicate",
        abstract: "Fill in symbols and file:line for frames that lack them, offline.",
        discussion: """
            For reports written by a stripped binary (or when the monitor could not
            name frames), names each frame's address from the images recorded in the
            report (path, load bias, GNU build ID) with llvm-symbolizer, and
            demangles Swift names with swift-demangle. Existing names are kept.

            FINDING THE FILES  (each must have the recorded build ID)
              in every --debug-dir: .build-id/xx/rest.debug, NAME.debug, NAME
              then the path recorded in the report
            /usr/lib/debug is searched too when it exists.

            TOOLS  llvm-symbolizer and swift-demangle are looked for next to the
            'swift' on PATH (the toolchain), then on PATH; --symbolizer and
            --demangler override. Without llvm-symbolizer nothing is done: exit 2.

            OUTPUT  each report is written to --output DIR under its file name, as
            compact JSON like the monitor writes it;
            reports are only rewritten in place with --in-place, atomically
            (temporary file, fsync, rename; permissions kept). When an app frame
            gets its name (a stripped build) or no frame had one (written with
            symbolicateInProcess: false), the fingerprint is computed again as the
            monitor computes it with names, so gate --baseline and diff match the
            same stall from an unstripped build; the old one is kept in
            symbolication.note. Reports whose app frames had names keep theirs.

            EXIT STATUS  0 done (images that could not be found are listed on
            stderr), 2 no symbolizer, usage or input error.

            EXAMPLES
              stallreport symbolicate --debug-dir build/debug-symbols reports/ --output symbolicated/
              stallreport symbolicate --in-place .stall-reports
              stallreport symbolicate --symbolizer /opt/swift/usr/bin/llvm-symbolizer r.json -o out/
            """
    )

    @Argument(
        help: ArgumentHelp("Report files and/or directories (searched recursively for *.json).", valueName: "path"))
    var paths: [String] = []

    @Option(
        name: .customLong("debug-dir"),
        help: ArgumentHelp("Directory with unstripped binaries or split debug files (repeatable).", valueName: "dir"))
    var debugDirectories: [String] = []

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Directory to write the symbolicated reports to (created if missing).", valueName: "dir"))
    var output: String?

    @Flag(help: "Rewrite the reports in place (atomically) instead of writing to --output.")
    var inPlace = false

    @Option(help: ArgumentHelp("Path of llvm-symbolizer.", valueName: "path"))
    var symbolizer: String?

    @Option(help: ArgumentHelp("Path of swift-demangle.", valueName: "path"))
    var demangler: String?

    @OptionGroup(title: "Reading")
    var reading: ReadingOptions

    func validate() throws {
        try requirePaths(paths)
        if inPlace && output != nil { throw ValidationError("use either --output DIR or --in-place, not both") }
        if !inPlace && output == nil {
            throw ValidationError("give --output DIR (reports are only rewritten in place with --in-place)")
        }
    }

    func run() throws {
        guard let tools = SymbolizerTools.find(symbolizer: symbolizer, demangler: demangler) else {
            throw Output.inputError(
                "llvm-symbolizer not found (looked next to the swift toolchain on PATH and on PATH); install the Swift toolchain or LLVM, or pass --symbolizer PATH"
            )
        }
        let scan = ReportScanner(reportEmptyDirectories: !reading.allowEmpty).scan(paths)
        var problems = scan.problems
        let loader = ReportLoader(maxFileSize: reading.maxFileSize * 1024 * 1024)
        var loaded: [(path: String, report: StallReport)] = []
        for path in scan.files {
            switch loader.load(path: path) {
            case .success(let report): loaded.append((path, report))
            case .failure(let error): problems.append(ReportProblem(path: path, message: error.description))
            }
        }
        Reading.printProblems(problems)
        if loaded.isEmpty && !reading.allowEmpty {
            throw Output.inputError("no valid report found in \(paths.joined(separator: " "))")
        }
        var directories = debugDirectories
        if FileManager.default.fileExists(atPath: "/usr/lib/debug") { directories.append("/usr/lib/debug") }
        let symbolicator = ReportSymbolicator(tools: tools, locator: SymbolFileLocator(debugDirectories: directories))
        let (outcomes, notes) = symbolicator.symbolicate(loaded.map(\.report))
        for note in notes { Output.note(note) }
        if let output {
            do {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            } catch {
                throw Output.inputError("cannot create \(output): \((error as NSError).localizedDescription)")
            }
        }
        var usedNames: Set<String> = []
        for (index, outcome) in outcomes.enumerated() {
            let source = loaded[index].path
            let target: String
            var mode: mode_t = 0o600
            if inPlace {
                target = source
                var st = stat()
                if stat(source, &st) == 0 { mode = st.st_mode & 0o7777 }
            } else {
                target = Self.uniqueTarget(for: source, in: output!, used: &usedNames)
            }
            if inPlace && !outcome.changed {
                Output.stdout(
                    "unchanged \(source): nothing to fill in (\(outcome.unnamed) frame\(outcome.unnamed == 1 ? "" : "s") without a name)\n"
                )
                continue
            }
            do {
                try AtomicFileWriter.write(try outcome.report.fileData(), to: target, mode: mode)
            } catch {
                throw Output.inputError("cannot write \(target): \(error)")
            }
            var line =
                "wrote \(target): named \(outcome.named), located \(outcome.located), \(outcome.unnamed) still without a name"
            if let previous = outcome.previousFingerprint {
                line += "; fingerprint \(previous) -> \(outcome.report.fingerprint)"
            }
            Output.stdout(line + "\n")
        }
        if reading.strict && !problems.isEmpty {
            throw Reading.strictFailure(files: "\(problems.count) file\(problems.count == 1 ? "" : "s")")
        }
    }

    /// `dir/<file name>`, with `-2`, `-3`, … before `.json` when two inputs share a name.
    static func uniqueTarget(for source: String, in directory: String, used: inout Set<String>) -> String {
        let name = (source as NSString).lastPathComponent
        let stem = (name as NSString).deletingPathExtension
        let ext = (name as NSString).pathExtension
        var candidate = name
        var counter = 2
        while used.contains(candidate) {
            candidate = "\(stem)-\(counter)" + (ext.isEmpty ? "" : ".\(ext)")
            counter += 1
        }
        used.insert(candidate)
        return (directory as NSString).appendingPathComponent(candidate)
    }
}
