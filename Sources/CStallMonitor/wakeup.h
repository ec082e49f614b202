// Shared between the wake-up slots and their producers (not part of the shim's interface).
#ifndef CSTALLMONITOR_WAKEUP_H
#define CSTALLMONITOR_WAKEUP_H

#include <stdint.h>

enum { CStallMonitor_wakeup_slot_count = 64 };

/// Posts every slot in `noted` whose watchdog is parked (after the producer set its flags).
void CStallMonitor_wakeup_post_parked(uint64_t noted);
/// Clears a slot's pool flag and watch bit (a slot taken or given back).
void CStallMonitor_pool_slot_reset(int slot);
/// Clears a slot's main-queue flag and watch bit.
void CStallMonitor_main_slot_reset(int slot);

#endif
