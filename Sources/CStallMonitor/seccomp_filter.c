// A seccomp filter that makes chosen system calls fail with an errno, as a hardened container's
// profile does (Docker's and Kubernetes' profiles answer EPERM for a call they deny). Installed by
// `seccomp-run` before it executes a program, to check what the monitor does where it is denied
// what it relies on; never by the monitor itself.
#include "CStallMonitor.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define CSM_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CSM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/// The calls a filter may deny, by name.
static const struct {
    const char *name;
    long number;
} deniable[] = {
    {"process_vm_readv", SYS_process_vm_readv},
    {"process_vm_writev", SYS_process_vm_writev},
    {"tgkill", SYS_tgkill},
    {"tkill", SYS_tkill},
    {"rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo},
    {"perf_event_open", SYS_perf_event_open},
    {"ptrace", SYS_ptrace},
};

enum { CSM_MAX_DENIED = 16 };

int CStallMonitor_deny_syscalls(const char *const *names, int count, int error, char *message, size_t message_size) {
#ifndef CSM_AUDIT_ARCH
    (void)names; (void)count; (void)error;
    snprintf(message, message_size, "seccomp filters are built for x86_64 and aarch64 only");
    return -1;
#else
    if (count < 0 || count > CSM_MAX_DENIED) {
        snprintf(message, message_size, "at most %d calls can be denied", CSM_MAX_DENIED);
        return -1;
    }
    struct sock_filter program[4 + 2 * CSM_MAX_DENIED + 1];
    int length = 0;
    // Another architecture's calls (a 32-bit entry) pass: only this one's numbers are known.
    program[length++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    program[length++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CSM_AUDIT_ARCH, 1, 0);
    program[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    program[length++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < count; i++) {
        long number = -1;
        for (size_t k = 0; k < sizeof(deniable) / sizeof(deniable[0]); k++) {
            if (strcmp(names[i], deniable[k].name) == 0) number = deniable[k].number;
        }
        if (number < 0) {
            snprintf(message, message_size, "unknown system call '%s'", names[i]);
            return -1;
        }
        program[length++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)number, 0, 1);
        program[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)error & SECCOMP_RET_DATA));
    }
    program[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog filter = {.len = (unsigned short)length, .filter = program};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(message, message_size, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
        snprintf(message, message_size, "prctl(PR_SET_SECCOMP): %s", strerror(errno));
        return -1;
    }
    return 0;
#endif
}
