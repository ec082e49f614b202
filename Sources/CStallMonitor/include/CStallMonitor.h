// CStallMonitor: the C side of StallMonitor.
//
// Everything that must be C lives here: the sampling signal handler and its request protocol,
// libunwind and libdw loaded with dlopen(RTLD_LOCAL), the loaded-image list with GNU build IDs,
// Swift/C++ demangling through the runtime, and small thread helpers. Every symbol is prefixed
// `CStallMonitor`.
#ifndef CSTALLMONITOR_H
#define CSTALLMONITOR_H

// Linux only: the shim samples threads with a real-time signal, reads /proc and relies on glibc's
// thread layout. Building it elsewhere stops here with one sentence, not hundreds of errors.
#if !defined(__linux__)
#error "StallMonitor supports Linux only (x86_64 tested, aarch64 built from the same code): it samples threads with a real-time signal and reads /proc. Other platforms get nothing: no monitor, no stub API."
#endif

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <semaphore.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Clock and thread helpers (thread.c)

/// CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall).
static inline uint64_t CStallMonitor_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// CLOCK_MONOTONIC_COARSE in nanoseconds: the time of the last scheduler tick (vDSO, a few ns
/// where CLOCK_MONOTONIC costs tens on a VM). Never ahead of CLOCK_MONOTONIC; behind it by at
/// most about one tick (1–4 ms) on a running thread. For durations where a tick does not matter.
static inline uint64_t CStallMonitor_coarse_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// The calling thread's kernel thread id.
pid_t CStallMonitor_gettid(void);

// MARK: - The counter clock (counter_clock.c)

/// Nanoseconds per tick of ``CStallMonitor_counter_ticks`` as a 32.32 fixed-point number,
/// measured once per process against CLOCK_MONOTONIC (the first call may sleep up to 2 ms); 0
/// where the counter is no clock to use: the kernel does not keep time with it, this thread may
/// not read it, or STALLMONITOR_CLOCK=monotonic is set.
uint64_t CStallMonitor_counter_rate(void);

/// The CPU's time-stamp counter: about 9 ns where CLOCK_MONOTONIC costs 20 or more on a VM. A
/// clock only where ``CStallMonitor_counter_rate`` is not 0.
__attribute__((always_inline)) static inline uint64_t CStallMonitor_counter_ticks(void) {
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return CStallMonitor_monotonic_ns();
#endif
}

/// The name of the mode `run_loop` (a CFRunLoopRef) runs in now, NULL outside a run: a CFString
/// the loop keeps for its whole life (not retained for the caller; its address is the mode's
/// identity). Call it on the loop's own thread: once the loop's fields were found (see
/// CStallMonitor_run_loop_mode_discover) and checked, a mode equal to `last` (the one the caller
/// saw before) is read without the loop's lock. run_loop_mode.c.
const void *CStallMonitor_run_loop_mode(const void *run_loop, const void *last);

/// Finds, once per process, where a CFRunLoop keeps its current mode: an experiment on a run loop
/// of its own, on a thread of its own, which this call waits for (run_loop_mode_discovery.c).
/// Until it has run, CStallMonitor_run_loop_mode always takes the loop's lock.
void CStallMonitor_run_loop_mode_discover(void);

/// Whether CStallMonitor_run_loop_mode reads the current mode without the loop's lock now (its
/// offsets found and checked against CFRunLoopCopyCurrentMode). For tests and benchmarks.
int CStallMonitor_run_loop_mode_read_directly(void);

/// CPU time (user + system) consumed so far by thread `tid` of this process, in nanoseconds;
/// -1 when the thread no longer exists.
int64_t CStallMonitor_thread_cpu_ns(pid_t tid);

/// How many times the calling thread has given up the CPU voluntarily (slept, waited, blocked):
/// `getrusage(RUSAGE_THREAD)`'s `ru_nvcsw`, the count `/proc/<pid>/task/<tid>/status` calls
/// `voluntary_ctxt_switches`. A preemption does not count.
uint64_t CStallMonitor_thread_voluntary_switches(void);

/// How many times code on the calling thread declared that its run loop would have gone idle
/// here and is kept awake only by deferred idle-time work (``IdleWorkQueue``). A span tracker on
/// the same thread ends the span at the next wait when this changed during the span.
uint64_t CStallMonitor_loop_idle_yields(void);

/// Counts one such declaration for the calling thread.
void CStallMonitor_note_loop_idle_yield(void);

/// Makes sure the calling thread has an alternate signal stack of at least `min_size` bytes.
/// Returns 1 when a new stack was installed, 0 when the existing one suffices, -errno on failure.
int CStallMonitor_ensure_altstack(size_t min_size);

/// Unblocks `signal_number` for the calling thread (a mask inherited from a parent process or a
/// creating thread would otherwise hide the thread from the sampler). Returns 0 or -errno.
int CStallMonitor_unblock_signal(int signal_number);

/// Names the calling thread in the kernel (at most 15 bytes; `/proc/.../comm`, gdb, top).
/// Returns 0 or an errno.
int CStallMonitor_set_thread_name(const char *name);

