// Reading this process's own memory without faulting: the stacks of threads asleep in a syscall,
// the Swift runtime's task words of pool workers and the MainActor, async contexts.
//
// The first way is process_vm_readv on our own pid: one syscall, and memory that is unmapped fails
// instead of faulting. A hardened container's seccomp profile may deny it (EPERM), and some
// sandboxes do not implement it (ENOSYS); the same bytes can then be read with pread on
// /proc/self/mem, which such profiles allow and which also fails safely (EIO) on an unmapped page.
// The switch is made once, on the first denial, and kept; what was denied is kept for the monitor
// to say (CStallMonitor_own_memory_status). Every function here is async-signal-safe.
#include "CStallMonitor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <unistd.h>

/// The errno with which process_vm_readv was denied (EPERM, ENOSYS), 0 while it works.
static _Atomic int vm_readv_denied = 0;
/// The open /proc/self/mem (of the process `proc_mem_pid`), -1 before it is needed.
static _Atomic int proc_mem_fd = -1;
static _Atomic pid_t proc_mem_pid = 0;
/// The errno with which /proc/self/mem could not be opened, 0 while it could be (or was not tried).
static _Atomic int proc_mem_error = 0;

/// Whether a failed read's errno says the syscall itself is refused, not the address.
static int is_denial(int error) { return error == EPERM || error == ENOSYS || error == EACCES; }

/// The /proc/self/mem descriptor of this process (a child after fork opens its own: a descriptor
/// opened before fork reads the parent's memory), or -1 with `proc_mem_error` set.
static int proc_mem(void) {
    pid_t pid = getpid();
    int fd = atomic_load(&proc_mem_fd);
    if (fd >= 0 && atomic_load(&proc_mem_pid) == pid) return fd;
    int opened = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (opened < 0) {
        atomic_store(&proc_mem_error, errno);
        return -1;
    }
    // Two readers may both open it: the loser closes its own. The descriptor of an older pid is
    // left open (it belongs to the parent's image of the process; closing it here could race).
    if (atomic_compare_exchange_strong(&proc_mem_fd, &fd, opened)) {
        atomic_store(&proc_mem_pid, pid);
        atomic_store(&proc_mem_error, 0);
        return opened;
    }
    close(opened);
    return atomic_load(&proc_mem_fd);
}

/// Reads through /proc/self/mem: the bytes copied (a prefix when the range runs into an unmapped
/// page), or -errno.
static ssize_t read_proc_mem(uintptr_t address, void *into, size_t size) {
    int fd = proc_mem();
    if (fd < 0) return -atomic_load(&proc_mem_error);
    ssize_t copied = pread(fd, into, size, (off_t)address);
    return copied < 0 ? -errno : copied;
}

ssize_t CStallMonitor_copy_own_memory(uintptr_t address, void *into, size_t size) {
    if (size == 0) return 0;
    if (atomic_load_explicit(&vm_readv_denied, memory_order_relaxed) == 0) {
        struct iovec local = {.iov_base = into, .iov_len = size};
        struct iovec remote = {.iov_base = (void *)address, .iov_len = size};
        ssize_t copied = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (copied >= 0) return copied;
        int error = errno;
        if (!is_denial(error)) return -error;
        int expected = 0;
        atomic_compare_exchange_strong(&vm_readv_denied, &expected, error);
    }
    return read_proc_mem(address, into, size);
}

int CStallMonitor_read_memory(uintptr_t address, void *buffer, size_t size) {
    return CStallMonitor_copy_own_memory(address, buffer, size) == (ssize_t)size ? 0 : -1;
}

CStallMonitorOwnMemoryStatus CStallMonitor_own_memory_status(void) {
    CStallMonitorOwnMemoryStatus status = {
        .vm_readv_denied = atomic_load(&vm_readv_denied),
        .proc_mem_error = atomic_load(&proc_mem_error),
    };
    return status;
}
