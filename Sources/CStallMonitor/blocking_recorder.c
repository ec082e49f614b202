// Timing and recording watched calls on threads that must not block.
//
// A wrapper asks `begin` (blocking.h) whether to time its call: detection is on, the thread is
// not allowed to block, not inside the recorder, its RunLoop is not in its own wait, and it must
// not block: it runs a Swift task, runs a loop a monitor watches (registered by the loop's probe
// on the loop's thread), or the host marked it. Any other call pays a few loads. A timed call
// that blocked at least the threshold (and could have slept: not a call on a non-blocking socket,
// pipe or device, nor a poll with a zero timeout, whose time went to a preemption) is recorded on
// its own thread after it returned (the thread has already waited that long): the caller's return
// addresses found by following frame pointers inside the thread's stack, the task, the scope the
// scope hook names, and in a task the task's async callers (blocking_async_callers.c: one to a
// few reads of the task's memory, about a microsecond each, where the rest of a record costs a
// few). Records go to a fixed table of slots, claimed with a compare-and-swap; the
// collector takes them (`CStallMonitor_blocking_take`); a call that finds every slot full is
// counted as dropped. The collector sleeps while no record comes: the first record (or drop) made
// while it is parked posts its wake-up, once.
#include "CStallMonitor.h"
#include "blocking.h"
#include "own_code.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { slot_count = 256 };
enum { slot_free = 0, slot_writing = 1, slot_ready = 2 };

atomic_int cstallmonitor_blocking_enabled;
/// Whether calls outside any scope are recorded (some detector takes every call).
static atomic_int record_unscoped;
static _Atomic uint64_t threshold_ns = 1000000;
static _Atomic uint64_t dropped;
static atomic_uint next_slot;
static _Atomic(uint64_t (*)(void)) scope_hook;
/// `swift_task_getCurrent` of the Swift runtime, when it is loaded.
static void *(*_Atomic current_task)(void);
/// The offset of the runtime's active-task word from the thread pointer, when known (0: call
/// `current_task`, which costs a call and the runtime's __tls_get_addr).
_Atomic intptr_t cstallmonitor_blocking_task_word;

void CStallMonitor_blocking_set_task_word(intptr_t offset) { atomic_store(&cstallmonitor_blocking_task_word, offset); }

/// The task the calling thread runs (NULL: none, or the runtime is not loaded).
CSTALLMONITOR_OWN_CODE static inline void *running_task(void) {
    intptr_t offset = atomic_load_explicit(&cstallmonitor_blocking_task_word, memory_order_relaxed);
    if (offset != 0) return *(void *const *)((char *)__builtin_thread_pointer() + offset);
    void *(*task)(void) = atomic_load_explicit(&current_task, memory_order_relaxed);
    return task != NULL ? task() : NULL;
}

/// libdispatch's main queue state word (`dq_state` of `_dispatch_main_q`), when its layout is
/// known: its low 30 bits hold the kernel id of the thread draining the main queue, which runs
/// MainActor work (a Dispatch worker in an `async main` program, the main thread under a RunLoop).
static _Atomic(const _Atomic uint64_t *) main_queue_state;

void CStallMonitor_blocking_set_main_queue_state(const void *state) {
    atomic_store(&main_queue_state, (const _Atomic uint64_t *)state);
}

/// 1 when thread `tid` drains the main queue now, 0 when it does not, -1 when unknown.
static int drains_main_queue(int32_t tid) {
    const _Atomic uint64_t *state = atomic_load_explicit(&main_queue_state, memory_order_relaxed);
    if (state == NULL) return -1;
    return (int32_t)(atomic_load_explicit(state, memory_order_relaxed) & 0x3fffffff) == tid;
}

static struct {
    atomic_int state;
    CStallMonitorBlockingRecord record;
} slots[slot_count];

/// The collector's wake-up. The recorder and a collector about to sleep form a Dekker pair on
/// sequentially consistent atomics: the recorder publishes its record (or drop), then reads the
/// parked flag; the collector sets the flag, then looks for records. At least one sees the other.
/// Made at the first enable, which comes before the collector's thread starts.
static sem_t collector_wakeup;
static pthread_once_t collector_wakeup_once = PTHREAD_ONCE_INIT;
static atomic_int collector_parked;

static void init_collector_wakeup(void) { sem_init(&collector_wakeup, 0, 0); }

