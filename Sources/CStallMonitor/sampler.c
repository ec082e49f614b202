// The sampling signal handler and its request protocol.
//
// One request slot serves the whole process. Its state word packs the target thread id and a
// state: IDLE (0) -> REQUESTED (watchdog) -> CLAIMED (handler, by compare-and-swap, only on the
// target thread) -> DONE (handler) -> IDLE (watchdog, after copying the answer out). A watchdog
// that times out withdraws its request with a compare-and-swap; a handler that arrives afterwards
// finds no request for its thread and returns at once.
//
// A request asks for one of two answers. A snapshot (the default): the handler copies the
// interrupted registers from its ucontext and the stack bytes from SP up to a bound (never past
// the stack's end, which the request carries) into the slot and returns; the watchdog unwinds the
// copy later (unwinder.c), so the thread pauses only for a copy. Or frames: the handler unwinds
// itself with libunwind (loaded with dlopen only when a monitor needs it, per-thread caching,
// warmed up on each monitored thread when it arms), the fallback when libdw is missing. The handler
// touches only static memory and libunwind in frames mode: no allocation, no locks, no Swift, and no
// system call but gettid. It wakes nobody: the watchdog polls the state word with short sleeps
// (a futex wake from the handler cost the interrupted thread ~10 µs on a VM, most of its pause).
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "CStallMonitor.h"
#include "own_code.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

#define CSM_STR2(x) #x
#define CSM_STR(x) CSM_STR2(x)

/// The errno of the last tgkill that failed (ESRCH: the thread is gone; EPERM, ENOSYS: denied), 0
/// before any failed.
static _Atomic int last_send_errno = 0;

int CStallMonitor_sampler_last_send_errno(void) { return atomic_load(&last_send_errno); }

enum { SLOT_IDLE = 0, SLOT_REQUESTED = 1, SLOT_CLAIMED = 2, SLOT_DONE = 3 };

static inline uint64_t slot_word(pid_t tid, int state) {
    return ((uint64_t)(uint32_t)tid << 8) | (uint64_t)state;
}

typedef int (*init_local2_fn)(unw_cursor_t *, unw_context_t *, int);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
typedef int (*set_caching_policy_fn)(unw_addr_space_t, unw_caching_policy_t);

static struct {
    // Published with release once the functions below are set (they never change afterwards).
    void *_Atomic library;
    init_local2_fn init_local2;
    step_fn step;
    get_reg_fn get_reg;
    char note[256];
} unwinder;

enum { REQUEST_FRAMES = 0, REQUEST_SNAPSHOT = 1 };

static struct {
    _Atomic uint64_t word;
    // The request (written by the watchdog before it is published).
    int request;
    uintptr_t stack_low;
    uintptr_t stack_high;
    size_t copy_limit;
    // A frames answer.
    int count;
    int truncated;
    uintptr_t frames[CSTALLMONITOR_MAX_FRAMES];
    // A snapshot answer.
    uint64_t regs[CSTALLMONITOR_SNAPSHOT_REGS];
    uint64_t valid;
    uintptr_t pc;
    uintptr_t sp;
    size_t stack_size;
    uint64_t stack[CSTALLMONITOR_MAX_STACK_COPY / sizeof(uint64_t)];
} slot;

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the handler needs lock-free 64-bit atomics");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the handler needs lock-free int atomics");
// The layout the handler's copy relies on: 64-bit words that hold addresses, one `valid` bit per
// register, a 32-bit thread id packed above the 8-bit state of the request word.
_Static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "registers and stack words are copied as 64-bit words that hold addresses");
_Static_assert(sizeof(pid_t) == sizeof(uint32_t), "the request word packs a 32-bit thread id above its state");
_Static_assert(CSTALLMONITOR_SNAPSHOT_REGS <= 64, "a snapshot's `valid` mask has one bit per register");
#if defined(__x86_64__)
_Static_assert(sizeof(greg_t) == sizeof(uint64_t), "x86_64 mcontext general registers are 64-bit");
_Static_assert(CSTALLMONITOR_SNAPSHOT_REGS >= 17, "a snapshot holds rax…r15 and rip (DWARF 0–16)");
#elif defined(__aarch64__)
_Static_assert(sizeof(((mcontext_t *)0)->regs) / sizeof(((mcontext_t *)0)->regs[0]) >= 31, "aarch64 mcontext holds x0…x30");
_Static_assert(sizeof(((mcontext_t *)0)->regs[0]) == sizeof(uint64_t), "aarch64 mcontext registers are 64-bit");
_Static_assert(CSTALLMONITOR_SNAPSHOT_REGS >= 32, "a snapshot holds x0…x30 and sp (DWARF 0–31)");
#endif

