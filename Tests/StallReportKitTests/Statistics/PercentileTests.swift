import Testing

@testable import StallReportKit

@Suite("Nearest-rank percentiles")
struct PercentileTests {
    @Test("p95 of 1…20 is the 19th value, p50 the 10th, p99 and p100 the 20th, p0 the 1st")
    func twentyValues() {
        let values = (1...20).map(Double.init)
        #expect(Percentile.nearestRank(95, sorted: values) == 19)
        #expect(Percentile.nearestRank(50, sorted: values) == 10)
        #expect(Percentile.nearestRank(99, sorted: values) == 20)
        #expect(Percentile.nearestRank(100, sorted: values) == 20)
        #expect(Percentile.nearestRank(0, sorted: values) == 1)
    }

    @Test("p99 of 1…100 is 99 and p95 is 95: whole percentiles are exact, no floating-point off-by-one")
    func hundredValues() {
        let values = (1...100).map(Double.init)
        #expect(Percentile.nearestRank(99, sorted: values) == 99)
        #expect(Percentile.nearestRank(95, sorted: values) == 95)
        #expect(Percentile.nearestRank(1, sorted: values) == 1)
    }

    @Test("Always an observed value, never an interpolation")
    func noInterpolation() {
        #expect(Percentile.nearestRank(50, sorted: [1, 2, 3, 4]) == 2)
        #expect(Percentile.nearestRank(50, sorted: [10, 20]) == 10)
        #expect(Percentile.nearestRank(51, sorted: [10, 20]) == 20)
        #expect(Percentile.nearestRank(95, sorted: [300, 400, 500, 600, 700, 800, 900, 1_000, 1_100, 1_200]) == 1_200)
    }

    @Test("One value is every percentile; no values have none; input order does not matter")
    func edges() {
        #expect(Percentile.nearestRank(95, sorted: [7]) == 7)
        #expect(Percentile.nearestRank(5, sorted: [7]) == 7)
        #expect(Percentile.nearestRank(50, sorted: []) == nil)
        #expect(Percentile.nearestRank(95, of: [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]) == 10)
        #expect(Percentile.nearestRank(30, of: [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]) == 3)
    }
}
