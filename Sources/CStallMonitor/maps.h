// Reading /proc/self/maps line by line (internal to the C shim).
#ifndef CSTALLMONITOR_MAPS_H
#define CSTALLMONITOR_MAPS_H

#include <stdint.h>
#include <stdio.h>

/// Reads the next mapping of `maps` (/proc/self/maps opened for reading): its start, end and
/// permissions (e.g. "rw-p"). The rest of a line longer than the buffer is skipped, never taken
/// for a line of its own. Returns 1 for a mapping, 0 at the end of the file.
int CStallMonitor_next_mapping(FILE *maps, uintptr_t *start, uintptr_t *end, char perms[8]);

/// Offers `take` each mapping of /proc/self/maps in turn (start, end, permissions) until
/// `capacity` were taken: `take` stores one it wants at index `count` of its arrays and answers 1,
/// or answers 0 to pass it over. Returns how many were taken, or -1 when the file cannot be read.
int CStallMonitor_take_mappings(int capacity, int (*take)(uintptr_t start, uintptr_t end, const char perms[8], int count, void *context),
                                void *context);

#endif
