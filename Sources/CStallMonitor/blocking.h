// Blocking-call detection, internal to the C shim: the calls watched, their wrappers and the
// table that binds each name to its wrapper and to the function it forwards to.
#ifndef CSTALLMONITOR_BLOCKING_H
#define CSTALLMONITOR_BLOCKING_H

#include <stdint.h>

/// One watched call: its name in the dynamic symbol tables, the wrapper that replaces it in the
/// images' GOTs, and where the wrapper finds the function it forwards to (resolved at install).
struct cstallmonitor_blocking_hook {
    const char *name;
    void *wrapper;
    void **forward;
};

/// Every watched call, in `CStallMonitorBlockingCall` order (blocking_wrappers.c).
extern const struct cstallmonitor_blocking_hook cstallmonitor_blocking_hooks[];

/// Called first by every wrapper: 0 when the call is not to be timed (detection off, a thread that
/// may block, an allowed scope, the recorder itself), else CLOCK_MONOTONIC at entry.
uint64_t cstallmonitor_blocking_begin(void);

/// Called after the forwarded call returned when `begin` gave a time: records the call when it
/// blocked at least the threshold. `return_address` and `frame` are the wrapper's: where the
/// caller called it and the wrapper's frame pointer (its caller's frames are above it). Keeps errno.
void cstallmonitor_blocking_end(int call, uint64_t start, void *return_address, void *frame);

#endif
