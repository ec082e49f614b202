// The wrappers that replace the watched calls in the images' GOTs (blocking_got.c).
//
// Each forwards to the function the image would have called (the C library's, or a sanitizer's
// interceptor of it) between cstallmonitor_blocking_begin and _end, which time it on threads that
// must not block and record it when it blocked long enough. Taking the frame address makes the
// compiler keep a frame pointer in every wrapper, so the recorder can walk the caller's frames.
// They live in the monitor's own-code section: a stall report's stack that passes through one
// never counts it in the report's identity.
#include "CStallMonitor.h"
#include "blocking.h"
#include "own_code.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/// The body every wrapper shares: `forwarded` (the call to the real function, of type `type`)
/// between begin and end; returns its result. `descriptor`: the call's descriptor (a slow call on
/// a non-blocking socket or pipe was preempted, not asleep: not recorded), or one of
/// CSTALLMONITOR_NO_DESCRIPTOR, CSTALLMONITOR_CANNOT_WAIT.
#define CSTALLMONITOR_TIMED_ON(call, type, forwarded, descriptor)                          \
    int checked_descriptor = (descriptor); /* before the call: select rewrites its timeout */ \
    uint64_t start = cstallmonitor_blocking_begin();                                       \
    type result = forwarded;                                                               \
    if (start != 0) {                                                                      \
        uint64_t elapsed = cstallmonitor_blocking_elapsed(start);                          \
        if (elapsed != 0)                                                                  \
            cstallmonitor_blocking_end(call, elapsed, checked_descriptor,                  \
                                       __builtin_return_address(0), __builtin_frame_address(0)); \
    }                                                                                      \
    return result;

#define CSTALLMONITOR_TIMED(call, type, forwarded) CSTALLMONITOR_TIMED_ON(call, type, forwarded, CSTALLMONITOR_NO_DESCRIPTOR)

/// What a wait until `timeout` tells the recorder: one with a zero timeout cannot wait (a slow
/// return was a preemption); any other may sleep, on no descriptor of its own.
static inline __attribute__((always_inline)) int wait_until_timespec(const struct timespec *timeout) {
    return timeout != NULL && timeout->tv_sec == 0 && timeout->tv_nsec == 0 ? CSTALLMONITOR_CANNOT_WAIT
                                                                            : CSTALLMONITOR_NO_DESCRIPTOR;
}

/// The same for select's `struct timeval`.
static inline __attribute__((always_inline)) int wait_until_timeval(const struct timeval *timeout) {
    return timeout != NULL && timeout->tv_sec == 0 && timeout->tv_usec == 0 ? CSTALLMONITOR_CANNOT_WAIT
                                                                            : CSTALLMONITOR_NO_DESCRIPTOR;
}