/// Posts the collector's wake-up when it is parked (the recorder, after a record or a drop).
CSTALLMONITOR_OWN_CODE static void wake_parked_collector(void) {
    if (atomic_load(&collector_parked) && atomic_exchange(&collector_parked, 0)) sem_post(&collector_wakeup);
}

enum { loop_count = 256, loops_per_thread = (int)(sizeof cstallmonitor_blocking_thread_state.loops / sizeof(uint64_t)) };

/// Registrations of watched loops' threads: acquiring makes a loop's generation odd, releasing
/// even; a thread's registration counts while the generation it recorded is the loop's current,
/// odd one.
static struct {
    atomic_int used;
    atomic_uint generation;
} loops[loop_count];

__thread __attribute__((tls_model("initial-exec"))) struct cstallmonitor_blocking_thread cstallmonitor_blocking_thread_state;

/// This thread's state (see blocking.h).
#define thread_state cstallmonitor_blocking_thread_state

int CStallMonitor_blocking_loop_acquire(void) {
    for (int index = 0; index < loop_count; index++) {
        int free_loop = 0;
        if (!atomic_compare_exchange_strong(&loops[index].used, &free_loop, 1)) continue;
        atomic_fetch_add(&loops[index].generation, 1);
        return index;
    }
    return -1;
}

void CStallMonitor_blocking_loop_release(int loop) {
    if (loop < 0 || loop >= loop_count) return;
    atomic_fetch_add(&loops[loop].generation, 1);
    atomic_store(&loops[loop].used, 0);
}

/// Whether a thread registration names a loop still watched.
static int loop_entry_valid(uint64_t entry) {
    if (entry == 0) return 0;
    int loop = (int)(uint32_t)entry - 1;
    unsigned generation = atomic_load_explicit(&loops[loop].generation, memory_order_relaxed);
    return (generation & 1) != 0 && (uint32_t)(entry >> 32) == generation;
}

int CStallMonitor_blocking_loop_here(int loop) {
    if (loop < 0 || loop >= loop_count) return -1;
    unsigned generation = atomic_load(&loops[loop].generation);
    if ((generation & 1) == 0) return -1;  // released
    uint64_t entry = ((uint64_t)generation << 32) | (uint32_t)(loop + 1);
    for (int index = 0; index < loops_per_thread; index++) {
        if (thread_state.loops[index] == entry) return 0;
        if (!loop_entry_valid(thread_state.loops[index])) {
            thread_state.loops[index] = entry;
            return 0;
        }
    }
    return -1;
}

/// Whether the calling thread runs a loop that is watched now.
CSTALLMONITOR_OWN_CODE static inline int runs_watched_loop(void) {
    for (int index = 0; index < loops_per_thread; index++)
        if (loop_entry_valid(thread_state.loops[index])) return 1;
    return 0;
}

/// The main thread, noted when the shim is loaded on it, and its stack's bounds, learned when
/// detection is enabled: glibc finds the main thread's by reading /proc/self/maps, which would
/// cost its first record hundreds of microseconds on the thread itself.
static pthread_t main_thread;
static atomic_int main_thread_known;
static _Atomic uintptr_t main_stack_low, main_stack_high;

__attribute__((constructor)) static void note_main_thread(void) {
    if (CStallMonitor_gettid() != getpid()) return;
    main_thread = pthread_self();
    atomic_store(&main_thread_known, 1);
}

/// Learns the main thread's stack bounds from the enabling thread (once).
static void learn_main_stack_bounds(void) {
    if (!atomic_load(&main_thread_known) || atomic_load(&main_stack_high) != 0) return;
    pthread_attr_t attributes;
    if (pthread_getattr_np(main_thread, &attributes) != 0) return;
    void *low = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0) {
        atomic_store(&main_stack_low, (uintptr_t)low);
        atomic_store(&main_stack_high, (uintptr_t)low + size);
    }
    pthread_attr_destroy(&attributes);
}

void CStallMonitor_blocking_enable(uint64_t threshold, int unscoped) {
    pthread_once(&collector_wakeup_once, init_collector_wakeup);
    learn_main_stack_bounds();
    atomic_store(&record_unscoped, unscoped);
    if (atomic_load(&current_task) == NULL)
        atomic_store(&current_task, (void *(*)(void))dlsym(RTLD_DEFAULT, "swift_task_getCurrent"));
    atomic_store(&threshold_ns, threshold);
    cstallmonitor_blocking_clock_start(threshold);
    atomic_store(&cstallmonitor_blocking_enabled, 1);
}