// Handlers per thread (threads hashed by id into 64 buckets; a shared bucket only makes the
// watchdog more careful): how many are between entry and return, and how many were entered (a
// change between two readings means one ran in between). The kernel keeps the signal blocked in
// the thread's mask until its handler returns, so a late or preempted handler looks like a thread
// that blocks the signal; the watchdog asks this before calling it that.
#define CSM_HANDLER_BUCKETS 64
static struct {
    _Atomic int running;
    _Atomic unsigned long long entered;
} handler_activity[CSM_HANDLER_BUCKETS];

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int install_count;
static _Atomic int installed_signal;
static struct sigaction previous_action;

// Copies the interrupted thread's stack in 256-byte blocks of inline loads and stores, then word by
// word: never a call to memcpy, which AddressSanitizer intercepts (it would report the poisoned red
// zones of the thread's own frames as overflows) and which is not guaranteed async-signal-safe.
// The block copy is ~5× faster than a volatile word loop (64 KiB: ~0.6 µs against ~3.5 µs).
#define CSM_COPY_BLOCK 256
__attribute__((no_sanitize("address", "thread", "memory", "hwaddress")))
CSTALLMONITOR_OWN_CODE static size_t copy_stack(uintptr_t sp) {
    if (sp < slot.stack_low || sp >= slot.stack_high || (sp & 7) != 0) return 0;
    size_t available = slot.stack_high - sp;
    size_t size = (available < slot.copy_limit ? available : slot.copy_limit) & ~(size_t)7;
    size_t done = 0;
#if defined(__has_builtin)
#if __has_builtin(__builtin_memcpy_inline)
    unsigned char *to = (unsigned char *)slot.stack;
    const unsigned char *from = (const unsigned char *)sp;
    for (; done + CSM_COPY_BLOCK <= size; done += CSM_COPY_BLOCK) {
        __builtin_memcpy_inline(to + done, from + done, CSM_COPY_BLOCK);
    }
#endif
#endif
    const volatile uint64_t *words = (const volatile uint64_t *)sp;
    for (size_t i = done / sizeof(uint64_t); i < size / sizeof(uint64_t); i++) slot.stack[i] = words[i];
    return size;
}

CSTALLMONITOR_OWN_CODE static void take_snapshot(const ucontext_t *context) {
    slot.valid = 0;
#if defined(__x86_64__)
    const greg_t *gregs = context->uc_mcontext.gregs;
    // DWARF register numbers: rax rdx rcx rbx rsi rdi rbp rsp r8…r15 rip.
    static const int order[17] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
                                  REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
                                  REG_RIP};
    for (int reg = 0; reg < 17; reg++) slot.regs[reg] = (uint64_t)gregs[order[reg]];
    slot.valid = (1ull << 17) - 1;
    slot.pc = (uintptr_t)gregs[REG_RIP];
    slot.sp = (uintptr_t)gregs[REG_RSP];