/// Defines the forward pointer and the wrapper of `name`, returning `type`.
#define CSTALLMONITOR_WRAP(call, type, name, params, args)                                  \
    static type (*forward_##name) params;                                                 \
    CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static type wrap_##name params {    \
        CSTALLMONITOR_TIMED(call, type, forward_##name args)                               \
    }

/// The same for a call on descriptor `descriptor` (or one that cannot wait: CSTALLMONITOR_TIMED_ON).
#define CSTALLMONITOR_WRAP_ON(call, type, name, params, args, descriptor)                   \
    static type (*forward_##name) params;                                                 \
    CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static type wrap_##name params {    \
        CSTALLMONITOR_TIMED_ON(call, type, forward_##name args, descriptor)                \
    }

CSTALLMONITOR_WRAP(CStallMonitorBlockingUsleep, int, usleep, (useconds_t usec), (usec))
CSTALLMONITOR_WRAP(CStallMonitorBlockingNanosleep, int, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem))
CSTALLMONITOR_WRAP(CStallMonitorBlockingClockNanosleep, int, clock_nanosleep,
                   (clockid_t clock, int flags, const struct timespec *req, struct timespec *rem), (clock, flags, req, rem))
CSTALLMONITOR_WRAP(CStallMonitorBlockingSleep, unsigned, sleep, (unsigned seconds), (seconds))
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingRead, ssize_t, read, (int fd, void *buffer, size_t count), (fd, buffer, count), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingWrite, ssize_t, write, (int fd, const void *buffer, size_t count), (fd, buffer, count), fd)
CSTALLMONITOR_WRAP(CStallMonitorBlockingPread, ssize_t, pread, (int fd, void *buffer, size_t count, off_t offset), (fd, buffer, count, offset))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPread64, ssize_t, pread64, (int fd, void *buffer, size_t count, off_t offset), (fd, buffer, count, offset))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPwrite, ssize_t, pwrite, (int fd, const void *buffer, size_t count, off_t offset), (fd, buffer, count, offset))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPwrite64, ssize_t, pwrite64, (int fd, const void *buffer, size_t count, off_t offset), (fd, buffer, count, offset))
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingReadv, ssize_t, readv, (int fd, const struct iovec *vector, int count), (fd, vector, count), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingWritev, ssize_t, writev, (int fd, const struct iovec *vector, int count), (fd, vector, count), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingRecv, ssize_t, recv, (int fd, void *buffer, size_t length, int flags), (fd, buffer, length, flags), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingRecvfrom, ssize_t, recvfrom,
                   (int fd, void *buffer, size_t length, int flags, struct sockaddr *address, socklen_t *address_length),
                   (fd, buffer, length, flags, address, address_length), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingRecvmsg, ssize_t, recvmsg, (int fd, struct msghdr *message, int flags), (fd, message, flags), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingSend, ssize_t, send, (int fd, const void *buffer, size_t length, int flags), (fd, buffer, length, flags), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingSendto, ssize_t, sendto,
                   (int fd, const void *buffer, size_t length, int flags, const struct sockaddr *address, socklen_t address_length),
                   (fd, buffer, length, flags, address, address_length), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingSendmsg, ssize_t, sendmsg, (int fd, const struct msghdr *message, int flags), (fd, message, flags), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingAccept, int, accept, (int fd, struct sockaddr *address, socklen_t *length), (fd, address, length), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingAccept4, int, accept4, (int fd, struct sockaddr *address, socklen_t *length, int flags),
                   (fd, address, length, flags), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingConnect, int, connect, (int fd, const struct sockaddr *address, socklen_t length), (fd, address, length), fd)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingPoll, int, poll, (struct pollfd *fds, nfds_t count, int timeout), (fds, count, timeout), timeout == 0 ? CSTALLMONITOR_CANNOT_WAIT : CSTALLMONITOR_NO_DESCRIPTOR)
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingPpoll, int, ppoll,
                   (struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask), (fds, count, timeout, mask), wait_until_timespec(timeout))
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingSelect, int, select,
                   (int count, fd_set *readable, fd_set *writable, fd_set *failed, struct timeval *timeout),
                   (count, readable, writable, failed, timeout), wait_until_timeval(timeout))
CSTALLMONITOR_WRAP_ON(CStallMonitorBlockingPselect, int, pselect,
                   (int count, fd_set *readable, fd_set *writable, fd_set *failed, const struct timespec *timeout, const sigset_t *mask),
                   (count, readable, writable, failed, timeout, mask), wait_until_timespec(timeout))
CSTALLMONITOR_WRAP(CStallMonitorBlockingFsync, int, fsync, (int fd), (fd))
CSTALLMONITOR_WRAP(CStallMonitorBlockingFdatasync, int, fdatasync, (int fd), (fd))
CSTALLMONITOR_WRAP(CStallMonitorBlockingFlock, int, flock, (int fd, int operation), (fd, operation))
CSTALLMONITOR_WRAP(CStallMonitorBlockingStat, int, stat, (const char *path, struct stat *info), (path, info))
CSTALLMONITOR_WRAP(CStallMonitorBlockingLstat, int, lstat, (const char *path, struct stat *info), (path, info))
CSTALLMONITOR_WRAP(CStallMonitorBlockingStatx, int, statx, (int directory, const char *path, int flags, unsigned mask, struct statx *info),
                   (directory, path, flags, mask, info))
