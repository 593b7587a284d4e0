// `import FutureLibServiceLifecycle` also gives `CancellationToken` and `CancellationRequest`: the tokens its
// functions hand out.
@_exported public import Cancellation