/// Returns the heap's free pages to the kernel (glibc malloc_trim), after large caches were
/// freed. Returns 1 when memory was released.
int CStallMonitor_trim_heap(void);

/// Bytes the heap has handed out and not had back, every arena together (glibc mallinfo2).
size_t CStallMonitor_heap_in_use(void);

/// The process's resident set in bytes (/proc/self/statm); 0 when unknown.
long CStallMonitor_resident_bytes(void);

/// Waits on `sem` until CLOCK_MONOTONIC reaches `deadline_ns` (0: no deadline), retrying on EINTR.
/// Returns 0 when the semaphore was taken, ETIMEDOUT on timeout, another errno on failure.
int CStallMonitor_sem_wait_until(sem_t *sem, uint64_t deadline_ns);

// MARK: - Blocking calls on threads that must not block (blocking_*.c)

/// The calls watched for blocking, in the order of `CStallMonitor_blocking_call_name`.
typedef enum {
    CStallMonitorBlockingUsleep, CStallMonitorBlockingNanosleep, CStallMonitorBlockingClockNanosleep,
    CStallMonitorBlockingSleep, CStallMonitorBlockingRead, CStallMonitorBlockingWrite,
    CStallMonitorBlockingPread, CStallMonitorBlockingPread64, CStallMonitorBlockingPwrite,
    CStallMonitorBlockingPwrite64, CStallMonitorBlockingReadv, CStallMonitorBlockingWritev,
    CStallMonitorBlockingRecv, CStallMonitorBlockingRecvfrom, CStallMonitorBlockingRecvmsg,
    CStallMonitorBlockingSend, CStallMonitorBlockingSendto, CStallMonitorBlockingSendmsg,
    CStallMonitorBlockingAccept, CStallMonitorBlockingAccept4, CStallMonitorBlockingConnect,
    CStallMonitorBlockingPoll, CStallMonitorBlockingPpoll, CStallMonitorBlockingSelect,
    CStallMonitorBlockingPselect, CStallMonitorBlockingOpen, CStallMonitorBlockingOpen64,
    CStallMonitorBlockingOpenat, CStallMonitorBlockingOpenat64, CStallMonitorBlockingFsync,
    CStallMonitorBlockingFdatasync, CStallMonitorBlockingFlock, CStallMonitorBlockingStat,
    CStallMonitorBlockingLstat, CStallMonitorBlockingStatx, CStallMonitorBlockingPthreadMutexLock,
    CStallMonitorBlockingPthreadRwlockRdlock, CStallMonitorBlockingPthreadRwlockWrlock,
    CStallMonitorBlockingPthreadCondWait, CStallMonitorBlockingPthreadCondTimedwait,
    CStallMonitorBlockingPthreadJoin, CStallMonitorBlockingSemWait, CStallMonitorBlockingSemTimedwait,
    CStallMonitorBlockingFutex, CStallMonitorBlockingWaitpid, CStallMonitorBlockingWait4,
    CStallMonitorBlockingWaitid,
    CStallMonitorBlockingCallCount
} CStallMonitorBlockingCall;

/// Return addresses one blocking-call record keeps at most (the caller's first).
#define CSTALLMONITOR_BLOCKING_FRAMES 48
/// Async callers a blocking-call record holds at most.
#define CSTALLMONITOR_BLOCKING_ASYNC_CALLERS 32

/// Where a record's async callers were read from.
typedef enum {
    /// None: the thread ran no task, or the task's layout is unknown, or a context was unreadable.
    CStallMonitorAsyncChainNone = 0,
    /// From the running async function's own context (its frame keeps it below the saved frame
    /// pointer): the first caller is the innermost awaiting function.
    CStallMonitorAsyncChainRunningFrame = 1,
    /// From the context the job started in (a build whose async functions keep no frame): the first
    /// caller is the function the job started by calling; async functions entered since may be
    /// missing before it.
    CStallMonitorAsyncChainJobStart = 2,
} CStallMonitorAsyncChainSource;

/// One call that blocked a thread that must not block for at least the threshold.
typedef struct {
    /// A `CStallMonitorBlockingCall`.
    uint32_t call;
    /// The kernel thread id of the caller.
    int32_t thread_id;
    /// CLOCK_MONOTONIC when the call was made and how long it took, in nanoseconds.
    uint64_t start_ns;
    uint64_t duration_ns;
    /// The Swift task the thread ran (0: none), and the scope the scope hook named (0: none).
    uintptr_t task;
    uint64_t scope;
    /// Return addresses from the caller up, found by following frame pointers.
    uint32_t frame_count;
    /// 1 when the caller drained the main queue (ran MainActor work), 0 when not, -1 unknown.
    int32_t drains_main_queue;
    uintptr_t frames[CSTALLMONITOR_BLOCKING_FRAMES];
    /// The task's async callers (entry addresses of the suspended callers' resume functions),
    /// innermost first, read on the calling thread when the call was recorded.
    uint32_t async_caller_count;
    /// A `CStallMonitorAsyncChainSource`.
    int32_t async_chain_source;
    /// 1 when the chain reached the task's root, 0 when it was cut at the limit or at a context
    /// that could not be read within the record's reads (the callers read up to there are kept).
    int32_t async_chain_complete;
    /// Where the frame-pointer walk did not reach the thread's outermost frame (code without
    /// frame pointers on the way: a C library's): the stack copy holding the stack from the
    /// caller's stack pointer up (`CStallMonitor_blocking_stack_copy_snapshot`), index + 1; 0 none.
    int32_t stack_copy;
    uintptr_t async_callers[CSTALLMONITOR_BLOCKING_ASYNC_CALLERS];
    /// The caller's stack pointer and frame pointer when the call returned to it, the top of the
    /// thread's stack, and the bytes copied from that stack pointer up.
    uintptr_t caller_sp;
    uintptr_t caller_fp;
    uintptr_t stack_top;
    uint32_t stack_copy_bytes;
    /// 1 when the frame-pointer walk reached the thread's outermost frame.
    uint32_t frames_complete;
} CStallMonitorBlockingRecord;