#elif defined(__aarch64__)
    // DWARF register numbers: x0…x30, sp.
    for (int reg = 0; reg < 31; reg++) slot.regs[reg] = (uint64_t)context->uc_mcontext.regs[reg];
    slot.regs[31] = (uint64_t)context->uc_mcontext.sp;
    slot.valid = (1ull << 32) - 1;
    slot.pc = (uintptr_t)context->uc_mcontext.pc;
    slot.sp = (uintptr_t)context->uc_mcontext.sp;
#else
    slot.pc = 0;
    slot.sp = 0;
#endif
    slot.stack_size = slot.sp != 0 ? copy_stack(slot.sp) : 0;
}

CSTALLMONITOR_OWN_CODE static void unwind_in_handler(void *context) {
    int count = 0;
    int truncated = 0;
    unw_cursor_t cursor;
    if (unwinder.init_local2 != NULL &&
        unwinder.init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) == 0) {
        for (;;) {
            unw_word_t ip = 0;
            if (unwinder.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
            slot.frames[count++] = (uintptr_t)ip;
            int stepped = unwinder.step(&cursor);
            if (stepped <= 0) break;
            if (count == CSTALLMONITOR_MAX_FRAMES) {
                truncated = 1;
                break;
            }
        }
    }
    slot.count = count;
    slot.truncated = truncated;
}

CSTALLMONITOR_OWN_CODE static void CStallMonitor_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    (void)info;
    int saved_errno = errno;
    pid_t self = (pid_t)syscall(SYS_gettid);
    unsigned bucket = (unsigned)self % CSM_HANDLER_BUCKETS;
    atomic_fetch_add(&handler_activity[bucket].running, 1);
    atomic_fetch_add(&handler_activity[bucket].entered, 1);
    uint64_t expected = slot_word(self, SLOT_REQUESTED);
    if (atomic_compare_exchange_strong(&slot.word, &expected, slot_word(self, SLOT_CLAIMED))) {
        if (slot.request == REQUEST_SNAPSHOT) {
            take_snapshot((const ucontext_t *)context);
        } else {
            unwind_in_handler(context);
        }
        atomic_store(&slot.word, slot_word(self, SLOT_DONE));
    }
    atomic_fetch_sub(&handler_activity[bucket].running, 1);
    errno = saved_errno;
}

void CStallMonitor_sampler_handler_activity(pid_t tid, int *running, uint64_t *entered) {
    unsigned bucket = (unsigned)tid % CSM_HANDLER_BUCKETS;
    *running = atomic_load(&handler_activity[bucket].running);
    *entered = atomic_load(&handler_activity[bucket].entered);
}

static int load_unwinder(void) {
    if (atomic_load(&unwinder.library) != NULL) return 1;
    const char *names[] = {"libunwind.so.8", "libunwind.so"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && library == NULL; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(unwinder.note, sizeof(unwinder.note), "libunwind could not be loaded: %s",
                 why ? why : "unknown error");
        return 0;
    }
    init_local2_fn init_local2 = (init_local2_fn)dlsym(library, CSM_STR(unw_init_local2));
    step_fn step = (step_fn)dlsym(library, CSM_STR(unw_step));
    get_reg_fn get_reg = (get_reg_fn)dlsym(library, CSM_STR(unw_get_reg));
    set_caching_policy_fn set_policy =
        (set_caching_policy_fn)dlsym(library, CSM_STR(unw_set_caching_policy));
    unw_addr_space_t *local_space = (unw_addr_space_t *)dlsym(library, CSM_STR(unw_local_addr_space));
    if (init_local2 == NULL || step == NULL || get_reg == NULL) {
        snprintf(unwinder.note, sizeof(unwinder.note),
                 "libunwind lacks %s (version older than 1.3?)", CSM_STR(unw_init_local2));
        dlclose(library);
        return 0;
    }
    // libunwind's default cache is global and guarded by a lock: unwinding in a signal handler
    // that interrupted another unwind (or the cache's own lock holder) would deadlock. Without a
    // per-thread cache libunwind is not used in the handler at all.
    if (set_policy == NULL || local_space == NULL || set_policy(*local_space, UNW_CACHE_PER_THREAD) != 0) {
        snprintf(unwinder.note, sizeof(unwinder.note),
                 "libunwind cannot use a per-thread cache (%s %s); its global cache takes a lock, "
                 "which a signal handler must not",
                 CSM_STR(unw_set_caching_policy), set_policy == NULL ? "is missing" : "failed");
        dlclose(library);
        return 0;
    }
    unwinder.step = step;
    unwinder.get_reg = get_reg;
    unwinder.init_local2 = init_local2;
    unwinder.note[0] = '\0';
    atomic_store(&unwinder.library, library);
    return 1;
}

