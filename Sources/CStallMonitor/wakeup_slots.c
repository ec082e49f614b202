// The watchdog's wake-up slots: each an eventfd a producer posts and the watchdog waits on, with a
// parked bit, a timerfd for late posts (wakeup_late_post.c) and one for the wait's deadline. The
// descriptors are made when a slot is first taken and never closed: a producer that read a slot
// just before it was released writes to the same eventfd, never to a descriptor number the host
// has since reused.
//
// A producer (the pool's enqueue hook, a watched event loop's return from epoll_wait) and a
// watchdog about to sleep form a Dekker pair on sequentially consistent atomics: the producer sets
// its own flag, then reads the parked bits; the watchdog sets its parked bit, then takes the
// producers' flags. At least one of them sees the other, so work either keeps the watchdog from
// sleeping or wakes it.
#include "CStallMonitor.h"
#include "own_code.h"
#include "wakeup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static struct {
    atomic_int used;
    /// 1 once the descriptors exist, -1 when the eventfd could not be made (the slot is never
    /// handed out).
    atomic_int initialized;
    int event_fd;
    /// The late post's timer (-1: none could be made).
    int timer_fd;
    /// The wait's deadline, absolute on CLOCK_MONOTONIC (a ppoll timeout is relative: a process
    /// stopped with SIGSTOP and continued would wait out the rest of it again, and a post made at
    /// the resume would end a wait whose deadline is long past as if in time).
    int deadline_fd;
    /// The deadline armed now (0: none; the waiting watchdog's alone).
    uint64_t deadline_armed;
} slots[CStallMonitor_wakeup_slot_count];

CStallMonitor_wakeup_flags CStallMonitor_wakeup_producer_flags[CStallMonitor_wakeup_producer_count] = {
    [CStallMonitor_wakeup_producer_pool] = {.posts_late = 1},
};

/// Clears every producer's flag and watch bit for the slot (a slot taken or given back).
static void reset_producer_flags(int slot) {
    for (int producer = 0; producer < CStallMonitor_wakeup_producer_count; producer++) {
        CStallMonitor_wakeup_flags_reset(&CStallMonitor_wakeup_producer_flags[producer], slot);
    }
}

/// Slots whose watchdog sleeps until a producer posts it, and when each was last posted.
static _Atomic uint64_t parked;
static _Atomic uint64_t posted_at[CStallMonitor_wakeup_slot_count];
/// Slots whose last wait was ended by the late post's timer.
static _Atomic uint64_t timer_ended;

/// Reads a non-blocking eventfd or timerfd empty: its count (posts, or the timer's expirations).
static uint64_t drain(int fd) {
    uint64_t count = 0;
    ssize_t got;
    do {
        got = read(fd, &count, sizeof(count));
    } while (got < 0 && errno == EINTR);
    return got == (ssize_t)sizeof(count) ? count : 0;
}

/// Moves a new descriptor of ours above the numbers a host hands out first (the lowest free one,
/// which a host that closed 0-2 and reopened them would take): a host that dup2()s onto a low
/// number never lands on ours. Keeps it where it is when the limit on descriptors is lower.
static int out_of_the_way(int fd) {
    if (fd < 0) return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (moved < 0) return fd;
    close(fd);
    return moved;
}

/// Makes the slot's descriptors the first time it is taken; whether it has an eventfd.
static int initialize(int index) {
    int state = atomic_load(&slots[index].initialized);
    if (state != 0) return state > 0;
    slots[index].event_fd = out_of_the_way(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (slots[index].event_fd < 0) {
        atomic_store(&slots[index].initialized, -1);
        return 0;
    }
    // A sandbox that refuses ppoll or timerfds (a seccomp profile) would make every wait return
    // at once: such a slot is never handed out (the watchdog then sleeps on a semaphore of its own).
    struct pollfd probe = {.fd = slots[index].event_fd, .events = POLLIN};
    struct timespec now = {0, 0};
    int deadline = out_of_the_way(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (deadline < 0 || (ppoll(&probe, 1, &now, NULL) < 0 && errno != EINTR)) {
        if (deadline >= 0) close(deadline);
        close(slots[index].event_fd);
        atomic_store(&slots[index].initialized, -1);
        return 0;
    }
    slots[index].deadline_fd = deadline;
    slots[index].deadline_armed = 0;
    slots[index].timer_fd = out_of_the_way(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    atomic_store(&slots[index].initialized, 1);
    return 1;
}

/// Arms (or disarms, 0) the slot's deadline timer, unless it is armed so already; whether it is.
static int set_deadline(int slot, uint64_t deadline_ns) {
    if (slots[slot].deadline_armed == deadline_ns) return 1;
    struct itimerspec when;
    memset(&when, 0, sizeof(when));
    when.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ull);
    when.it_value.tv_nsec = (long)(deadline_ns % 1000000000ull);
    if (timerfd_settime(slots[slot].deadline_fd, TFD_TIMER_ABSTIME, &when, NULL) != 0) return 0;
    slots[slot].deadline_armed = deadline_ns;
    return 1;
}

int CStallMonitor_wakeup_slot_acquire(void) {
    for (int index = 0; index < CStallMonitor_wakeup_slot_count; index++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&slots[index].used, &free_slot, 1)) continue;
        if (!initialize(index)) continue;  // stays taken: it cannot be waited on
        CStallMonitor_wakeup_late_post_disable(index);
        set_deadline(index, 0);
        drain(slots[index].deadline_fd);
        drain(slots[index].event_fd);  // posts meant for its last owner
        reset_producer_flags(index);
        return index;
    }
    return -1;
}

