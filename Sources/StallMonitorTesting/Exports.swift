// `StallBudget`, `StallBudgetScope` and the monitor's types come with `import StallMonitorTesting`.
@_exported import StallBudgetCore
@_exported import StallMonitor
