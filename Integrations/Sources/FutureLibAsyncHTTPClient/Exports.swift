@_exported public import FutureLibHTTPDeadline
// `import FutureLibAsyncHTTPClient` also gives the event-loop bridges (`.eventLoop(_:)`, `EventLoopFuture` ⇄
// `Future`), which code around an `HTTPClient` usually needs too.
@_exported public import FutureLibNIO
