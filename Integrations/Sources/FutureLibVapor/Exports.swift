// `import FutureLibVapor` also gives `CancellationToken`, `CancellationRequest`, the graceful-shutdown reason (every
// request's token is one of them) and the deadline headers the middleware reads.
@_exported public import FutureLibHTTPDeadline
@_exported public import FutureLibServiceLifecycle