/// Defines the forward pointer and wrapper of a lock call whose `attempt` (the non-blocking try of
/// the same lock, assigning `tried`) acquires it at once in the uncontended case: then the wrapper
/// returns the try's result without reading the clock; only a lock that is busy (the try returns
/// EBUSY) is timed. The try's other results are the lock's own (acquired, EOWNERDEAD, EAGAIN,
/// EINVAL, …), so a waiting lock is only ever called where it may wait.
#define CSTALLMONITOR_WRAP_LOCK(call, name, params, args, attempt)                          \
    static int (*forward_##name) params;                                                  \
    CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static int wrap_##name params {      \
        int tried = (attempt);                                                            \
        if (tried != EBUSY) return tried;                                                 \
        CSTALLMONITOR_TIMED(call, int, forward_##name args)                                \
    }

CSTALLMONITOR_WRAP_LOCK(CStallMonitorBlockingPthreadMutexLock, pthread_mutex_lock, (pthread_mutex_t *mutex), (mutex),
                        pthread_mutex_trylock(mutex))
CSTALLMONITOR_WRAP_LOCK(CStallMonitorBlockingPthreadRwlockRdlock, pthread_rwlock_rdlock, (pthread_rwlock_t *lock), (lock),
                        pthread_rwlock_tryrdlock(lock))
CSTALLMONITOR_WRAP_LOCK(CStallMonitorBlockingPthreadRwlockWrlock, pthread_rwlock_wrlock, (pthread_rwlock_t *lock), (lock),
                        pthread_rwlock_trywrlock(lock))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPthreadCondWait, int, pthread_cond_wait, (pthread_cond_t *condition, pthread_mutex_t *mutex),
                   (condition, mutex))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPthreadCondTimedwait, int, pthread_cond_timedwait,
                   (pthread_cond_t *condition, pthread_mutex_t *mutex, const struct timespec *deadline), (condition, mutex, deadline))
CSTALLMONITOR_WRAP(CStallMonitorBlockingPthreadJoin, int, pthread_join, (pthread_t thread, void **value), (thread, value))
/// `sem_wait`: a semaphore with a count is taken with `sem_trywait` without reading the clock;
/// only a wait on one at zero (or a try that failed otherwise) is timed.
static int (*forward_sem_wait)(sem_t *semaphore);
CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static int wrap_sem_wait(sem_t *semaphore) {
    int saved_errno = errno;
    if (sem_trywait(semaphore) == 0) return 0;
    errno = saved_errno;
    CSTALLMONITOR_TIMED(CStallMonitorBlockingSemWait, int, forward_sem_wait(semaphore))
}
CSTALLMONITOR_WRAP(CStallMonitorBlockingSemTimedwait, int, sem_timedwait, (sem_t *semaphore, const struct timespec *deadline),
                   (semaphore, deadline))
CSTALLMONITOR_WRAP(CStallMonitorBlockingWaitpid, pid_t, waitpid, (pid_t pid, int *status, int options), (pid, status, options))
CSTALLMONITOR_WRAP(CStallMonitorBlockingWait4, pid_t, wait4, (pid_t pid, int *status, int options, struct rusage *usage),
                   (pid, status, options, usage))
CSTALLMONITOR_WRAP(CStallMonitorBlockingWaitid, int, waitid, (idtype_t type, id_t id, siginfo_t *info, int options), (type, id, info, options))

