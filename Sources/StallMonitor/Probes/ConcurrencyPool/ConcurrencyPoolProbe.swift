import CStallMonitor
import Dispatch
import Glibc

/// The pull probe of the Swift concurrency pool (the global executor's Dispatch workers), which
/// runs `Task {}`, `Task.detached`, task-group children, `async let`, actors on the default
/// executor, and the async route handlers of Hummingbird 2 and Vapor 4.
///
/// No executor is replaced and no job is wrapped. Every `interval` the watchdog reads, for each
/// worker, the job it runs now (``PoolJobKey``): the runtime's own thread-local active-task word
/// and the task's 32-bit id (two `process_vm_readv`s of 8 and 4 bytes, ``PoolLayout``), and the
/// task's entry in a table the enqueue hook writes. A worker runs the same job at consecutive
/// looks when it runs the same task (same address, same id) and that task was not enqueued in
/// between; otherwise the span ends there: another task, none, a task freed and another made at
/// its address, or a task that suspended and was resumed (on this worker or another). A span is
/// dated from its enqueue when that came after the look before (the hook notes when, with a
/// coarse clock: a free worker takes a job at once), else from the middle of the interval in
/// which it appeared (after a sleep of the quiet pool, of the last `interval` before the look: a
/// job that did not pass the hook began at an unknown moment of the sleep), and ends at the
/// middle of the interval in which it was gone (or before its task was enqueued again, or before
/// the worker fell asleep after it, when that came first: ``JobEndWitness``, read for a job older
/// than a quarter of the threshold), so the interval bounds the error of a
/// duration (half an interval at each end, at most). At `stop` a last look ends a span whose job
/// is gone the same way, not at the stop. Each worker keeps one slot (a
/// ``PoolSlotProbe`` with its own span tracker and watch) while it runs tasks, so stalls on
/// several workers at once are each sampled and reported; when libdispatch runs more workers than
/// there are slots, a worker that runs a task takes the slot of one that runs none.
///
/// While a worker is busy the probe also keeps one token (a no-op block) queued on the pool: its
/// enqueue-to-start delay is the pool's delay for new work (the `pool.delay` metric), a token
/// that waits longer than the threshold means every worker is held (starvation: said once per
/// token, with each worker and how long its job has held it), and the worker that runs it is
/// armed for sampling (the sampling signal unblocked: libdispatch workers block every signal but
/// `SIGPROF`, the one used by default). The first token is queued at start only where the pool
/// has a worker already: the monitor starts none itself.
///
/// While no worker runs a task the watchdog sleeps: a pass-through hook on the runtime's global
/// enqueue (`swift_task_enqueueGlobal_hook`, handing every job on unchanged) wakes it when work
/// arrives, and it looks every `interval` again until the pool has been quiet for a grace period
/// (five intervals, at least 50 ms: a job may start a little after it was queued). New tasks,
/// resumed continuations, finished `Task.sleep`s and default actors all pass there. Jobs that
/// reach a worker another way (a custom executor that runs them on a `DispatchQueue`), or a host
/// that installs its own hook later, are seen at a look every 2 s while the pool sleeps.
///
/// Known limit: a task that suspends and is resumed on the same worker between two looks is
/// seen as one job when its resumption did not pass the global enqueue hook (it was resumed on an
/// actor that was already running, or on a task executor of the app's), when another job that
/// falls in the same entry of the table was enqueued after it and before the look, when it was
/// enqueued a multiple of 16 times between two looks with nothing else in its entry, or while the
/// hook is not ours (another was installed after it). A task freed and another made at its
/// address between two looks is seen as one job only where the task id could not be checked
/// when the monitor started (``PoolLayout/taskIDOffset`` is nil, said in a log message). Each
/// of these merges jobs; nothing splits one job.
final class ConcurrencyPoolProbe: @unchecked Sendable {
    /// The loop kind reports name.
    static let loopKind = LoopKind.concurrencyPool.rawValue
    /// What each slot shares with the pool (the pool holds these, never the slots, which hold it).
    private let slotStates: [PoolSlotState]
    /// Workers armed by a token, shared by the slots (any slot may meet any worker).
    let armedWorkers = Locked<[Int32: MonitoredThread.ArmedWorker]>([:])
    /// What the probe tells the monitor (set once, before the watchdog starts).
    struct Observers: Sendable {
        /// Each token's enqueue-to-start delay in nanoseconds.
        var delay: @Sendable (UInt64) -> Void
        /// The pool has started no new job for longer than the threshold: how long the token has
        /// waited, and each worker (thread id, name, nanoseconds its task has held it, 0 when it runs none).
        var starved: @Sendable (UInt64, [HeldWorker]) -> Void
        /// Makes and writes the starvation's report.
        var report: PoolStarvationReport
    }