int CStallMonitor_sampler_load_unwinder(void) {
    pthread_mutex_lock(&install_lock);
    int loaded = load_unwinder();
    pthread_mutex_unlock(&install_lock);
    return loaded;
}

int CStallMonitor_signal_is_free(int signal_number) {
    struct sigaction current;
    if (sigaction(signal_number, NULL, &current) != 0) return 0;
    if (current.sa_flags & SA_SIGINFO) return current.sa_sigaction == NULL;
    return current.sa_handler == SIG_DFL;
}

static int pick_signal(int requested, char *error, size_t error_size) {
    if (requested != 0) {
        // SIGPROF too: libdispatch leaves it unblocked on its worker threads (for profilers), so a
        // MainActor job running on a worker never armed can be sampled with it.
        if ((requested < SIGRTMIN || requested > SIGRTMAX) && requested != SIGPROF) {
            snprintf(error, error_size, "signal %d is not a real-time signal (SIGRTMIN=%d..SIGRTMAX=%d) or SIGPROF",
                     requested, SIGRTMIN, SIGRTMAX);
            return -1;
        }
        if (!CStallMonitor_signal_is_free(requested)) {
            snprintf(error, error_size, "signal %d already has a handler; choose another", requested);
            return -1;
        }
        return requested;
    }
    // Prefer the upper middle of the range: libraries tend to take SIGRTMIN+n from the bottom.
    int first = SIGRTMIN + (SIGRTMAX - SIGRTMIN) / 2;
    for (int candidate = first; candidate <= SIGRTMAX; candidate++) {
        if (CStallMonitor_signal_is_free(candidate)) return candidate;
    }
    for (int candidate = first - 1; candidate >= SIGRTMIN; candidate--) {
        if (CStallMonitor_signal_is_free(candidate)) return candidate;
    }
    snprintf(error, error_size, "every real-time signal already has a handler");
    return -1;
}

/// Whether `signal_number` runs our handler now. The host may have replaced it, or set SIG_DFL
/// (a real-time signal's default action terminates the process) or SIG_IGN, since start.
static int handler_installed(int signal_number) {
    struct sigaction current;
    if (signal_number <= 0 || sigaction(signal_number, NULL, &current) != 0) return 0;
    return (current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == CStallMonitor_handler;
}

int CStallMonitor_sampler_install(int requested_signal, char *error, size_t error_size) {
    pthread_mutex_lock(&install_lock);
    int result;
    int current = atomic_load(&installed_signal);
    if (install_count > 0) {
        if (requested_signal != 0 && requested_signal != current) {
            snprintf(error, error_size, "the sampler already uses signal %d; cannot also use %d",
                     current, requested_signal);
            result = -1;
        } else {
            install_count++;
            result = current;
        }
        pthread_mutex_unlock(&install_lock);
        return result;
    }
    int chosen = pick_signal(requested_signal, error, error_size);
    if (chosen < 0) {
        pthread_mutex_unlock(&install_lock);
        return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = CStallMonitor_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(chosen, &action, &previous_action) != 0) {
        snprintf(error, error_size, "sigaction(%d) failed: %s", chosen, strerror(errno));
        pthread_mutex_unlock(&install_lock);
        return -1;
    }
    atomic_store(&slot.word, 0);
    atomic_store(&installed_signal, chosen);
    install_count = 1;
    pthread_mutex_unlock(&install_lock);
    return chosen;
}

void CStallMonitor_sampler_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    if (install_count > 0 && --install_count == 0) {
        int signal_number = atomic_exchange(&installed_signal, 0);
        // A host that took the signal over since start keeps its own disposition.
        if (!handler_installed(signal_number)) {
            pthread_mutex_unlock(&install_lock);
            return;
        }
        // A sample may still be pending (the thread blocks the signal, or sleeps uninterruptibly):
        // ignoring the signal discards pending instances, so restoring a default action (which
        // for a real-time signal terminates the process) cannot kill the host afterwards.
        struct sigaction ignore;
        memset(&ignore, 0, sizeof(ignore));
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        sigaction(signal_number, &ignore, NULL);
        sigaction(signal_number, &previous_action, NULL);
    }
    pthread_mutex_unlock(&install_lock);
}

