// Unwinding away from the sampled thread: elfutils' DWARF unwinder (libdw, loaded with dlopen)
// driven by our own register and memory callbacks over a snapshot, the registers and a copy of
// the stack bytes above the stack pointer. A snapshot comes from the sampling signal handler (a
// thread running on a CPU) or, for a thread asleep in the kernel, from its `/proc` syscall file
// and a copy of its frozen user stack made here with process_vm_readv: that thread is never
// signalled. Runs on the watchdog; never inside a signal handler.
#include "CStallMonitor.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define CSM_MAX_EXEC_RANGES 4096

static struct {
    pthread_once_t once;
    void *library;
    char note[256];
    Dwfl *(*begin)(const Dwfl_Callbacks *);
    void (*end)(Dwfl *);
    void (*report_begin)(Dwfl *);
    int (*report_end)(Dwfl *, int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr, void *), void *);
    int (*linux_proc_report)(Dwfl *, pid_t);
    bool (*attach_state)(Dwfl *, Elf *, pid_t, const Dwfl_Thread_Callbacks *, void *);
    int (*getthread_frames)(Dwfl *, pid_t, int (*)(Dwfl_Frame *, void *), void *);
    bool (*frame_pc)(Dwfl_Frame *, Dwarf_Addr *, bool *);
    bool (*state_registers)(Dwfl_Thread *, int, unsigned, const Dwarf_Word *);
    void (*state_register_pc)(Dwfl_Thread *, Dwarf_Word);
    int (*frame_reg)(Dwfl_Frame *, unsigned, Dwarf_Word *);  // libdw 0.188+, optional
    Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
    const char *(*module_addrname)(Dwfl_Module *, GElf_Addr);
    int (*dwfl_errno)(void);
    const char *(*dwfl_errmsg)(int);
    Dwfl_Callbacks callbacks;
    char *debuginfo_path;
} lib = {.once = PTHREAD_ONCE_INIT};

typedef struct {
    uintptr_t start;
    uintptr_t end;
} exec_range;

struct CStallMonitorUnwinder {
    Dwfl *dwfl;
    pid_t pid;
    /// The snapshot being unwound (set for the duration of one unwind).
    const CStallMonitorSnapshot *snapshot;
    /// Executable mappings of this process when the session opened, sorted by start.
    exec_range ranges[CSM_MAX_EXEC_RANGES];
    int range_count;
    /// Collected frames of the current unwind.
    uintptr_t *frames;
    int capacity;
    int count;
    int stopped_outside_code;
    /// Stack pointer of the last frame reached (0 when unknown).
    uintptr_t last_sp;
};

#if defined(__x86_64__)
enum { FRAME_POINTER_REG = 6, STACK_POINTER_REG = 7 };
#elif defined(__aarch64__)
enum { FRAME_POINTER_REG = 29, STACK_POINTER_REG = 31 };
#else
enum { FRAME_POINTER_REG = -1, STACK_POINTER_REG = -1 };
#endif

static void load_library(void) {
    void *library = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(lib.note, sizeof(lib.note), "libdw could not be loaded: %s", why ? why : "unknown error");
        return;
    }
#define CSM_LOAD(field, name)                                               \
    *(void **)(&lib.field) = dlsym(library, name);                          \
    if (lib.field == NULL) {                                                \
        snprintf(lib.note, sizeof(lib.note), "libdw lacks %s", name);       \
        dlclose(library);                                                   \
        return;                                                             \
    }
    CSM_LOAD(begin, "dwfl_begin")
    CSM_LOAD(end, "dwfl_end")
    CSM_LOAD(report_begin, "dwfl_report_begin")
    CSM_LOAD(report_end, "dwfl_report_end")
    CSM_LOAD(linux_proc_report, "dwfl_linux_proc_report")
    CSM_LOAD(attach_state, "dwfl_attach_state")
    CSM_LOAD(getthread_frames, "dwfl_getthread_frames")
    CSM_LOAD(frame_pc, "dwfl_frame_pc")
    CSM_LOAD(state_registers, "dwfl_thread_state_registers")
    CSM_LOAD(state_register_pc, "dwfl_thread_state_register_pc")
    CSM_LOAD(addrmodule, "dwfl_addrmodule")
    CSM_LOAD(module_addrname, "dwfl_module_addrname")
    CSM_LOAD(dwfl_errno, "dwfl_errno")
    CSM_LOAD(dwfl_errmsg, "dwfl_errmsg")
    CSM_LOAD(callbacks.find_elf, "dwfl_linux_proc_find_elf")
    CSM_LOAD(callbacks.find_debuginfo, "dwfl_standard_find_debuginfo")