/// How a running task's async context chain is laid out (see AsyncTaskLayout), so that a record
/// made in a task carries the task's async callers; a zero `task_metadata` (the default) reads none.
void CStallMonitor_blocking_set_async_layout(uintptr_t task_metadata, int resume_task_offset,
                                             int resume_context_offset);

/// Where libdispatch keeps the main queue's state word (`dq_state`), so that a record says
/// whether its thread drained the main queue; NULL (the default) when its layout is unknown.
void CStallMonitor_blocking_set_main_queue_state(const void *state);

/// The name a call is known by in the C library (`"futex"` for `syscall(SYS_futex, …)` waits).
const char *CStallMonitor_blocking_call_name(int call);

/// Replaces the watched calls in the GOT of every image loaded now except the C library and the
/// dynamic linker (images loaded later are not seen: call again). `seen[call]` receives how many
/// images' GOT entries now lead to the call's wrapper, `in_executable[call]` 1 when the
/// executable's own calls are among them. Returns the number of entries changed, -1 when the
/// forwarded functions cannot be resolved, -2 in a build with ThreadSanitizer (not supported).
int CStallMonitor_blocking_install(int seen[CStallMonitorBlockingCallCount],
                                   int in_executable[CStallMonitorBlockingCallCount]);

/// Starts timing watched calls on threads that must not block: those that run a Swift task, those
/// of watched loops (`CStallMonitor_blocking_loop_here`), and those marked with
/// `CStallMonitor_blocking_thread_mark`. `threshold_ns`: the shortest call recorded; `unscoped`: 0
/// to record only calls the scope hook names a scope for (every detector is a test's).
void CStallMonitor_blocking_enable(uint64_t threshold_ns, int unscoped);

/// 1 when blocking calls are timed with the CPU's time-stamp counter (the kernel's clocksource is
/// "tsc"; its rate measured at the first enable), 0 with CLOCK_MONOTONIC.
int CStallMonitor_blocking_clock_is_tsc(void);

/// Tells the recorder where the Swift runtime keeps the task a thread runs: `offset` from the
/// thread pointer (learned by the pool probe's layout), so the check is one load instead of a
/// call of `swift_task_getCurrent`. 0: call it.
void CStallMonitor_blocking_set_task_word(intptr_t offset);

/// Stops timing; the wrappers forward with one load.
void CStallMonitor_blocking_disable(void);

/// Marks (1) or unmarks (0) the calling thread as one that must not block, whatever it runs.
/// Counted: every mark needs an unmark.
void CStallMonitor_blocking_thread_mark(int must_not_block);

/// A registration for a watched loop's thread (-1: all 256 in use). While it is held, a thread
/// that called `CStallMonitor_blocking_loop_here` with it must not block (its loop's own wait is
/// not a watched call). Released by `CStallMonitor_blocking_loop_release`, which ends it on every
/// thread at once.
int CStallMonitor_blocking_loop_acquire(void);
void CStallMonitor_blocking_loop_release(int loop);

/// Registers the calling thread as the thread of `loop`. Returns 0, or -1 when the thread holds
/// four registrations already.
int CStallMonitor_blocking_loop_here(int loop);

/// Says the calling thread's watched RunLoop enters (1) or leaves (0) its own wait, which
/// CoreFoundation makes with `ppoll`: the call is the loop's, never a blocking call.
void CStallMonitor_blocking_loop_waits(int waiting);

/// Allows (1) or ends allowing (0) blocking calls on the calling thread. Counted.
void CStallMonitor_blocking_allow(int allowed);

/// A function the recorder calls on the blocking thread, after a call blocked, to name the scope
/// the call belongs to (a test's id); NULL for none. It must not block.
void CStallMonitor_blocking_set_scope_hook(uint64_t (*hook)(void));

/// Moves up to `capacity` records, oldest first, into `records`; returns how many. `dropped`
/// receives how many calls were not recorded since the last take because every slot was full.
int CStallMonitor_blocking_take(CStallMonitorBlockingRecord *records, int capacity, uint64_t *dropped);

/// The collector (after the first `CStallMonitor_blocking_enable`, as the two below) is about to
/// sleep until a record is made: returns 0 when it may sleep (a record
/// or a drop from now on posts its wake-up once), 1 when a record or a drop is waiting already.
int CStallMonitor_blocking_collector_park(void);

