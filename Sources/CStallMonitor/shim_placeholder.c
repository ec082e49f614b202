// CStallMonitor shim: see CStallMonitor.h