#undef CSM_LOAD
    *(void **)(&lib.frame_reg) = dlsym(library, "dwfl_frame_reg");
    lib.callbacks.debuginfo_path = &lib.debuginfo_path;
    lib.library = library;
}

// MARK: - Executable mappings (from /proc/self/maps: no loader lock, which a stalled thread
// inside dlopen may hold)

static int compare_ranges(const void *a, const void *b) {
    const exec_range *left = a, *right = b;
    return left->start < right->start ? -1 : left->start > right->start;
}

static void read_exec_ranges(CStallMonitorUnwinder *session) {
    session->range_count = 0;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return;
    char line[512];
    while (fgets(line, sizeof(line), maps) != NULL && session->range_count < CSM_MAX_EXEC_RANGES) {
        unsigned long start = 0, end = 0;
        char permissions[8] = {0};
        if (sscanf(line, "%lx-%lx %7s", &start, &end, permissions) != 3) continue;
        if (permissions[2] != 'x') continue;
        session->ranges[session->range_count++] = (exec_range){(uintptr_t)start, (uintptr_t)end};
    }
    fclose(maps);
    qsort(session->ranges, (size_t)session->range_count, sizeof(exec_range), compare_ranges);
}

static int in_exec_range(const CStallMonitorUnwinder *session, uintptr_t address) {
    int low = 0, high = session->range_count - 1;
    while (low <= high) {
        int middle = low + (high - low) / 2;
        const exec_range *range = &session->ranges[middle];
        if (address < range->start) {
            high = middle - 1;
        } else if (address >= range->end) {
            low = middle + 1;
        } else {
            return 1;
        }
    }
    return 0;
}

int CStallMonitor_unwinder_is_code(const CStallMonitorUnwinder *session, uintptr_t address) {
    return in_exec_range(session, address);
}

// MARK: - Reading memory

/// Reads `size` bytes at `address` of this process without faulting (an unmapped address is an
/// error, not a crash). Returns 1 on success.
static int read_own_memory(uintptr_t address, void *into, size_t size) {
    struct iovec local = {.iov_base = into, .iov_len = size};
    struct iovec remote = {.iov_base = (void *)address, .iov_len = size};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size;
}

/// A word of the snapshot: from the stack copy when it lies there; never from the live stack of
/// the sampled thread (it has moved on); other memory (globals, rarely needed by CFI) is read
/// live.
static int snapshot_word(const CStallMonitorSnapshot *snapshot, uintptr_t address, uint64_t *value) {
    uintptr_t copy_end = snapshot->sp + snapshot->stack_size;
    if (address >= snapshot->sp && address + sizeof(uint64_t) <= copy_end) {
        memcpy(value, snapshot->stack + (address - snapshot->sp), sizeof(uint64_t));
        return 1;
    }
    if (snapshot->stack_high != 0 && address + sizeof(uint64_t) > snapshot->stack_low &&
        address < snapshot->stack_high) {
        return 0;  // on the thread's stack but outside the copy
    }
    return read_own_memory(address, value, sizeof(uint64_t));
}

