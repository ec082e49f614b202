// ThreadSanitizer annotations for locks it cannot see; no-ops in builds without TSan.
#include "CStallMonitor.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CSTALLMONITOR_TSAN 1
void __tsan_acquire(void *address);
void __tsan_release(void *address);
#endif
#endif

void CStallMonitor_tsan_acquire(const void *address) {
#ifdef CSTALLMONITOR_TSAN
    __tsan_acquire((void *)address);
#else
    (void)address;
#endif
}

void CStallMonitor_tsan_release(const void *address) {
#ifdef CSTALLMONITOR_TSAN
    __tsan_release((void *)address);
#else
    (void)address;
#endif
}