/// The collector sleeps until its wake-up is posted or `timeout_ns` passed (CLOCK_MONOTONIC);
/// returns 1 when it was posted. Unparks.
int CStallMonitor_blocking_collector_wait(uint64_t timeout_ns);

/// Ends the collector's sleep now (a detector stopped).
void CStallMonitor_blocking_collector_wake(void);

// MARK: - Sampler (sampler.c)

/// Frames one sample can hold at most.
#define CSTALLMONITOR_MAX_FRAMES 512

/// Result of one sampling request.
typedef enum {
    CStallMonitorSampleOK = 0,
    /// The thread did not answer before the deadline; the request was withdrawn.
    CStallMonitorSampleTimedOut = 1,
    /// An earlier request is still being answered; nothing was sent.
    CStallMonitorSampleBusy = 2,
    /// The sampler is not installed or has no unwinder.
    CStallMonitorSampleUnavailable = 3,
    /// The signal could not be sent (thread gone?).
    CStallMonitorSampleSendFailed = 4,
    /// The sampling signal no longer runs the monitor's handler (the host replaced it, or set
    /// SIG_DFL or SIG_IGN, after start); nothing was sent.
    CStallMonitorSampleHandlerReplaced = 5,
} CStallMonitorSampleResult;

/// Installs the process-wide sampling signal handler (reference counted: every successful call
/// needs one CStallMonitor_sampler_uninstall). `requested_signal` 0 picks a free real-time signal;
/// otherwise it must be a real-time signal with no handler. Loads nothing: libunwind is loaded
/// by CStallMonitor_sampler_load_unwinder. Returns the signal number, or -1 with a message in `error`.
int CStallMonitor_sampler_install(int requested_signal, char *error, size_t error_size);

/// Drops one reference; the last one restores the previous signal disposition.
void CStallMonitor_sampler_uninstall(void);

/// The installed signal, 0 when not installed.
int CStallMonitor_sampler_signal(void);

/// Whether the installed signal still runs the monitor's handler (a `sigaction` query): 0 when
/// the host replaced the handler or set SIG_DFL or SIG_IGN since, or nothing is installed. Every
/// request asks first and never sends a signal the handler does not receive.
int CStallMonitor_sampler_handler_installed(void);

/// Sampling signal handlers on thread `tid` (or a thread sharing its bucket): how many are
/// running now, and how many were entered since the process started.
void CStallMonitor_sampler_handler_activity(pid_t tid, int *running, uint64_t *entered);

/// Loads libunwind with dlopen (once per process; never from a signal handler). Returns 1 when
/// it is loaded. Frames requests (CStallMonitor_sampler_sample) answer Unavailable until then;
/// take one warm-up sample on each thread before relying on them (libunwind's first use on a
/// thread allocates).
int CStallMonitor_sampler_load_unwinder(void);

/// The errno of the last sampling signal that could not be sent (tgkill failed: ESRCH when the
/// thread is gone, EPERM or ENOSYS when a seccomp profile or a sandbox denies it), 0 before any.
int CStallMonitor_sampler_last_send_errno(void);

/// 1 when libunwind was loaded, 0 otherwise; `note` receives the reason when not.
int CStallMonitor_sampler_unwinder_available(char *note, size_t note_size);

/// Asks thread `tid` for its stack and waits up to `timeout_ns`. On success copies at most
/// `capacity` instruction pointers (leaf first; the first is the interrupted PC, the others are
/// return addresses) into `frames` and sets `count` and `truncated`.
CStallMonitorSampleResult CStallMonitor_sampler_sample(pid_t tid, uint64_t timeout_ns,
                                                       uintptr_t *frames, int capacity,
                                                       int *count, int *truncated);

// MARK: - Snapshots and unwinding away from the sampled thread (sampler.c, unwinder.c)

/// Registers a snapshot can hold, by DWARF register number (x86_64: 0–16, rip as 16; aarch64:
/// x0–x30 and sp as 31).
#define CSTALLMONITOR_SNAPSHOT_REGS 33

/// The most stack bytes one snapshot copies (the handler's preallocated buffer).
#define CSTALLMONITOR_MAX_STACK_COPY (256 * 1024)

/// A thread's registers and a copy of its stack from SP upwards, to unwind later elsewhere.
typedef struct {
    /// Register values by DWARF number; only those with their bit set in `valid` are known.
    uint64_t regs[CSTALLMONITOR_SNAPSHOT_REGS];
    uint64_t valid;
    /// Program counter and stack pointer.
    uintptr_t pc;
    uintptr_t sp;
    /// Caller-owned buffer for the stack bytes and its size; `stack_size` bytes from `sp` on
    /// were copied (0 when SP lay outside the thread's stack).
    uint8_t *stack;
    size_t stack_capacity;
    size_t stack_size;
    /// The thread's stack, `[stack_low, stack_high)`, known from when it was armed.
    uintptr_t stack_low;
    uintptr_t stack_high;
} CStallMonitorSnapshot;

