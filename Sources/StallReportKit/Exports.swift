// The report model is part of StallReportKit's API: `import StallReportKit` keeps bringing it.
@_exported import StallReportModel
