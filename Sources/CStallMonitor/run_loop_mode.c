// The current mode of a CFRunLoop, as an identity, for the run-loop probe's entry callback.
//
// CFRunLoopCopyCurrentMode returns the mode's name retained; called from Swift, the bridged string
// is retained and released again by the Swift runtime (each a CFRetain/CFRelease through the
// unknown-object entry points), which made up a third of what the probe's callbacks cost a pass.
// Here it is copied and released once, in C. A run loop never removes a mode, so the name stays
// alive, at the same address, for the loop's whole life: the pointer is the mode's identity.
#include "CStallMonitor.h"

extern const void *CFRunLoopCopyCurrentMode(const void *run_loop);
extern void CFRelease(const void *object);

const void *CStallMonitor_run_loop_mode(const void *run_loop) {
    const void *mode = CFRunLoopCopyCurrentMode(run_loop);
    if (mode != NULL) CFRelease(mode);
    return mode;
}