/// A record's stack copy as a snapshot the snapshot unwinder walks (CFI from the caller's return
/// address, its stack pointer and frame pointer): 0, or -1 when the record has none. The copy
/// stays the record's until released.
int CStallMonitor_blocking_stack_copy_snapshot(const CStallMonitorBlockingRecord *record,
                                               CStallMonitorSnapshot *snapshot);

/// Gives a record's stack copy back to the recorder (after unwinding it, or instead).
void CStallMonitor_blocking_release_stack_copy(const CStallMonitorBlockingRecord *record);

/// Asks thread `tid` (running on a CPU) for a snapshot and waits up to `timeout_ns`. The handler
/// copies its interrupted registers and at most `snapshot->stack_capacity` bytes (bounded by
/// CSTALLMONITOR_MAX_STACK_COPY and by `stack_high`) into preallocated memory; this copies them
/// into `snapshot`. Needs only the installed handler, not libunwind.
CStallMonitorSampleResult CStallMonitor_sampler_snapshot(pid_t tid, uint64_t timeout_ns,
                                                         CStallMonitorSnapshot *snapshot);

/// Whether `signal_number` has no handler in this process (its default action, no SA_SIGINFO
/// handler). 1 or 0.
int CStallMonitor_signal_is_free(int signal_number);

/// Gives the pages of the handler's stack-copy buffer back to the kernel (madvise DONTNEED; they
/// read as zero and are faulted in again by the next snapshot). Does nothing while a request is
/// in flight; call with requests serialized (no request can start meanwhile).
void CStallMonitor_sampler_release_buffers(void);

/// The calling thread's stack bounds (pthread_getattr_np). Returns 0, or -1 when unknown.
int CStallMonitor_current_stack_bounds(uintptr_t *low, uintptr_t *high);

/// The writable mapping of this process that contains `address` (from /proc/self/maps), e.g.
/// the stack of a thread that was never armed, found from its stack pointer. Returns 0, or -1
/// when no mapping contains it or the file cannot be read.
int CStallMonitor_mapping_containing(uintptr_t address, uintptr_t *low, uintptr_t *high);

/// Whether the calling thread is seen for the first time by the visitor `visitor` (a nonzero id):
/// 1 the first time (and marks it), 0 after. A thread-local mark, so a new thread that reuses
/// an old thread's kernel id is new here.
int CStallMonitor_thread_first_visit(uint64_t visitor);

/// Loads 8 bytes at `address` atomically (acquire): a word another library updates atomically
/// (libdispatch's queue state).
uint64_t CStallMonitor_load_u64(const void *address);

// MARK: - Reading this process's own memory without faulting (own_memory.c)

/// Copies up to `size` bytes of this process's memory at `address` with process_vm_readv, or,
/// once that was denied (EPERM, ENOSYS: a seccomp profile, a sandbox), with pread on
/// /proc/self/mem. Never faults: memory that is gone fails. Returns the bytes copied (fewer when
/// the range runs into an unmapped page), or -errno. Async-signal-safe.
ssize_t CStallMonitor_copy_own_memory(uintptr_t address, void *into, size_t size);

/// Copies exactly `size` bytes (CStallMonitor_copy_own_memory). Returns 0, or -1.
int CStallMonitor_read_memory(uintptr_t address, void *buffer, size_t size);

/// How this process's own memory is read.
typedef struct {
    /// The errno with which process_vm_readv was denied (reads then go through /proc/self/mem);
    /// 0 while it works.
    int vm_readv_denied;
    /// The errno with which /proc/self/mem could not be opened when it was needed; 0 otherwise.
    int proc_mem_error;
} CStallMonitorOwnMemoryStatus;

/// What CStallMonitor_copy_own_memory found so far.
CStallMonitorOwnMemoryStatus CStallMonitor_own_memory_status(void);

// MARK: - Denying system calls as a hardened container does (seccomp_filter.c)

/// Installs a seccomp filter on the calling thread (and what it executes) that makes each of the
/// `count` system calls named in `names` (process_vm_readv, process_vm_writev, tgkill, tkill,
/// rt_tgsigqueueinfo, perf_event_open, ptrace) fail with `error`. For `seccomp-run`, before it
/// executes a program; the monitor never calls it. Returns 0, or -1 with a message in `message`.
int CStallMonitor_deny_syscalls(const char *const *names, int count, int error, char *message, size_t message_size);

// MARK: - The Swift concurrency pool's workers seen from outside (pool.c)

/// Where the calling thread's TLS block of the loaded module whose path ends with
/// `module_suffix` begins, relative to the thread pointer (the same for every thread when the
/// module's TLS is static). Returns 0; -1 no such module, -2 no TLS block, -3 not x86_64 Linux.
int CStallMonitor_tls_block_offset(const char *module_suffix, intptr_t *offset);

/// The calling thread's thread pointer (x86_64: the fs base); 0 where not supported.
uintptr_t CStallMonitor_thread_pointer(void);

/// Learns glibc's thread layout on the calling thread (one whose stack glibc allocated, not the
/// main thread): how far below its stack mapping's end its thread control block lies, and at
/// which offset in the block the kernel thread id is. Returns 0, or a negative value.
int CStallMonitor_learn_thread_layout(uintptr_t *end_distance, size_t *tid_offset);

