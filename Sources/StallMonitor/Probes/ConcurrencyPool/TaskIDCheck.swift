import CStallMonitor

/// Checks, when a monitor starts, that a task's 32-bit job id lies where ``PoolLayout`` reads it.
enum TaskIDCheck {
    /// Why the id word cannot be trusted, checked inside the running task at `task` and in a
    /// task made for the check on `executor` (so that two ids, one of them not 1, are compared);
    /// nil when both ids match what the runtime says and the running task's `ResumeTask` lies in
    /// executable code.
    static func problem(inRunningTask task: UInt, otherTasksOn executor: some TaskExecutor) -> String? {
        let other = Task.detached(executorPreference: executor) {}
        return withExtendedLifetime(other) {
            let made = unsafeBitCast(other, to: UInt.self)
            for address in [task, made] {
                if let problem = idProblem(of: address) { return problem }
            }
            var resume: UInt = 0
            guard CStallMonitor_read_memory(task &+ UInt(PoolLayout.resumeTaskOffset), &resume, 8) == 0 else {
                return "the running task's header cannot be read"
            }
            var code = ExecutableRanges()
            guard code.contains(resume, now: CStallMonitor_monotonic_ns()) else {
                return
                    "the running task's resume function (byte \(PoolLayout.resumeTaskOffset) of its header) is not in executable code"
            }
            return nil
        }
    }

    /// Why the id word of the task at `address` does not match the runtime's id of it (nil when it does).
    private static func idProblem(of address: UInt) -> String? {
        var word: UInt32 = 0
        guard CStallMonitor_read_memory(address &+ UInt(PoolLayout.jobIDOffset), &word, 4) == 0 else {
            return "a task's header cannot be read"
        }
        guard let runtime = runtimeID(of: address) else {
            return
                "the runtime does not say a task's id (UnownedJob's description is \"\(unsafeBitCast(address, to: UnownedJob.self))\")"
        }
        guard word != 0, UInt64(word) == runtime & 0xffff_ffff else {
            return
                "byte \(PoolLayout.jobIDOffset) of a task's header holds \(word), the runtime says its id is \(runtime)"
        }
        return nil
    }

    /// The task id the runtime gives in `UnownedJob`'s description (`UnownedJob(id: 42)`).
    private static func runtimeID(of address: UInt) -> UInt64? {
        let text = "\(unsafeBitCast(address, to: UnownedJob.self))"
        guard let start = text.firstRange(of: "id: ")?.upperBound else { return nil }
        return UInt64(text[start...].prefix { $0.isNumber })
    }
}