void CStallMonitor_wakeup_slot_release(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    CStallMonitor_wakeup_late_post_disable(slot);
    reset_producer_flags(slot);
    atomic_fetch_and(&parked, ~(1ull << slot));
    atomic_store(&slots[slot].used, 0);
}

CSTALLMONITOR_OWN_CODE void CStallMonitor_wakeup_slot_post(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count || atomic_load(&slots[slot].initialized) <= 0) return;
    // A host that closed the descriptor may have reused its number for a file, a socket or a pipe
    // (which have a type; an eventfd is an anonymous inode, which has none): never write there.
    // A refused fstat (a sandbox) does not keep the post from being made.
    struct stat status;
    if (fstat(slots[slot].event_fd, &status) == 0 && (status.st_mode & S_IFMT) != 0) return;
    uint64_t one = 1;
    ssize_t written;
    do {
        written = write(slots[slot].event_fd, &one, sizeof(one));
    } while (written < 0 && errno == EINTR);
}

int CStallMonitor_wakeup_slot_take_posts(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count || atomic_load(&slots[slot].initialized) <= 0) return 0;
    uint64_t posts = drain(slots[slot].event_fd);
    if (slots[slot].timer_fd >= 0) posts += drain(slots[slot].timer_fd);
    return posts > INT32_MAX ? INT32_MAX : (int)posts;
}

/// A wait that cannot be made (a refused call, a descriptor gone): sleeps 10 ms, so that the
/// watchdog never spins, and returns `error`.
static int refused(int error) {
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 10000000};
    nanosleep(&pause, NULL);
    return error;
}

int CStallMonitor_wakeup_slot_wait_until(int slot, uint64_t deadline_ns) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count || atomic_load(&slots[slot].initialized) <= 0) return EINVAL;
    if (deadline_ns != 0 && deadline_ns <= CStallMonitor_monotonic_ns()) {
        set_deadline(slot, 0);
        return ETIMEDOUT;
    }
    if (!set_deadline(slot, deadline_ns)) return refused(errno);
    struct pollfd fds[3] = {
        {.fd = slots[slot].deadline_fd, .events = POLLIN},
        {.fd = slots[slot].event_fd, .events = POLLIN},
        {.fd = slots[slot].timer_fd, .events = POLLIN},
    };
    nfds_t count = slots[slot].timer_fd >= 0 ? 3 : 2;
    for (;;) {
        int ready = ppoll(fds, count, NULL, NULL);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return refused(errno);  // refused after all (the slot's probe passed)
        }
        // A descriptor the host closed (POLLNVAL) or that is no longer ours in some other way:
        // sleep, never spin, and say so (the watchdog then looks at its deadlines only).
        for (nfds_t index = 0; index < count; index++) {
            if ((fds[index].revents & (POLLNVAL | POLLERR | POLLHUP)) != 0) return refused(EBADF);
        }
        // Every descriptor that is ready is read, so that none ends the next wait at once.
        int expired = (fds[0].revents & POLLIN) && drain(fds[0].fd) != 0;
        if (expired) slots[slot].deadline_armed = 0;
        int posted = (fds[1].revents & POLLIN) && drain(fds[1].fd) != 0;
        if (count == 3 && (fds[2].revents & POLLIN) && drain(fds[2].fd) != 0) {
            atomic_fetch_or(&timer_ended, 1ull << slot);
            posted = 1;
        }
        // The deadline passed: a timeout, even when a post came as well (after a stop, the post
        // of a thread that resumed first is no answer in time).
        if (expired) return ETIMEDOUT;
        if (posted) return 0;
    }
}

int CStallMonitor_wakeup_slot_timer_fd(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count || atomic_load(&slots[slot].initialized) <= 0) return -1;
    return slots[slot].timer_fd;
}

int CStallMonitor_wakeup_slot_take_timer_ended(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return 0;
    return (atomic_fetch_and(&timer_ended, ~(1ull << slot)) & (1ull << slot)) != 0;
}

void CStallMonitor_wakeup_slot_park(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    atomic_fetch_or(&parked, 1ull << slot);
}

void CStallMonitor_wakeup_slot_unpark(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return;
    atomic_fetch_and(&parked, ~(1ull << slot));
}

CSTALLMONITOR_OWN_CODE void CStallMonitor_wakeup_post_parked(uint64_t noted, int late) {
    uint64_t sleeping = atomic_load(&parked) & noted;
    if (sleeping == 0) return;
    sleeping &= atomic_fetch_and(&parked, ~sleeping);
    uint64_t now = CStallMonitor_monotonic_ns();
    for (; sleeping != 0; sleeping &= sleeping - 1) {
        int index = __builtin_ctzll(sleeping);
        atomic_store(&posted_at[index], now);
        if (late && CStallMonitor_wakeup_late_post_arm(index)) continue;
        CStallMonitor_wakeup_slot_post(index);
    }
}

uint64_t CStallMonitor_wakeup_slot_posted_at(int slot) {
    if (slot < 0 || slot >= CStallMonitor_wakeup_slot_count) return 0;
    return atomic_load(&posted_at[slot]);
}