// MARK: - libdw callbacks

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp) {
    (void)dwfl;
    (void)dwfl_arg;
    (void)thread_argp;
    return 0;  // threads are asked for by id only
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp) {
    (void)dwfl;
    (void)tid;
    *thread_argp = dwfl_arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr address, Dwarf_Word *result, void *dwfl_arg) {
    (void)dwfl;
    CStallMonitorUnwinder *session = dwfl_arg;
    if (session->snapshot == NULL) return false;
    uint64_t value = 0;
    if (!snapshot_word(session->snapshot, (uintptr_t)address, &value)) return false;
    *result = value;
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg) {
    CStallMonitorUnwinder *session = thread_arg;
    const CStallMonitorSnapshot *snapshot = session->snapshot;
    if (snapshot == NULL) return false;
    for (int reg = 0; reg < CSTALLMONITOR_SNAPSHOT_REGS; reg++) {
        if (!(snapshot->valid & (1ull << reg))) continue;
        Dwarf_Word value = snapshot->regs[reg];
        if (!lib.state_registers(thread, reg, 1, &value)) return false;
    }
    lib.state_register_pc(thread, snapshot->pc);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

// MARK: - Sessions

CStallMonitorUnwinder *CStallMonitor_unwinder_open(char *error, size_t error_size) {
    pthread_once(&lib.once, load_library);
    if (lib.library == NULL) {
        snprintf(error, error_size, "%s", lib.note);
        return NULL;
    }
    CStallMonitorUnwinder *session = calloc(1, sizeof(*session));
    if (session == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    session->pid = getpid();
    read_exec_ranges(session);
    session->dwfl = lib.begin(&lib.callbacks);
    if (session->dwfl == NULL) {
        snprintf(error, error_size, "dwfl_begin failed");
        free(session);
        return NULL;
    }
    lib.report_begin(session->dwfl);
    int reported = lib.linux_proc_report(session->dwfl, session->pid);
    lib.report_end(session->dwfl, NULL, NULL);
    if (reported != 0) {
        snprintf(error, error_size, "libdw could not read this process's modules");
        lib.end(session->dwfl);
        free(session);
        return NULL;
    }
    if (!lib.attach_state(session->dwfl, NULL, session->pid, &thread_callbacks, session)) {
        int code = lib.dwfl_errno();
        snprintf(error, error_size, "dwfl_attach_state failed: %s", lib.dwfl_errmsg(code));
        lib.end(session->dwfl);
        free(session);
        return NULL;
    }
    return session;
}

void CStallMonitor_unwinder_close(CStallMonitorUnwinder *session) {
    if (session == NULL) return;
    lib.end(session->dwfl);
    free(session);
}

static int frame_callback(Dwfl_Frame *state, void *arg) {
    CStallMonitorUnwinder *session = arg;
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!lib.frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
    if (pc == 0) return DWARF_CB_ABORT;
    // A return address is the instruction after a call: the call itself lies in code.
    uintptr_t code_address = activation || session->count == 0 ? (uintptr_t)pc : (uintptr_t)pc - 1;
    if (!in_exec_range(session, code_address)) {
        session->stopped_outside_code = 1;
        return DWARF_CB_ABORT;
    }
    if (session->count == session->capacity) return DWARF_CB_ABORT;
    session->frames[session->count++] = (uintptr_t)pc;
    Dwarf_Word sp = 0;
    session->last_sp = STACK_POINTER_REG >= 0 && lib.frame_reg != NULL &&
                               lib.frame_reg(state, (unsigned)STACK_POINTER_REG, &sp) == 0
                           ? (uintptr_t)sp
                           : 0;
    return DWARF_CB_OK;
}

/// Whether `pc` lies in a function where threads begin: the process's `_start`, or the C
/// library's clone/start_thread that every pthread starts in.
static int is_thread_entry(CStallMonitorUnwinder *session, uintptr_t pc) {
    static const char *const entries[] = {"_start", "__clone3", "__clone", "clone3", "clone", "start_thread", "thread_start"};
    Dwfl_Module *module = lib.addrmodule(session->dwfl, pc - 1);
    if (module == NULL) return 0;
    const char *name = lib.module_addrname(module, pc - 1);
    if (name == NULL) return 0;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
        if (strcmp(name, entries[i]) == 0) return 1;
    }
    return 0;
}

/// One walk over the snapshot; the result in the session's frames, count and last_sp.
static int walk(CStallMonitorUnwinder *session, pid_t tid, const CStallMonitorSnapshot *snapshot) {
    session->snapshot = snapshot;
    session->count = 0;
    session->stopped_outside_code = 0;
    session->last_sp = 0;
    int result = lib.getthread_frames(session->dwfl, tid, frame_callback, session);
    session->snapshot = NULL;
    // libdw answers 0 both when it reached the outermost frame (whose CFI marks the return
    // address undefined) and when it could not compute a caller at all: only a walk that ends in
    // a thread's entry function is whole.
    return result == 0 && !session->stopped_outside_code && session->count > 0 &&
           session->count < session->capacity && is_thread_entry(session, session->frames[session->count - 1]);
}

static int find_frame_record(const CStallMonitorUnwinder *session, const CStallMonitorSnapshot *snapshot,
                             uintptr_t from, uintptr_t *frame_pointer);

int CStallMonitor_unwinder_unwind(CStallMonitorUnwinder *session, pid_t tid,
                                  const CStallMonitorSnapshot *snapshot, uintptr_t *frames,
                                  int capacity, int *count, int *complete) {
    *count = 0;
    *complete = 0;
    if (session == NULL || snapshot == NULL || capacity <= 0) return -1;
    if (!in_exec_range(session, snapshot->pc)) {
        // The leaf is outside every executable mapping the session knows: a library loaded since
        // it opened (the caller re-opens) or not code at all.
        return CStallMonitorUnwindUnknownCode;
    }
    session->frames = frames;
    session->capacity = capacity;
    int done = walk(session, tid, snapshot);
    if (!done && FRAME_POINTER_REG >= 0 && !(snapshot->valid & (1ull << FRAME_POINTER_REG))) {
        // Only SP and PC are known (a thread asleep in the kernel). CFI relative to SP (release
        // code, the C library) got as far as the first frame whose CFA is relative to its frame
        // pointer (debug code). Its frame record (saved frame pointer, return address) lies at
        // or above that frame's SP: try the records found there, first to last, and keep the
        // first walk that reaches the outermost frame, else the longest.
        uintptr_t from = session->last_sp != 0 ? session->last_sp : snapshot->sp;
        CStallMonitorSnapshot guessed = *snapshot;
        guessed.valid |= 1ull << FRAME_POINTER_REG;
        int best_count = session->count;
        int best_done = 0;
        uintptr_t best_pointer = 0;
        for (int attempt = 0; attempt < 8; attempt++) {
            uintptr_t frame_pointer = 0;
            if (!find_frame_record(session, snapshot, from, &frame_pointer)) break;
            guessed.regs[FRAME_POINTER_REG] = frame_pointer;
            int guessed_done = walk(session, tid, &guessed);
            if (guessed_done || session->count > best_count) {
                best_count = session->count;
                best_done = guessed_done;
                best_pointer = frame_pointer;
            }
            if (guessed_done) break;
            from = frame_pointer + 8;
        }
        if (best_pointer != 0) {
            guessed.regs[FRAME_POINTER_REG] = best_pointer;
            done = walk(session, tid, &guessed);
            (void)best_done;
        } else {
            done = walk(session, tid, snapshot);
        }
    }
    *count = session->count;
    *complete = done;
    if (session->stopped_outside_code && session->count == 0) return CStallMonitorUnwindUnknownCode;
    return CStallMonitorUnwindDone;
}

// MARK: - Snapshots of a thread asleep in the kernel

int CStallMonitor_current_stack_bounds(uintptr_t *low, uintptr_t *high) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return -1;
    void *address = NULL;
    size_t size = 0;
    int result = pthread_attr_getstack(&attributes, &address, &size);
    pthread_attr_destroy(&attributes);
    if (result != 0) return -1;
    *low = (uintptr_t)address;
    *high = (uintptr_t)address + size;
    return 0;
}

