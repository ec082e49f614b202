// What run_loop_mode.c and its discovery share (internal to the C shim).
#ifndef CSTALLMONITOR_RUN_LOOP_MODE_H
#define CSTALLMONITOR_RUN_LOOP_MODE_H

#include <stddef.h>

/// The run loop's current mode's name, read with the loop's lock (not retained for the caller).
const void *CStallMonitor_run_loop_mode_locked(const void *run_loop);

/// The discovery's result: byte offsets of the run loop's current-mode field and of the mode's
/// name field, or zeros when the experiment found no single pair. Called once.
void CStallMonitor_run_loop_mode_offsets_found(size_t current_mode, size_t mode_name);

#endif