    /// A worker as a starvation warning names it.
    struct HeldWorker: Sendable {
        var tid: Int32
        var name: String
        /// How long the task it runs now has held it (about), nanoseconds; nil when it runs no task.
        var heldFor: UInt64?
    }

    let observers = Locked<Observers?>(nil)

    private let layout: PoolLayout
    private let threshold: UInt64
    private let interval: UInt64
    /// The token queued on the pool: when it last ran, and the workers it armed.
    private let token = WorkerArmingToken()

    // Watchdog-thread state (and `trackers`, set by the slots' attach before the watchdog starts).
    private var trackers: [SpanTracker?]
    private var workers: [Int32: Worker] = [:]
    /// Threads seen that are not pool workers, with when they were first seen (forgotten now and
    /// then: names can change). A thread starts with its creator's name and libdispatch names a
    /// worker after it started, so a thread seen for less than a second is looked at again.
    private var others: [Int32: UInt64] = [:]
    private var lastScan: UInt64?
    /// The process's thread count and the time at the last full read of its thread list.
    private var threadCount: Int?
    /// The count a scan read at this look (`now`), for the settled check of the same look.
    private var countAtLook: (now: UInt64, count: Int?)?
    private var lastFullScan: UInt64 = 0
    private var lastNamesCheck: UInt64 = 0
    /// When the next scan is due (every `rescanInterval`), and until when every look scans: new
    /// work woke the watchdog, and the worker that runs it may be a thread libdispatch starts now
    /// (met at a scan, and dated from the scan before).
    private var nextScan: UInt64 = 0
    private var scanEveryLookUntil: UInt64 = 0
    private let rescanInterval: UInt64
    /// The coarse clock's resolution (a scheduler tick), which the enqueue times are read with.
    private let coarseTick = Kernel.coarseClockResolution
    private var tokenQueuedAt: UInt64?
    /// The report of the starvation in progress (the outstanding token waits past the threshold).
    private var starvation: StallRecording?
    /// When the pool is looked at, and the watchdog's sleeps that an enqueue ends, once the probe
    /// watches the pool's enqueues (until then it cannot be woken: looked at every interval).
    private var looks: EnqueueWakeSchedule
    /// Whether this probe installed the enqueue hook (from attach to the end of polling).
    private var hooked = false
    /// `/proc/self/task`, kept open for the looks (watchdog thread).
    private let taskDirectory = TaskDirectory()

    /// One pool worker as the watchdog knows it.
    private struct Worker {
        var pointer: UInt
        var slot: Int?
        /// The job it ran at the last look (task 0: none), and whether a span of it is open.
        var job = PoolJobKey()
        var spanOpen = false
        var lastLook: UInt64
        /// When the job it runs now was first seen (the middle of the interval it appeared in).
        var taskSince: UInt64 = 0
        /// When the scan met it.
        var metAt: UInt64 = 0
        /// When its last span ended (0: none has).
        var spanEndedAt: UInt64 = 0
        /// Its scheduler accounting, read at the last look while it ran a job old enough to be
        /// reported (``JobEndWitness``).
        var witness: JobEndWitness?
        /// Its `stat` file, kept open: whether it sleeps, for the settled check of a quiet pool.
        var statFile: ThreadStatFile