/// Finds a frame record at or above `from`, for a thread whose registers other than SP and PC
/// are unknown: the first stack slot `a` holding a pointer to a higher slot of the stack (the
/// caller's saved frame pointer) next to a return address into code, checked once more one frame
/// further out. Code built without frame pointers (release builds) does not need it: its CFI is
/// relative to SP; code built with them (debug builds) needs it to find its frame.
static int find_frame_record(const CStallMonitorUnwinder *session, const CStallMonitorSnapshot *snapshot,
                             uintptr_t from, uintptr_t *frame_pointer) {
    uintptr_t copy_end = snapshot->sp + snapshot->stack_size;
    if (from < snapshot->sp) from = snapshot->sp;
    for (uintptr_t slot = (from + 7) & ~(uintptr_t)7; slot + 16 <= copy_end; slot += 8) {
        uint64_t saved = 0, return_address = 0;
        memcpy(&saved, snapshot->stack + (slot - snapshot->sp), 8);
        if (saved <= slot || saved + 16 > copy_end || (saved & 7) != 0) continue;
        memcpy(&return_address, snapshot->stack + (slot + 8 - snapshot->sp), 8);
        if (!in_exec_range(session, (uintptr_t)return_address - 1)) continue;
        uint64_t outer_saved = 0, outer_return = 0;
        memcpy(&outer_saved, snapshot->stack + (saved - snapshot->sp), 8);
        memcpy(&outer_return, snapshot->stack + (saved + 8 - snapshot->sp), 8);
        int outer_ok = (outer_saved == 0 || (outer_saved > saved && outer_saved < snapshot->stack_high)) &&
                       (outer_return == 0 || in_exec_range(session, (uintptr_t)outer_return - 1));
        if (!outer_ok) continue;
        *frame_pointer = slot;
        return 1;
    }
    return 0;
}

int CStallMonitor_snapshot_blocked(uintptr_t sp, uintptr_t pc, CStallMonitorSnapshot *snapshot) {
    snapshot->valid = 0;
    snapshot->sp = sp;
    snapshot->pc = pc;
    snapshot->stack_size = 0;
    if (sp < snapshot->stack_low || sp >= snapshot->stack_high) return -ERANGE;
    size_t available = snapshot->stack_high - sp;
    size_t size = available < snapshot->stack_capacity ? available : snapshot->stack_capacity;
    struct iovec local = {.iov_base = snapshot->stack, .iov_len = size};
    struct iovec remote = {.iov_base = (void *)sp, .iov_len = size};
    ssize_t copied = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (copied <= 0) return -errno;
    snapshot->stack_size = (size_t)copied & ~(size_t)7;
    if (STACK_POINTER_REG < 0) return -ENOTSUP;
    snapshot->regs[STACK_POINTER_REG] = sp;
    snapshot->valid |= 1ull << STACK_POINTER_REG;
    return 0;
}
