import Foundation

extension StallReport {
    /// The same report with control characters in every string escaped visibly
    /// (``PrintableText``): what text output such as `stallreport show` prints.
    package var printable: StallReport {
        let escape = PrintableText.escape
        var copy = self
        copy.id = escape(id)
        copy.fingerprint = escape(fingerprint)
        copy.status = StallStatus(rawValue: escape(status.rawValue))
        copy.classification = StallClassification(rawValue: escape(classification.rawValue))
        copy.scene = scene.map(escape)
        copy.loop.kind = escape(loop.kind)
        copy.loop.threadName = escape(loop.threadName)
        copy.loop.mode = loop.mode.map(escape)
        copy.loop.armingProblems = loop.armingProblems?.map(escape)
        copy.process.executableName = escape(process.executableName)
        copy.process.executablePath = escape(process.executablePath)
        copy.process.appVersion = process.appVersion.map(escape)
        copy.process.hostName = escape(process.hostName)
        copy.process.os = escape(process.os)
        copy.process.osVersion = escape(process.osVersion)
        copy.process.architecture = escape(process.architecture)
        copy.sampling.unwinder = escape(sampling.unwinder)
        copy.sampling.unwinderNote = sampling.unwinderNote.map(escape)
        copy.sampling.asyncCallersNote = sampling.asyncCallersNote.map(escape)
        copy.sampling.skipped = Dictionary(
            sampling.skipped.map { (escape($0.key), $0.value) },
            uniquingKeysWith: { a, b in a.addingReportingOverflow(b).overflow ? .max : a + b })
        // Only samples whose strings change are written: a report of a million samples is not
        // copied when (as always but for hostile input) nothing needs escaping.
        for index in samples.indices {
            let sample = samples[index]
            var escaped = sample
            escaped.threadState = escape(sample.threadState)
            escaped.syscall = sample.syscall.map(escape)
            escaped.note = sample.note.map(escape)
            escaped.unwinder = sample.unwinder.map(escape)
            if escaped.threadState != sample.threadState || escaped.syscall != sample.syscall
                || escaped.note != sample.note
                || escaped.unwinder != sample.unwinder
            {
                copy.samples[index] = escaped
            }
        }
        copy.frames = frames.map { frame in
            var frame = frame
            frame.address = escape(frame.address)
            frame.symbol = frame.symbol.map(escape)
            frame.file = frame.file.map(escape)
            return frame
        }
        copy.images = images.map { image in
            var image = image
            image.path = escape(image.path)
            image.buildID = image.buildID.map(escape)
            return image
        }
        copy.symbolication.symbolicator = escape(symbolication.symbolicator)
        copy.symbolication.note = symbolication.note.map(escape)
        copy.tags = tags.map {
            Dictionary($0.map { (escape($0.key), escape($0.value)) }, uniquingKeysWith: { a, _ in a })
        }
        return copy
    }
}
