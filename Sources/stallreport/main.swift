// Placeholder entry point replaced by the CLI implementation.
