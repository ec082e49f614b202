// This product is built only with the package trait "ServiceLifecycle" (on by default), which
// brings in swift-service-lifecycle. An app that depends on StallMonitor with `traits: []` to keep
// it out of its graph cannot use this product.
#if !ServiceLifecycle
#error(
    "StallMonitorServiceLifecycle needs StallMonitor's package trait \"ServiceLifecycle\", which this app's dependency turned off: list \"ServiceLifecycle\" in its traits, e.g. .package(url: \"https://github.com/…/StallMonitor\", branch: \"main\", traits: [\"ServiceLifecycle\"])"
)
#endif
