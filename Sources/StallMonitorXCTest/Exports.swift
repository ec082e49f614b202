// `StallBudget`, `StallBudgetScope` and the monitor's types come with `import StallMonitorXCTest`.
@_exported import StallBudgetCore
@_exported import StallMonitor