void CStallMonitor_blocking_disable(void) { atomic_store(&cstallmonitor_blocking_enabled, 0); }

void CStallMonitor_blocking_thread_mark(int must_not_block) { thread_state.marked += must_not_block ? 1 : -1; }

CSTALLMONITOR_OWN_CODE void CStallMonitor_blocking_loop_waits(int waiting) { thread_state.loop_waits = waiting; }

void CStallMonitor_blocking_allow(int allowed) { thread_state.allowed += allowed ? 1 : -1; }

void CStallMonitor_blocking_set_scope_hook(uint64_t (*hook)(void)) { atomic_store(&scope_hook, hook); }

CSTALLMONITOR_OWN_CODE uint64_t cstallmonitor_blocking_begin_checked(void) {
    if (!runs_watched_loop() && running_task() == NULL) return 0;
    return cstallmonitor_blocking_clock();
}

/// Learns the calling thread's stack bounds (once per thread; the main thread's were learned when
/// detection was enabled, where the shim was loaded on it).
static void learn_stack_bounds(void) {
    if (thread_state.stack_high != 0) return;
    uintptr_t main_high = atomic_load(&main_stack_high);
    if (main_high != 0 && CStallMonitor_gettid() == getpid()) {
        thread_state.stack_low = atomic_load(&main_stack_low);
        thread_state.stack_high = main_high;
        return;
    }
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    void *low = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0) {
        thread_state.stack_low = (uintptr_t)low;
        thread_state.stack_high = (uintptr_t)low + size;
    }
    pthread_attr_destroy(&attributes);
}

/// The caller's return addresses: the wrapper's own, then each frame's saved one, following
/// saved frame pointers while they stay inside the stack and go up; `below[i]` receives the word
/// under the saved frame pointer of the frame whose return address is `frames[i + 1]` (where an
/// async function's frame keeps its context). `*complete` is set when the walk ended at the
/// outermost frame (a saved frame pointer of 0, as the thread's start leaves it). Not instrumented
/// by the sanitizers: a frame without a frame pointer leaves a stale word that may point anywhere
/// in the stack, redzones included (the bounds keep the reads inside it).
__attribute__((no_sanitize("address", "thread")))
static uint32_t walk_frames(uintptr_t *frames, uintptr_t *below, void *return_address, void *frame,
                            uint32_t *complete) {
    uint32_t count = 0;
    *complete = 0;
    frames[count++] = (uintptr_t)return_address;
    uintptr_t low = thread_state.stack_low, high = thread_state.stack_high;
    if (high == 0) return count;
    uintptr_t current = (uintptr_t)frame;
    while (count < CSTALLMONITOR_BLOCKING_FRAMES) {
        if (current < low || current + 2 * sizeof(uintptr_t) > high || (current & 7) != 0) break;
        uintptr_t next = ((uintptr_t *)current)[0];
        if (next == 0) {
            *complete = 1;
            break;
        }
        if (next <= current || next + 2 * sizeof(uintptr_t) > high || (next & 7) != 0) break;
        uintptr_t address = ((uintptr_t *)next)[1];
        if (address < 4096) break;
        below[count - 1] = next - sizeof(uintptr_t) >= low ? ((uintptr_t *)next)[-1] : 0;
        frames[count++] = address;
        current = next;
    }
    return count;
}

/// Whether a call on `descriptor` that took long may have slept in it: not when the call could
/// not wait at all, nor on a non-blocking socket, pipe or character device (the time went to
/// running or to being preempted; a regular file or block device ignores O_NONBLOCK and may sleep).
static int may_have_slept(int descriptor) {
    if (descriptor == CSTALLMONITOR_CANNOT_WAIT) return 0;
    if (descriptor < 0) return 1;
    int flags = fcntl(descriptor, F_GETFL);
    if (flags < 0 || (flags & O_NONBLOCK) == 0) return 1;
    struct stat info;
    if (fstat(descriptor, &info) != 0) return 1;
    return S_ISREG(info.st_mode) || S_ISBLK(info.st_mode);
}

