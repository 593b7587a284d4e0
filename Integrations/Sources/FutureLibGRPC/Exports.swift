// `import FutureLibGRPC` also gives `CancellationToken`, `CancellationRequest` and `GracefulShutdownError`: the
// tokens its interceptors hand out and the reasons they give.
@_exported public import FutureLibServiceLifecycle
