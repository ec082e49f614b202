// Reading /proc/self/maps line by line (internal to the C shim).
#ifndef CSTALLMONITOR_MAPS_H
#define CSTALLMONITOR_MAPS_H

#include <stdint.h>
#include <stdio.h>

/// Reads the next mapping of `maps` (/proc/self/maps opened for reading): its start, end and
/// permissions (e.g. "rw-p"). The rest of a line longer than the buffer is skipped, never taken
/// for a line of its own. Returns 1 for a mapping, 0 at the end of the file.
int CStallMonitor_next_mapping(FILE *maps, uintptr_t *start, uintptr_t *end, char perms[8]);

#endif
