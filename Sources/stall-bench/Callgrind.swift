import Foundation

/// Counts instructions with `valgrind --tool=callgrind`: deterministic where wall time on a
/// shared machine swings by tens of percent. Used by figure 17 and `stall-bench instruction-counts`.
struct Callgrind {
    /// A copy of this executable without debug sections: valgrind 3.19 cannot read the DWARF 5
    /// of a Swift debug build (the symbol table stays, for `--toggle-collect`).
    let workload: URL
    private let scratch: URL

    /// Why callgrind cannot run here (nil when it can): valgrind or objcopy missing.
    static var unavailableReason: String? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/objcopy")
        else {
            return "valgrind or objcopy is not installed (apt-get install valgrind binutils)"
        }
        return nil
    }

    /// Makes the stripped copy of `executable` in `scratch`.
    init(executable: URL, scratch: URL) throws {
        if let reason = Self.unavailableReason { throw BenchError(reason) }
        self.scratch = scratch
        workload = scratch.appendingPathComponent("\(executable.lastPathComponent)-nodebug")
        try? FileManager.default.removeItem(at: workload)
        let strip = try Subprocess.run(
            "/usr/bin/objcopy", ["--strip-debug", executable.path, workload.path], scratch: scratch)
        guard strip.status == 0 else { throw BenchError("objcopy --strip-debug failed: \(strip.stderr.suffix(300))") }
    }

    /// Instructions counted inside functions whose names match one of `functions` (callgrind
    /// `--toggle-collect` patterns; callees included) while the workload runs with `arguments`.
    /// `environment`: variables set for the workload (`NAME=value`).
    func instructions(in functions: [String], _ arguments: [String], environment: [String] = []) throws -> Double {
        let run = try Subprocess.run(
            "/usr/bin/env",
            environment + [
                "/usr/bin/valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            ] + functions.map { "--toggle-collect=\($0)" } + [workload.path] + arguments, scratch: scratch)
        guard run.status == 0,
            let line = run.stderr.split(separator: "\n").first(where: { $0.contains("Collected :") }),
            let value = line.split(separator: ":").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) })
        else {
            throw BenchError(
                "callgrind gave no count for \(arguments.joined(separator: " ")) (exit \(run.status)): \(run.stderr.suffix(400))"
            )
        }
        return value
    }
}