int CStallMonitor_sampler_signal(void) {
    return atomic_load(&installed_signal);
}

int CStallMonitor_sampler_unwinder_available(char *note, size_t note_size) {
    pthread_mutex_lock(&install_lock);
    int available = atomic_load(&unwinder.library) != NULL;
    if (!available && note != NULL && note_size > 0) {
        snprintf(note, note_size, "%s", unwinder.note[0] ? unwinder.note : "libunwind not loaded");
    }
    pthread_mutex_unlock(&install_lock);
    return available;
}

static void copy_out(uintptr_t *frames, int capacity, int *count, int *truncated) {
    int n = slot.count < capacity ? slot.count : capacity;
    memcpy(frames, slot.frames, (size_t)n * sizeof(uintptr_t));
    *count = n;
    *truncated = slot.truncated || n < slot.count;
}

static void copy_out_snapshot(CStallMonitorSnapshot *snapshot) {
    memcpy(snapshot->regs, slot.regs, sizeof(slot.regs));
    snapshot->valid = slot.valid;
    snapshot->pc = slot.pc;
    snapshot->sp = slot.sp;
    size_t size = slot.stack_size < snapshot->stack_capacity ? slot.stack_size : snapshot->stack_capacity;
    memcpy(snapshot->stack, slot.stack, size);
    snapshot->stack_size = size;
}

/// Waits until the handler on `tid` has answered (the slot is DONE) or `deadline` passes: polls the
/// state word, sleeping 20 µs between looks for the first half millisecond (a signal reaches a
/// running thread in a few tens of µs), then longer, up to 1 ms. Returns 1 when answered.
static int wait_for_answer(pid_t tid, uint64_t deadline) {
    const uint64_t done = slot_word(tid, SLOT_DONE);
    uint64_t waited = 0;
    for (;;) {
        if (atomic_load(&slot.word) == done) return 1;
        uint64_t now = CStallMonitor_monotonic_ns();
        if (now >= deadline) return 0;
        uint64_t step = waited < 500000 ? 20000 : waited < 5000000 ? 200000 : 1000000;
        if (step > deadline - now) step = deadline - now;
        struct timespec pause = {.tv_sec = 0, .tv_nsec = (long)step};
        nanosleep(&pause, NULL);
        waited += step;
    }
}

int CStallMonitor_sampler_handler_installed(void) {
    return handler_installed(atomic_load(&installed_signal));
}

