import Foundation

/// ISO 8601 UTC timestamps with milliseconds (`2026-11-22T02:18:15.123Z`) in plain arithmetic:
/// Foundation's format styles go through `TimeZone`, which on Linux loads ICU and touches about
/// 2 MiB of its data in every process that writes a report or a session record (the monitor's
/// host included) and is slow when reading thousands of reports.
enum ISO8601UTC {
    /// Years written and read here; Foundation uses the Julian calendar before the Gregorian
    /// reform, so earlier dates are left to it.
    static let years: ClosedRange<Int64> = 1600...9999

    /// `milliseconds` since 1970 as text; nil outside ``years``.
    static func format(milliseconds: Int64) -> String? {
        let (days, dayMs) = milliseconds.floorDivided(by: 86_400_000)
        let (year, month, day) = civil(days: days)
        guard years.contains(year) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, at offset: Int, digits: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, at: 0, digits: 4)
        bytes[4] = UInt8(ascii: "-")
        put(month, at: 5, digits: 2)
        bytes[7] = UInt8(ascii: "-")
        put(day, at: 8, digits: 2)
        bytes[10] = UInt8(ascii: "T")
        put(dayMs / 3_600_000, at: 11, digits: 2)
        bytes[13] = UInt8(ascii: ":")
        put(dayMs / 60_000 % 60, at: 14, digits: 2)
        bytes[16] = UInt8(ascii: ":")
        put(dayMs / 1_000 % 60, at: 17, digits: 2)
        bytes[19] = UInt8(ascii: ".")
        put(dayMs % 1_000, at: 20, digits: 3)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; nil for anything else (other offsets, other
    /// layouts: the caller falls back to Foundation's parser).
    static func parse(_ text: String) -> Date? {
        var utf8 = Array(text.utf8)
        guard utf8.count >= 20, utf8.last == UInt8(ascii: "Z") else { return nil }
        utf8.removeLast()
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let byte = utf8[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"), utf8[10] == UInt8(ascii: "T"),
            utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":"),
            let year = number(0..<4), years.contains(year), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        if utf8.count > 19 {
            guard utf8[19] == UInt8(ascii: "."), utf8.count > 20, utf8.count <= 29, let digits = number(20..<utf8.count)
            else { return nil }
            fraction = Double(digits) / pow(10, Double(utf8.count - 20))
        }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Year, month, day of `days` since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    private static func civil(days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

private extension Int64 {
    /// Quotient rounded down and the non-negative remainder.
    func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let quotient = self / divisor
        let remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
