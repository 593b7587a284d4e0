@_exported public import FutureLibHTTPDeadline
// `import FutureLibHummingbird` also gives `CancellationToken`, `CancellationRequest` and the graceful-shutdown
// reason: every request's token is one of them.
@_exported public import FutureLibServiceLifecycle
