// `import FutureLibNIO` (and so `import FutureLibAsyncHTTPClient`) also gives `Future`, `CancellationToken` and the
// rest of FutureLib: every signature here is written with them.
@_exported public import FutureLib