/// Finds the thread control blocks of this process's threads (a block that points to itself near
/// the top of a writable mapping: `end_distance` below its end, where the learned layout puts it,
/// else the highest such block in its top 16 KiB) and their kernel thread ids, at most
/// `capacity`. Returns how many were found, or -1 when /proc/self/maps cannot be read.
int CStallMonitor_find_thread_pointers(uintptr_t end_distance, size_t tid_offset, pid_t *tids, uintptr_t *pointers, int capacity);

/// The executable mappings of this process now (from /proc/self/maps), at most `capacity`, as
/// `[starts[i], ends[i])`. Returns how many, or -1 when the file cannot be read.
int CStallMonitor_executable_ranges(uintptr_t *starts, uintptr_t *ends, int capacity);

/// Opaque unwinding session over this process (its modules and executable mappings when it
/// opened). Use from one thread at a time.
typedef struct CStallMonitorUnwinder CStallMonitorUnwinder;

/// Outcomes of CStallMonitor_unwinder_unwind.
enum {
    /// Unwound; `complete` says whether the walk reached the thread's outermost frame.
    CStallMonitorUnwindDone = 0,
    /// A frame's address lies outside every executable mapping the session knows: a library
    /// loaded since it opened (re-open and retry) or a corrupt stack. Frames before it are kept.
    CStallMonitorUnwindUnknownCode = 1,
};

/// Whether libdw can be loaded, without keeping it loaded: a library not loaded yet is opened
/// and closed again (its pages are unmapped), so an idle monitor maps nothing heavy. Returns 1
/// when it loads, 0 with the reason in `note` otherwise.
int CStallMonitor_libdw_loadable(char *note, size_t note_size);

/// The snapshot unwinder's backends.
enum {
    /// elfutils' libdw: CFI from each module's ELF file mapped privately, thread entries by
    /// symbol; every architecture.
    CStallMonitorUnwinderLibdw = 0,
    /// libunwind's remote API: CFI searched through each module's `.eh_frame_hdr` table, read
    /// from its file with pread (no file is mapped), thread entries by CFI; x86_64 only.
    CStallMonitorUnwinderLibunwind = 1,
};

/// Whether libunwind's remote unwinder (CStallMonitorUnwinderLibunwind) can be loaded on this
/// machine and architecture; like CStallMonitor_libdw_loadable. Returns 1, or 0 with the reason
/// in `note`.
int CStallMonitor_libunwind_remote_loadable(char *note, size_t note_size);

/// Opens a session with backend `backend` (loads its library with dlopen on first use). Returns
/// NULL with a reason in `error`.
CStallMonitorUnwinder *CStallMonitor_unwinder_open(int backend, char *error, size_t error_size);

/// The name of a session's backend, as samples name their unwinder (`libdw`, `libunwind-remote`).
const char *CStallMonitor_unwinder_name(const CStallMonitorUnwinder *session);

/// Closes a session, releasing its files and caches.
void CStallMonitor_unwinder_close(CStallMonitorUnwinder *session);

/// Whether `address` lies in an executable mapping of the session.
int CStallMonitor_unwinder_is_code(const CStallMonitorUnwinder *session, uintptr_t address);

/// Unwinds `snapshot` of thread `tid` with the session's backend: at most `capacity` PCs, leaf first (the
/// first is the snapshot's PC, the others return addresses), each inside executable code.
/// `complete` is 1 when the walk reached the outermost frame. Returns a CStallMonitorUnwind…
/// outcome, or -1 on bad arguments.
int CStallMonitor_unwinder_unwind(CStallMonitorUnwinder *session, pid_t tid,
                                  const CStallMonitorSnapshot *snapshot, uintptr_t *frames,
                                  int capacity, int *count, int *complete);

/// Snapshot of a thread asleep in the kernel, from the user SP and PC its `/proc` syscall file
/// gives: copies its frozen stack (CStallMonitor_copy_own_memory, so a bad address is an
/// error, not a fault). Its other registers are unknown: the unwinder finds the frame pointer of
/// the first frame that needs one from the frame records on the stack. `snapshot`'s buffer and
/// stack bounds must be set. Returns 0 or -errno (-ERANGE when SP lies outside the stack bounds).
int CStallMonitor_snapshot_blocked(uintptr_t sp, uintptr_t pc, CStallMonitorSnapshot *snapshot);

// MARK: - Waking a sleeping watchdog (wakeup_slots.c, pool_wakeup.c, loop_wakeup.c, main_wakeup.c)

