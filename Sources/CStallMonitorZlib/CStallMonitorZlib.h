// zlib for StallReportKit's gzip writer (the pprof export). Needs zlib1g-dev (Debian/Ubuntu).
#ifndef CSTALLMONITOR_ZLIB_H
#define CSTALLMONITOR_ZLIB_H

#include <zlib.h>

/// deflateInit2 is a macro (it passes ZLIB_VERSION and sizeof(z_stream)), which Swift cannot call.
static inline int CStallMonitorZlib_deflateInit2(z_streamp stream, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, method, windowBits, memLevel, strategy);
}

#endif
