// The report model (StallReport, SessionRecord, …) comes with `import StallMonitor`: hosts see
// the reports they are handed without linking StallReportKit's readers and exports.
@_exported import StallReportModel