/// Takes a wake-up slot: an eventfd (and timerfds for late posts and deadlines) the watchdog
/// sleeps on, kept open for the life of the process. -1 when all 64 are taken or no eventfd can
/// be made (the caller uses a semaphore of its own and cannot be woken by its loops).
int CStallMonitor_wakeup_slot_acquire(void);
/// Gives a slot back (it stops watching the pool).
void CStallMonitor_wakeup_slot_release(int slot);
/// Posts the slot: its watchdog's wait ends (at once, or the next one). Async-signal-safe.
void CStallMonitor_wakeup_slot_post(int slot);
/// Takes the slot's posts without waiting: how many came since the last wait or take (a late
/// post's expiry counts as one).
int CStallMonitor_wakeup_slot_take_posts(int slot);
/// Waits until the slot is posted (0) or the monotonic clock reaches `deadline_ns` (ETIMEDOUT;
/// 0: no deadline). Every post since the last wait ends one wait.
int CStallMonitor_wakeup_slot_wait_until(int slot, uint64_t deadline_ns);
/// About to sleep on the slot's semaphore: from now on a producer that notes work posts it. Set
/// it before taking the producers' flags (a flag set after that take finds the slot parked).
void CStallMonitor_wakeup_slot_park(int slot);
/// Woke up (either way): producers no longer post the slot.
void CStallMonitor_wakeup_slot_unpark(int slot);
/// When a producer last posted the slot (monotonic ns; 0: never): the work it noted came just
/// before (a loop's return from its wait) or just after (a job's start).
uint64_t CStallMonitor_wakeup_slot_posted_at(int slot);
/// Gives the slot a late post (wakeup_late_post.c): producers that ask for one (the pool's enqueue
/// hook) arm the slot's timerfd to expire `delay_ns` after their note instead of posting it. 0, or
/// -1 when the slot has no timerfd (the producers then post at once).
int CStallMonitor_wakeup_late_post_enable(int slot, uint64_t delay_ns);
/// The watchdog woke: cancels a late post not fired yet, and returns whether one ended the wait
/// (1) or not (0).
int CStallMonitor_wakeup_late_post_taken(int slot);

/// Installs the pass-through hook on swift_task_enqueueGlobal for one more watcher (after a hook
/// already there, which it calls). 0 on success, -1 when the runtime has no such hook.
int CStallMonitor_pool_hook_install(void);
/// One watcher fewer: the last one takes the hook out, unless another was installed after it.
void CStallMonitor_pool_hook_uninstall(void);
/// Whether the runtime still calls our hook (a host may have installed its own after it).
int CStallMonitor_pool_hook_active(void);
/// The slot's pending flag starts being set by every enqueue (set now: nothing was noted before).
void CStallMonitor_pool_watch(int slot);
/// Whether a job was enqueued since the last call (clears the flag).
int CStallMonitor_pool_enqueued(int slot);
/// The pool probe lets the watchdog of `slot` sleep until the next enqueue (1), or no longer (0):
/// only an armed slot is posted by an enqueue.
void CStallMonitor_pool_arm(int slot, int armed);

/// Whether the hook is in the runtime's chain and a watchdog watches its enqueues (each enqueue
/// then writes the table of recent enqueues).
int CStallMonitor_pool_enqueues_watched(void);
/// The entry of the table of recent enqueues that `task` falls in (pool_jobs.c): the address of
/// the job last enqueued there, with a 4-bit count of the entry's writes in its low bits. An entry
/// that names `task` and changed since an earlier read means `task` was enqueued since then.
/// `enqueued_at` gets when that entry was written (CLOCK_MONOTONIC_COARSE ns; 0: not known).
uintptr_t CStallMonitor_pool_job_mark(uintptr_t task, uint64_t *enqueued_at);

/// Takes a loop watch (one watched event loop's flags), -1 when all 256 are taken.
int CStallMonitor_loop_watch_acquire(void);
/// Gives a watch back: its thread's later waits are ignored.
void CStallMonitor_loop_watch_release(int watch);
/// On the loop's thread: its waits in this shim's epoll_wait note the watch (at most 4 watches
/// per thread). 0 on success, -1 when the thread has 4 live watches already.
int CStallMonitor_loop_watch_here(int watch);
/// The wake-up slot the watch's returns post when it is parked (the watch counts as woken now).
void CStallMonitor_loop_watch_bind(int watch, int slot);
/// Whether the watch's thread has entered this shim's epoll_wait since it registered (if never,
/// its loop waits some other way and cannot wake the watchdog).
int CStallMonitor_loop_watch_entered(int watch);
/// Whether the watch's thread returned from epoll_wait since the last call (clears the flag).
int CStallMonitor_loop_watch_woke(int watch);
/// When the watch's thread last returned from this shim's epoll_wait (CLOCK_MONOTONIC ns, stored
/// before anything else it does after the wait; 0: not since it registered).
uint64_t CStallMonitor_loop_watch_returned_at(int watch);
/// The loop's probe lets the watchdog sleep until the loop's next return from its wait (1), or no
/// longer (0): only then does a return post the watch's slot.
void CStallMonitor_loop_watch_arm(int watch, int armed);

/// Whether the epoll_wait this executable calls is the shim's (not a sanitizer runtime's or the
/// host's): found by one zero-timeout wait on a registered watch.
int CStallMonitor_epoll_wait_is_ours(void);
/// A new epoll descriptor (close-on-exec), -1 on failure: for benchmarks, which see no epoll in Swift.
int CStallMonitor_epoll_create(void);
/// One wait of at most `timeout_ms` for one event on `epfd`: through the epoll_wait this
/// executable calls (the shim's, where it won the link) or the C library's epoll_pwait directly.
int CStallMonitor_epoll_wait_once(int epfd, int timeout_ms, int through_shim);