CSTALLMONITOR_OWN_CODE void cstallmonitor_blocking_end(int call, uint64_t elapsed, int descriptor, void *return_address, void *frame) {
    int saved_errno = errno;
    uint64_t duration = cstallmonitor_blocking_ticks_to_ns(elapsed);
    uint64_t start = CStallMonitor_monotonic_ns() - duration;
    if (duration < atomic_load_explicit(&threshold_ns, memory_order_relaxed) || !may_have_slept(descriptor)) {
        errno = saved_errno;
        return;
    }
    thread_state.inside = 1;
    uint64_t (*hook)(void) = atomic_load(&scope_hook);
    uint64_t scope = hook != NULL ? hook() : 0;
    if (scope == 0 && !atomic_load_explicit(&record_unscoped, memory_order_relaxed)) {
        thread_state.inside = 0;
        errno = saved_errno;
        return;
    }
    unsigned first = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
    int claimed = -1;
    for (unsigned offset = 0; offset < slot_count && claimed < 0; offset++) {
        unsigned index = (first + offset) % slot_count;
        int expected = slot_free;
        if (atomic_compare_exchange_strong(&slots[index].state, &expected, slot_writing)) claimed = (int)index;
    }
    if (claimed < 0) {
        atomic_fetch_add(&dropped, 1);
        wake_parked_collector();
    } else {
        CStallMonitorBlockingRecord *record = &slots[claimed].record;
        learn_stack_bounds();
        record->call = (uint32_t)call;
        record->thread_id = CStallMonitor_gettid();
        record->start_ns = start;
        record->duration_ns = duration;
        record->task = (uintptr_t)running_task();
        record->drains_main_queue = drains_main_queue(record->thread_id);
        record->scope = scope;
        uintptr_t below[CSTALLMONITOR_BLOCKING_FRAMES];
        record->frame_count = walk_frames(record->frames, below, return_address, (char *)frame, &record->frames_complete);
        record->stack_copy = 0;
        if (!record->frames_complete && record->frame_count < CSTALLMONITOR_BLOCKING_FRAMES && thread_state.stack_high != 0)
            cstallmonitor_blocking_copy_stack(record, (uintptr_t)frame, thread_state.stack_high);
        cstallmonitor_blocking_read_async_callers(record, below, record->frame_count - 1, thread_state.stack_low,
                                                  thread_state.stack_high);
        atomic_store(&slots[claimed].state, slot_ready);
        wake_parked_collector();
    }
    thread_state.inside = 0;
    errno = saved_errno;
}

static int by_start(const void *left, const void *right) {
    uint64_t a = ((const CStallMonitorBlockingRecord *)left)->start_ns;
    uint64_t b = ((const CStallMonitorBlockingRecord *)right)->start_ns;
    return a < b ? -1 : a > b;
}

int CStallMonitor_blocking_take(CStallMonitorBlockingRecord *records, int capacity, uint64_t *dropped_count) {
    int taken = 0;
    for (int index = 0; index < slot_count && taken < capacity; index++) {
        if (atomic_load_explicit(&slots[index].state, memory_order_acquire) != slot_ready) continue;
        memcpy(&records[taken++], &slots[index].record, sizeof(CStallMonitorBlockingRecord));
        atomic_store_explicit(&slots[index].state, slot_free, memory_order_release);
    }
    qsort(records, (size_t)taken, sizeof(CStallMonitorBlockingRecord), by_start);
    if (dropped_count != NULL) *dropped_count = atomic_exchange(&dropped, 0);
    return taken;
}

int CStallMonitor_blocking_collector_park(void) {
    atomic_store(&collector_parked, 1);
    int waiting = atomic_load(&dropped) != 0;
    for (int index = 0; index < slot_count && !waiting; index++) waiting = atomic_load(&slots[index].state) == slot_ready;
    if (waiting) atomic_store(&collector_parked, 0);
    return waiting;
}

int CStallMonitor_blocking_collector_wait(uint64_t timeout_ns) {
    int result = CStallMonitor_sem_wait_until(&collector_wakeup, CStallMonitor_monotonic_ns() + timeout_ns);
    atomic_store(&collector_parked, 0);
    return result == 0;
}

void CStallMonitor_blocking_collector_wake(void) {
    atomic_store(&collector_parked, 0);
    sem_post(&collector_wakeup);
}
