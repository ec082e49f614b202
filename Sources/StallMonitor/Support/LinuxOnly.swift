// StallMonitor is Linux only. Elsewhere its C shim stops the build first (CStallMonitor.h); this
// says the same for the Swift module, so that no platform sees a partial API: there is no stub.
#if !os(Linux)
#error(
    "StallMonitor supports Linux only (x86_64 tested, aarch64 built from the same code): it samples threads with a real-time signal and reads /proc. Other platforms get nothing: no monitor, no stub API."
)
#endif