/// Defines the forward pointer and wrapper of an `open`-like call, whose mode argument is read
/// only when the flags need one.
#define CSTALLMONITOR_WRAP_OPEN(call, name, params, args, flags)                              \
    static int (*forward_##name) params;                                                    \
    CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static int wrap_##name params {       \
        mode_t mode = 0;                                                                     \
        if (((flags) & O_CREAT) != 0 || ((flags) & O_TMPFILE) == O_TMPFILE) {                \
            va_list list;                                                                    \
            va_start(list, flags);                                                           \
            mode = (mode_t)va_arg(list, int);                                                \
            va_end(list);                                                                    \
        }                                                                                    \
        CSTALLMONITOR_TIMED(call, int, forward_##name args)                                  \
    }

CSTALLMONITOR_WRAP_OPEN(CStallMonitorBlockingOpen, open, (const char *path, int flags, ...), (path, flags, mode), flags)
CSTALLMONITOR_WRAP_OPEN(CStallMonitorBlockingOpen64, open64, (const char *path, int flags, ...), (path, flags, mode), flags)
CSTALLMONITOR_WRAP_OPEN(CStallMonitorBlockingOpenat, openat, (int directory, const char *path, int flags, ...),
                        (directory, path, flags, mode), flags)
CSTALLMONITOR_WRAP_OPEN(CStallMonitorBlockingOpenat64, openat64, (int directory, const char *path, int flags, ...),
                        (directory, path, flags, mode), flags)

static long (*forward_syscall)(long number, ...);

/// Whether a futex operation waits (the other operations wake, requeue or unlock).
static int futex_waits(long operation) {
    switch (operation & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: case FUTEX_WAIT_BITSET: case FUTEX_LOCK_PI: case FUTEX_WAIT_REQUEUE_PI:
#ifdef FUTEX_LOCK_PI2
    case FUTEX_LOCK_PI2:
#endif
        return 1;
    default:
        return 0;
    }
}

/// `syscall()`: only futex waits are timed (libdispatch's `DispatchGroup.wait` and
/// `DispatchQueue.sync`, `Synchronization.Mutex`); every other number is forwarded untouched.
CSTALLMONITOR_OWN_CODE __attribute__((noinline)) static long wrap_syscall(long number, ...) {
    va_list list;
    va_start(list, number);
    long a = va_arg(list, long), b = va_arg(list, long), c = va_arg(list, long);
    long d = va_arg(list, long), e = va_arg(list, long), f = va_arg(list, long);
    va_end(list);
    if (number != SYS_futex || !futex_waits(b)) return forward_syscall(number, a, b, c, d, e, f);
    CSTALLMONITOR_TIMED(CStallMonitorBlockingFutex, long, forward_syscall(number, a, b, c, d, e, f))
}

#define CSTALLMONITOR_HOOK(name) {#name, (void *)wrap_##name, (void **)&forward_##name}

const struct cstallmonitor_blocking_hook cstallmonitor_blocking_hooks[CStallMonitorBlockingCallCount] = {
    CSTALLMONITOR_HOOK(usleep), CSTALLMONITOR_HOOK(nanosleep), CSTALLMONITOR_HOOK(clock_nanosleep),
    CSTALLMONITOR_HOOK(sleep), CSTALLMONITOR_HOOK(read), CSTALLMONITOR_HOOK(write),
    CSTALLMONITOR_HOOK(pread), CSTALLMONITOR_HOOK(pread64), CSTALLMONITOR_HOOK(pwrite),
    CSTALLMONITOR_HOOK(pwrite64), CSTALLMONITOR_HOOK(readv), CSTALLMONITOR_HOOK(writev),
    CSTALLMONITOR_HOOK(recv), CSTALLMONITOR_HOOK(recvfrom), CSTALLMONITOR_HOOK(recvmsg),
    CSTALLMONITOR_HOOK(send), CSTALLMONITOR_HOOK(sendto), CSTALLMONITOR_HOOK(sendmsg),
    CSTALLMONITOR_HOOK(accept), CSTALLMONITOR_HOOK(accept4), CSTALLMONITOR_HOOK(connect),
    CSTALLMONITOR_HOOK(poll), CSTALLMONITOR_HOOK(ppoll), CSTALLMONITOR_HOOK(select),
    CSTALLMONITOR_HOOK(pselect), CSTALLMONITOR_HOOK(open), CSTALLMONITOR_HOOK(open64),
    CSTALLMONITOR_HOOK(openat), CSTALLMONITOR_HOOK(openat64), CSTALLMONITOR_HOOK(fsync),
    CSTALLMONITOR_HOOK(fdatasync), CSTALLMONITOR_HOOK(flock), CSTALLMONITOR_HOOK(stat),
    CSTALLMONITOR_HOOK(lstat), CSTALLMONITOR_HOOK(statx), CSTALLMONITOR_HOOK(pthread_mutex_lock),
    CSTALLMONITOR_HOOK(pthread_rwlock_rdlock), CSTALLMONITOR_HOOK(pthread_rwlock_wrlock),
    CSTALLMONITOR_HOOK(pthread_cond_wait), CSTALLMONITOR_HOOK(pthread_cond_timedwait),
    CSTALLMONITOR_HOOK(pthread_join), CSTALLMONITOR_HOOK(sem_wait), CSTALLMONITOR_HOOK(sem_timedwait),
    CSTALLMONITOR_HOOK(syscall), CSTALLMONITOR_HOOK(waitpid), CSTALLMONITOR_HOOK(wait4),
    CSTALLMONITOR_HOOK(waitid),
};

const char *CStallMonitor_blocking_call_name(int call) {
    if (call == CStallMonitorBlockingFutex) return "futex";
    if (call < 0 || call >= CStallMonitorBlockingCallCount) return "unknown";
    return cstallmonitor_blocking_hooks[call].name;
}