/// The slot's main-queue flag starts being set by every dispatch_async(_f) on `queue` (the
/// Dispatch main queue; set now: nothing was noted before).
void CStallMonitor_main_watch(int slot, const void *queue);
/// Whether work reached the main queue since the last call (clears the flag).
int CStallMonitor_main_enqueued(int slot);
/// The main-queue probe lets the watchdog of `slot` sleep until the next enqueue (1), or no
/// longer (0): only an armed slot is posted by an enqueue.
void CStallMonitor_main_arm(int slot, int armed);

/// Whether this shim's dispatch_async(_f) ever saw a main-queue enqueue while a slot watched: if
/// never, another definition (a sanitizer runtime's) is the one called, and nothing wakes the slot.
int CStallMonitor_main_enqueues_seen(void);

// MARK: - The monitor's own code (own_code.c)

/// The address range [start, end) of the monitor's own code that runs on monitored threads (the
/// interposers, the enqueue hook, the wake-up producers, the sampling signal handler) in the
/// image the shim is linked into. Frames in it are marked as the monitor's in reports. Returns 0,
/// or -1 when the linker kept no such section (nothing to mark).
int CStallMonitor_own_code_range(uintptr_t *start, uintptr_t *end);

// MARK: - Images (images.c)

/// One loaded ELF image.
typedef struct {
    /// Path of the file (heap copy owned by the list).
    char *path;
    /// Lowest mapped address (first PT_LOAD).
    uintptr_t start;
    /// End of the highest PT_LOAD.
    uintptr_t end;
    /// Load bias (dlpi_addr).
    uintptr_t bias;
    /// GNU build ID bytes and their count (0 when the image has none).
    uint8_t build_id[64];
    int build_id_size;
    /// 1 for the main executable.
    int is_main;
} CStallMonitorImage;

/// Snapshot of every loaded image. Free with CStallMonitor_images_free.
typedef struct {
    CStallMonitorImage *images;
    int count;
} CStallMonitorImageList;

/// Takes a snapshot of the loaded images with dl_iterate_phdr. Returns 0, or -1 when out of memory.
int CStallMonitor_images_copy(CStallMonitorImageList *list);

/// How many objects the dynamic loader has loaded in this process so far (dl_iterate_phdr's
/// `dlpi_adds`, never decreasing): a change means a library was loaded since. Takes the loader's
/// lock: never call it on the watchdog (a stalled host may hold that lock).
unsigned long long CStallMonitor_images_added(void);

/// Frees a snapshot taken by CStallMonitor_images_copy.
void CStallMonitor_images_free(CStallMonitorImageList *list);

// MARK: - Symbolizer (symbolizer.c)

/// What libdw knows about one address.
typedef struct {
    /// Symbol name as stored (mangled), or NULL.
    const char *symbol;
    /// Offset of the address from the symbol's start.
    uint64_t offset;
    /// Source file, or NULL.
    const char *file;
    /// Source line, 0 when unknown.
    int line;
} CStallMonitorSymbol;

/// Opaque libdw session over this process's modules.
typedef struct CStallMonitorSymbolizer CStallMonitorSymbolizer;

/// Opens a libdw session for the current process. Returns NULL with a reason in `error` when
/// libdw cannot be loaded. Not thread-safe: use one session from one thread at a time.
CStallMonitorSymbolizer *CStallMonitor_symbolizer_open(char *error, size_t error_size);

/// Looks up `address`; returns 1 when the address lies in a module that was loaded when the
/// session opened (open a new session after libraries were loaded). The strings in `symbol`
/// stay valid until the session is closed.
int CStallMonitor_symbolizer_lookup(CStallMonitorSymbolizer *session, uintptr_t address,
                                    CStallMonitorSymbol *symbol);

/// The bytes of DWARF (`.debug_*` sections) of the modules whose line tables the session's
/// lookups have read so far: what libdw may parse and cache for them.
size_t CStallMonitor_symbolizer_dwarf_bytes(const CStallMonitorSymbolizer *session);

/// Closes a session.
void CStallMonitor_symbolizer_close(CStallMonitorSymbolizer *session);

/// Demangles a Swift (`$s…`) or C++ (`_Z…`) symbol with the runtime's own demangler. Returns a
/// heap string to free with free(), or NULL when the name is not mangled or cannot be demangled.
char *CStallMonitor_demangle(const char *name);

/// The program's entry point (`getauxval(AT_ENTRY)`): an address inside the executable.
uintptr_t CStallMonitor_program_entry(void);

/// Name and address of the nearest exported symbol (dladdr), for when libdw is unavailable.
/// Returns 1 when found.
int CStallMonitor_dladdr(uintptr_t address, const char **symbol, uintptr_t *symbol_address,
                         const char **image);

/// ThreadSanitizer annotations: a happens-before edge from a release to a later acquire of the
/// same address. For locks TSan cannot see (Swift's Mutex locks with futex calls from the
/// uninstrumented standard library). No-ops unless this target is built with TSan.
void CStallMonitor_tsan_acquire(const void *address);
void CStallMonitor_tsan_release(const void *address);

#ifdef __cplusplus
}
#endif

#endif
