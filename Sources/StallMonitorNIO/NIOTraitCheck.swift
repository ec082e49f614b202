// This product is built only with the package trait "NIO" (on by default), which brings in
// SwiftNIO. An app that depends on StallMonitor with `traits: []` to keep SwiftNIO out of its
// graph cannot use this product.
#if !NIO
#error(
    "StallMonitorNIO needs StallMonitor's package trait \"NIO\", which this app's dependency turned off: list \"NIO\" in its traits, e.g. .package(url: \"https://github.com/…/StallMonitor\", branch: \"main\", traits: [\"NIO\"])"
)
#endif