        /// The middle of the interval from its last look (or from `floor`, when later) to a look at `now`.
        func middleOfInterval(until now: UInt64, from floor: UInt64 = 0) -> UInt64 {
            let from = max(lastLook, min(floor, now))
            return from + (now &- from) / 2
        }
    }

    init(layout: PoolLayout, threshold: UInt64, interval: UInt64, slots: Int) {
        self.layout = layout
        self.threshold = threshold
        self.interval = max(interval, 1_000_000)
        self.looks = EnqueueWakeSchedule(
            interval: self.interval, takeFlag: { CStallMonitor_pool_enqueued($0) != 0 },
            arm: { CStallMonitor_pool_arm($0, $1 ? 1 : 0) }, postsLate: true)
        self.rescanInterval = max(self.interval * 5, 50_000_000)
        trackers = Array(repeating: nil, count: slots)
        slotStates = (0..<slots).map { _ in PoolSlotState() }
    }

    /// The slots the monitor makes one watched loop each. They hold the pool; it holds none of
    /// them, so a stopped monitor's pool goes away with its slots.
    func makeSlots() -> [PoolSlotProbe] {
        slotStates.indices.map { PoolSlotProbe(index: $0, pool: self, state: slotStates[$0]) }
    }

    /// How many slots a pool gets: twice the CPUs (libdispatch adds workers beyond the CPU count
    /// when workers block), at least 8, at most 64.
    static func slotCount() -> Int {
        min(64, max(8, 2 * sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    func attach(slot: Int, tracker: SpanTracker, arm: @escaping @Sendable () -> Void) {
        trackers[slot] = tracker
        guard slot == 0 else { return }
        hooked = CStallMonitor_pool_hook_install() == 0
        token.arm(with: arm)
        // The first token arms a worker there is already; where there is none, the pool's first
        // busy look queues it (a token would start the pool's first worker, and libdispatch's
        // workqueue monitor with it, in a host that may never use the pool).
        if PoolWorkerScan.anyPoolWorker() { queueToken(at: CStallMonitor_monotonic_ns()) }
    }

    /// Workers running declared long work (``StallMonitor/expectLongWork(_:)``) the watchdog had
    /// not met when it began, with how many such calls are open on each.
    private let expectedOn = Locked<[Int32: Int]>([:])

    /// Runs `body` on worker `tid`, the span the watchdog next begins there marked as expected
    /// long work (for a worker it has not met yet).
    func expectingLongWork<Result, Failure: Error>(
        on tid: Int32, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        expectedOn.withLock { $0[tid, default: 0] += 1 }
        defer {
            expectedOn.withLock { open in
                open[tid, default: 1] -= 1
                if open[tid] == 0 { open[tid] = nil }
            }
        }
        return try body()
    }

    func detach() {
        token.detach()
    }

    var isDetached: Bool { token.isDetached }

    private func queueToken(at now: UInt64) {
        tokenQueuedAt = now
        DispatchQueue.global().async { [token] in token.ran() }
    }

    func poll(now: UInt64) -> UInt64? {
        guard !isDetached else { return nil }
        // A job that reached a worker without passing the enqueue hook, after a sleep by plan.
        let unknownStartFloor = looks.earliestUnknownStart(now: now)
        let wokeAt = noteEnqueues(now: now)
        let producerWoke = wokeAt != nil
        if producerWoke { scanEveryLookUntil = now &+ 100_000_000 }
        // The look after a sleep that no work ended: the previous look found the pool quiet.
        let quietLook = looks.quiet && !producerWoke && looks.lastEnqueueSeen != now
        if now >= nextScan || now < scanEveryLookUntil { scan(now: now, quietLook: quietLook) }
        var busy = false
        for (tid, var worker) in workers {
            guard let job = PoolJobKey.read(threadPointer: worker.pointer, layout: layout) else {
                forget(tid, at: now)
                continue
            }
            let newJob = job.startsNewJob(after: worker.job)
            // A worker idle through a sleep that new work ended starts at the wake-up (see
            // noteEnqueues); otherwise somewhere since its last look, taken as the middle.
            let changedAt =
                worker.lastLook == wokeAt
                ? worker.lastLook : worker.middleOfInterval(until: now, from: unknownStartFloor)
            // The new job, when enqueued since the last look, from its enqueue (the watchdog may
            // have woken late, the interval grown long); the job before ends at the middle, or
            // before its task was enqueued again if that came first.
            if newJob {
                worker.taskSince = job.startEstimate(lastLook: worker.lastLook, now: now, tick: coarseTick) ?? changedAt
            }
            if worker.spanOpen, newJob {
                let endedAt = endOfJob(worker, middle: changedAt, now: now, idle: job.task == 0)
                if let slot = worker.slot { trackers[slot]?.spanEnded(at: endedAt) }
                worker.spanOpen = false
                worker.spanEndedAt = endedAt
            }
            if job.task != 0, !worker.spanOpen, let slot = worker.slot, let tracker = trackers[slot] {
                if expectedOn.withLock({ $0[tid] != nil }) { tracker.markExpectedLongWork() }
                tracker.spanBegan(at: worker.taskSince, switches: 0, thread: tid)
                worker.spanOpen = true
            }
            if job.task != 0 { busy = true }
            worker.witness =
                worker.spanOpen && now &- min(now, worker.taskSince) >= threshold / 4
                ? JobEndWitness.read(tid: tid, keeping: worker.witness) : nil
            worker.job = job
            worker.lastLook = now
            workers[tid] = worker
        }
        if workers.values.contains(where: { $0.slot == nil && $0.job.task != 0 }) { lendSlots() }
        let observers = self.observers.withLock { $0 }
        if let queued = tokenQueuedAt {
            let ran = token.lastRan
            if ran >= queued {
                tokenQueuedAt = nil
                if let starvation { observers?.report.end(starvation, at: ran, ongoing: false) }
                starvation = nil
                observers?.delay(ran - queued)
            } else if starvation == nil, now &- queued > threshold, let observers {
                let held = workers.sorted { $0.key < $1.key }.map { tid, worker in
                    HeldWorker(
                        tid: tid, name: ThreadProcFiles.threadName(tid: tid),
                        heldFor: worker.job.task == 0 ? nil : now &- min(now, worker.taskSince))
                }
                observers.starved(now &- queued, held)
                starvation = observers.report.begin(queuedAt: queued, now: now, workers: held)
            }
        }
        if tokenQueuedAt == nil, busy { queueToken(at: CStallMonitor_monotonic_ns()) }
        // Young threads whose names are still looked at need no look while the pool sleeps: the
        // next enqueue wakes the watchdog, and its first look scans them again.
        let idle = !busy && tokenQueuedAt == nil && starvation == nil && CStallMonitor_pool_hook_active() != 0
        // A look that took an enqueue is not settled (work came in since the last look): the next
        // look checks, which saves the `/proc` reads of every idle look of a busy server. The
        // quick look after an enqueue woke the watchdog checks even so: a server's timer job
        // often enqueues a second one (an actor hop) that this look takes, and would cost the
        // idle server another wake-up an interval later.
        let settled =
            idle && (looks.lastEnqueueSeen != now || looks.followsWake) && looks.settledEndsGrace(now: now)
            && isSettled(now: now)
        return looks.nextLook(now: now, idle: idle, settled: settled)
    }

    /// Whether no job can be on its way to a worker: every worker met runs no task (the caller
    /// knows) and sleeps in the kernel, none was met in the last second (its name may still
    /// change), no other thread is young, and the process has as many threads as at the scan.
    /// A job handed to libdispatch wakes a sleeping worker (runnable from then on) or starts a
    /// thread before the enqueue returns, and the enqueue hook notes the enqueue only after that
    /// (a look that took its flag), so none is queued unseen. The count a scan of this look read
    /// (after the flag was taken) serves: a thread started for a job noted since then sets the
    /// flag again, which keeps the watchdog from sleeping.
    private func isSettled(now: UInt64) -> Bool {
        guard !workers.isEmpty, !isSettling(now: now) else { return false }
        let read = countAtLook.flatMap { $0.now == now ? $0.count : nil } ?? taskDirectory.threadCount()
        guard let count = read, count == threadCount else { return false }
        return workers.values.allSatisfy { $0.statFile.isAsleep() }
    }

    /// When the job a worker ran at its last look ended, seen gone at a look at `now` whose
    /// interval's middle is `middle`: that middle, or earlier when its task was enqueued again in
    /// between (it had stopped running then) or when the worker, `idle` now, stopped being
    /// runnable before (``JobEndWitness``), never before the last look.
    private func endOfJob(_ worker: Worker, middle: UInt64, now: UInt64, idle: Bool) -> UInt64 {
        var end = middle
        if idle, let stopped = worker.witness?.stoppedRunning(before: now) { end = min(end, stopped) }
        if let bound = worker.job.endedBy(tick: coarseTick) { end = min(end, bound) }
        return max(worker.lastLook, end)
    }

    /// Gives each worker that runs a task but has no slot (libdispatch started more workers than
    /// there are slots) the slot of a worker that runs none, its span dated from when its job
    /// began (not before the slot's last span ended): a slot is lent, not kept while its worker idles.
    private func lendSlots() {
        var donors = workers.filter { $0.value.slot != nil && $0.value.job.task == 0 && !$0.value.spanOpen }.map(\.key)
            .sorted()
        for tid in workers.keys.sorted() {
            guard var worker = workers[tid], worker.slot == nil, worker.job.task != 0 else { continue }
            guard let donorTid = donors.popLast(), var donor = workers[donorTid], let slot = donor.slot else { return }
            donor.slot = nil
            workers[donorTid] = donor
            worker.slot = slot
            slotStates[slot].assigned.store(tid, ordering: .relaxed)
            if let tracker = trackers[slot] {
                if expectedOn.withLock({ $0[tid] != nil }) { tracker.markExpectedLongWork() }
                tracker.spanBegan(at: max(worker.taskSince, donor.spanEndedAt), switches: 0, thread: tid)
                worker.spanOpen = true
            }
            workers[tid] = worker
        }
    }

    /// Takes the enqueue flag and returns when a producer woke the watchdog from a sleep just now
    /// (nil: none did). After a sleep an enqueue ended, a task found running on a worker idle
    /// through it (or on a worker met now) is dated from the wake-up's post: the hook posts just
    /// before it hands the job on, and a free worker takes it at once, while the watchdog itself
    /// may wake tens of milliseconds later on a loaded machine (the middle of that interval took
    /// half of it off the stall).
    private func noteEnqueues(now: UInt64) -> UInt64? {
        let (enqueued, woke) = looks.noteEnqueues(now: now)
        guard enqueued, let woke else { return woke }
        for (tid, worker) in workers where worker.job.task == 0 && worker.lastLook < woke {
            workers[tid]?.lastLook = woke
        }
        if let scanned = lastScan, scanned < woke { lastScan = woke }
        return woke
    }

    /// Whether a thread met in the last second is still looked at (its name may change).
    private func isSettling(now: UInt64) -> Bool {
        workers.values.contains { now &- $0.metAt < 1_000_000_000 }
            || others.values.contains { now &- $0 < 1_000_000_000 }
    }

    /// The watchdog is about to sleep: while the pool is quiet, the next enqueue wakes it.
    func prepareToSleep(on wakeup: WakeupSignal) -> Bool {
        looks.prepareToSleep(offering: hooked ? wakeup.slot : nil) { CStallMonitor_pool_watch($0) }
    }

    func wokeUp(at now: UInt64) {
        looks.wokeUp()
    }

    /// Meets workers that appeared since the last scan and forgets those that exited (every
    /// `rescanInterval`, and at every look for 100 ms after new work woke the watchdog: a job
    /// that starts on a thread libdispatch has just started is dated from the scan before it was
    /// met). The thread list is read again only when the process's thread count changed, a thread
    /// met in the last second is still being looked at, or half a second has passed (a thread that
    /// exited while another started keeps the count) unless this is the look of a quiet pool that
    /// nothing woke (`quietLook`: no work came, so a new thread runs none of it): otherwise a scan
    /// costs one `stat`.
    private func scan(now: UInt64, quietLook: Bool) {
        nextScan = now &+ rescanInterval
        let count = taskDirectory.threadCount()
        countAtLook = (now, count)
        let looking = isSettling(now: now)
        if let count, count == threadCount, !looking, quietLook || now &- lastFullScan < 500_000_000 {
            lastScan = now
            return
        }
        threadCount = count
        lastFullScan = now
        // Names can change (a thread named later): every thread is looked at again now and then,
        // keeping when it was first seen (an old thread is not a young one to keep looking at).
        let recheckNames = now &- lastNamesCheck >= 10_000_000_000
        if recheckNames { lastNamesCheck = now }
        let alive = Set(taskDirectory.threadIDs())
        for tid in workers.keys where !alive.contains(tid) { forget(tid, at: now) }
        others = others.filter { alive.contains($0.key) }
        // A thread met in its first moments may have had its creator's name (a pool worker's
        // name, for an overcommit worker a pool worker created): look at it again for a second.
        for (tid, worker) in workers where now &- worker.metAt < 1_000_000_000 {
            if !PoolWorkerScan.isPoolWorker(named: ThreadProcFiles.threadName(tid: tid)) {
                forget(tid, at: now)
                others[tid] = worker.metAt
            }
        }
        var fresh: Set<Int32> = []
        for tid in alive where workers[tid] == nil {
            if let seen = others[tid], now &- seen > 1_000_000_000, !recheckNames { continue }
            if PoolWorkerScan.isPoolWorker(named: ThreadProcFiles.threadName(tid: tid)) {
                fresh.insert(tid)
                others[tid] = nil
            } else if others[tid] == nil {
                others[tid] = now
            }
        }
        let since = lastScan ?? now
        lastScan = now
        guard !fresh.isEmpty else { return }
        let pointers = PoolWorkerScan.threadPointers(of: fresh, layout: layout)
        var used = Set(workers.values.compactMap(\.slot))
        for tid in fresh {
            guard let pointer = pointers[tid] else { continue }  // not found this time: tried at the next scan
            let slot = slotStates.indices.first { !used.contains($0) }
            if let slot {
                used.insert(slot)
                slotStates[slot].assigned.store(tid, ordering: .relaxed)  // expectLongWork on the worker finds its slot
            }
            // A worker met now began whatever it runs somewhere since the previous scan.
            workers[tid] = Worker(
                pointer: pointer, slot: slot, lastLook: since, taskSince: since, metAt: now,
                statFile: ThreadStatFile(tid: tid))
        }
    }

    /// A worker exited (or its memory is gone): its span ends.
    private func forget(_ tid: Int32, at now: UInt64) {
        guard let worker = workers.removeValue(forKey: tid) else { return }
        if worker.spanOpen, let slot = worker.slot { trackers[slot]?.spanEnded(at: now) }
        if let slot = worker.slot { slotStates[slot].assigned.store(0, ordering: .relaxed) }
    }

    /// The thread pointer of worker `tid`, when met (watchdog thread).
    func threadPointer(of tid: Int32) -> UInt? { workers[tid]?.pointer }

    func finishPolling() {
        if hooked { CStallMonitor_pool_hook_uninstall() }
        hooked = false
        let now = CStallMonitor_monotonic_ns()
        // A last look: a job that ended since the look before (the watchdog may have been late)
        // ends in the middle of that interval, not now.
        for (tid, worker) in workers where worker.spanOpen {
            let job = PoolJobKey.read(threadPointer: worker.pointer, layout: layout)
            if job.map({ $0.startsNewJob(after: worker.job) }) ?? true, let slot = worker.slot {
                let idle = job.map { $0.task == 0 } ?? false
                trackers[slot]?.spanEnded(
                    at: endOfJob(worker, middle: worker.middleOfInterval(until: now), now: now, idle: idle))
                workers[tid]?.spanOpen = false
            }
        }
        for tid in Array(workers.keys) { forget(tid, at: now) }
        if let starvation, let observers = observers.withLock({ $0 }) {
            observers.report.end(starvation, at: now, ongoing: true)
        }
        starvation = nil
    }
}