/// Publishes a request to thread `tid`, signals it and waits for the answer. On OK the slot is
/// DONE and the caller copies the answer out, then sets the slot IDLE. Nothing is sent when the
/// signal no longer runs our handler.
static CStallMonitorSampleResult send_request(pid_t tid, uint64_t timeout_ns, int signal_number, int request,
                                              const CStallMonitorSnapshot *bounds) {
    if (!handler_installed(signal_number)) return CStallMonitorSampleHandlerReplaced;
    // A late answer to an earlier, withdrawn request: finish it, or wait for it to finish.
    uint64_t word = atomic_load(&slot.word);
    if ((word & 0xff) == SLOT_DONE) {
        atomic_compare_exchange_strong(&slot.word, &word, 0);
    } else if (word != 0) {
        return CStallMonitorSampleBusy;
    }
    // The slot is idle: no handler reads the request fields now (requests are serialized by the
    // caller). The compare-and-swap below publishes them.
    slot.request = request;
    if (bounds != NULL) {
        slot.stack_low = bounds->stack_low;
        slot.stack_high = bounds->stack_high;
        slot.copy_limit = bounds->stack_capacity < sizeof(slot.stack) ? bounds->stack_capacity : sizeof(slot.stack);
    }
    uint64_t idle = 0;
    if (!atomic_compare_exchange_strong(&slot.word, &idle, slot_word(tid, SLOT_REQUESTED))) {
        return CStallMonitorSampleBusy;
    }
    if (syscall(SYS_tgkill, getpid(), tid, signal_number) != 0) {
        atomic_store(&last_send_errno, errno);
        uint64_t requested = slot_word(tid, SLOT_REQUESTED);
        atomic_compare_exchange_strong(&slot.word, &requested, 0);
        return CStallMonitorSampleSendFailed;
    }
    uint64_t deadline = CStallMonitor_monotonic_ns() + timeout_ns;
    if (wait_for_answer(tid, deadline)) return CStallMonitorSampleOK;
    uint64_t requested = slot_word(tid, SLOT_REQUESTED);
    if (atomic_compare_exchange_strong(&slot.word, &requested, 0)) {
        return CStallMonitorSampleTimedOut;  // withdrawn before the handler claimed it
    }
    // The handler claimed the request just now: it is answering; give it one more deadline.
    uint64_t grace = CStallMonitor_monotonic_ns() + timeout_ns;
    if (wait_for_answer(tid, grace)) return CStallMonitorSampleOK;
    return CStallMonitorSampleTimedOut;  // still claimed: later calls answer Busy until it is done
}

CStallMonitorSampleResult CStallMonitor_sampler_sample(pid_t tid, uint64_t timeout_ns,
                                                       uintptr_t *frames, int capacity,
                                                       int *count, int *truncated) {
    *count = 0;
    *truncated = 0;
    int signal_number = atomic_load(&installed_signal);
    if (signal_number == 0 || atomic_load(&unwinder.library) == NULL) return CStallMonitorSampleUnavailable;
    CStallMonitorSampleResult result = send_request(tid, timeout_ns, signal_number, REQUEST_FRAMES, NULL);
    if (result == CStallMonitorSampleOK) {
        copy_out(frames, capacity, count, truncated);
        atomic_store(&slot.word, 0);
    }
    return result;
}

void CStallMonitor_sampler_release_buffers(void) {
    // Only while no request is in flight: a handler writes the buffer only after claiming one.
    if (atomic_load(&slot.word) != 0) return;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t begin = ((uintptr_t)slot.stack + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)slot.stack + sizeof(slot.stack)) & ~((uintptr_t)page - 1);
    if (end > begin) madvise((void *)begin, end - begin, MADV_DONTNEED);
}

CStallMonitorSampleResult CStallMonitor_sampler_snapshot(pid_t tid, uint64_t timeout_ns,
                                                         CStallMonitorSnapshot *snapshot) {
    snapshot->valid = 0;
    snapshot->stack_size = 0;
    int signal_number = atomic_load(&installed_signal);
    if (signal_number == 0) return CStallMonitorSampleUnavailable;
    CStallMonitorSampleResult result = send_request(tid, timeout_ns, signal_number, REQUEST_SNAPSHOT, snapshot);
    if (result == CStallMonitorSampleOK) {
        copy_out_snapshot(snapshot);
        atomic_store(&slot.word, 0);
    }
    return result;
}
