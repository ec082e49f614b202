// StallMonitor's own code that runs on a monitored thread (internal to the C shim).
//
// The interposers (epoll_wait, dispatch_async, dispatch_async_f), the enqueue hook, the wake-up
// producers they call and the sampling signal handler are placed in one section of their own,
// whatever image the shim is linked into. The linker brackets that section with
// __start_/__stop_ symbols, so the monitor knows the exact address range of its own code on a
// monitored thread's stack and marks frames in it as the monitor's: they never count in a
// report's identity (a debug build keeps an interposer's frame, a release build may tail-call
// through it).
#ifndef CSTALLMONITOR_OWN_CODE_H
#define CSTALLMONITOR_OWN_CODE_H

/// Places a function in the section of the monitor's own code on monitored threads.
#define CSTALLMONITOR_OWN_CODE __attribute__((section("cstallmonitor_own_code")))

#endif
