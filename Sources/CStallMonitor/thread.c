// Small thread helpers: kernel thread ids, per-thread CPU clocks, alternate signal stacks,
// deadline waits on semaphores.
#include "CStallMonitor.h"
#include "maps.h"

#include <malloc.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

pid_t CStallMonitor_gettid(void) {
    return (pid_t)syscall(SYS_gettid);
}

// The encoding below packs a thread id into a clockid_t as the kernel's ABI defines it (a 32-bit
// int on every Linux architecture); the test suite checks it against pthread_getcpuclockid.
_Static_assert(sizeof(clockid_t) == sizeof(int), "thread CPU clock ids are 32-bit ints");
_Static_assert(sizeof(pid_t) == sizeof(int), "thread ids are 32-bit ints");

int64_t CStallMonitor_thread_cpu_ns(pid_t tid) {
    // MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) from the kernel's posix-timers.h: ~tid << 3,
    // CPUCLOCK_PERTHREAD_MASK (4) | CPUCLOCK_SCHED (2).
    clockid_t clock = (clockid_t)(((unsigned int)~tid << 3) | 6u);
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000ll + (int64_t)ts.tv_nsec;
}

uint64_t CStallMonitor_thread_voluntary_switches(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
    return (uint64_t)usage.ru_nvcsw;
}

static __thread uint64_t loop_idle_yields;

uint64_t CStallMonitor_loop_idle_yields(void) { return loop_idle_yields; }

void CStallMonitor_note_loop_idle_yield(void) { loop_idle_yields++; }

int CStallMonitor_ensure_altstack(size_t min_size) {
    stack_t current;
    if (sigaltstack(NULL, &current) != 0) return -errno;
    if (!(current.ss_flags & SS_DISABLE) && current.ss_size >= min_size) return 0;
    if (current.ss_flags & SS_ONSTACK) return -EBUSY;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = (min_size + page - 1) / page * page;
    // One guard page below the stack catches an overflow instead of corrupting memory.
    void *memory = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return -errno;
    mprotect(memory, page, PROT_NONE);
    stack_t stack = {.ss_sp = (char *)memory + page, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) {
        int error = errno;
        munmap(memory, size + page);
        return -error;
    }
    return 1;  // owned by the thread for its lifetime: the handler may run on it at any time
}

int CStallMonitor_sem_wait_until(sem_t *sem, uint64_t deadline_ns) {
    for (;;) {
        int result;
        if (deadline_ns == 0) {
            result = sem_wait(sem);
        } else {
            struct timespec deadline = {.tv_sec = (time_t)(deadline_ns / 1000000000ull),
                                        .tv_nsec = (long)(deadline_ns % 1000000000ull)};
            result = sem_clockwait(sem, CLOCK_MONOTONIC, &deadline);
        }
        if (result == 0) return 0;
        if (errno != EINTR) return errno;
    }
}

int CStallMonitor_unblock_signal(int signal_number) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    return -pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int CStallMonitor_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int CStallMonitor_next_mapping(FILE *maps, uintptr_t *start, uintptr_t *end, char perms[8]) {
    char line[512];
    while (fgets(line, sizeof line, maps) != NULL) {
        if (strchr(line, '\n') == NULL) {
            // A line longer than the buffer (a long path): its rest is skipped, never taken for a
            // line of its own.
            int c;
            while ((c = fgetc(maps)) != EOF && c != '\n') {}
        }
        memset(perms, 0, 8);
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", start, end, perms) == 3) return 1;
    }
    return 0;
}

int CStallMonitor_take_mappings(int capacity, int (*take)(uintptr_t start, uintptr_t end, const char perms[8], int count, void *context),
                                void *context) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    int count = 0;
    uintptr_t start = 0, end = 0;
    char perms[8];
    while (count < capacity && CStallMonitor_next_mapping(maps, &start, &end, perms)) count += take(start, end, perms, count, context);
    fclose(maps);
    return count;
}

int CStallMonitor_mapping_containing(uintptr_t address, uintptr_t *low, uintptr_t *high) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    int found = -1;
    uintptr_t start = 0, end = 0;
    char perms[8];
    while (CStallMonitor_next_mapping(maps, &start, &end, perms)) {
        if (address >= start && address < end) {
            if (perms[0] == 'r' && perms[1] == 'w') {
                *low = start;
                *high = end;
                found = 0;
            }
            break;
        }
    }
    fclose(maps);
    return found;
}

uint64_t CStallMonitor_load_u64(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_ACQUIRE);
}

static __thread uint64_t thread_visitor;

int CStallMonitor_thread_first_visit(uint64_t visitor) {
    if (thread_visitor == visitor) return 0;
    thread_visitor = visitor;
    return 1;
}

int CStallMonitor_trim_heap(void) {
    return malloc_trim(0);
}

size_t CStallMonitor_heap_in_use(void) {
    return mallinfo2().uordblks;
}

long CStallMonitor_resident_bytes(void) {
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[128];
    ssize_t size = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (size <= 0) return 0;
    text[size] = '\0';
    unsigned long pages = 0, resident = 0;
    if (sscanf(text, "%lu %lu", &pages, &resident) != 2) return 0;
    return (long)resident * sysconf(_SC_PAGESIZE);
}

int CStallMonitor_epoll_wait_is_ours(void) {
    // Called from this file, not loop_wakeup.c: the call resolves to whichever epoll_wait the
    // link chose, as NIOPosix's calls do.
    int fd = epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) return 0;
    int watch = CStallMonitor_loop_watch_acquire();
    int ours = 0;
    if (watch >= 0) {
        if (CStallMonitor_loop_watch_here(watch) == 0) {
            struct epoll_event event;
            (void)epoll_wait(fd, &event, 1, 0);
            ours = CStallMonitor_loop_watch_entered(watch);
        }
        CStallMonitor_loop_watch_release(watch);
    }
    close(fd);
    return ours;
}
