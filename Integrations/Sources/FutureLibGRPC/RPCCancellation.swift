/// The token of the RPC this task is handling, and the scope that stops calls made inside it from inheriting it.
///
/// ``ServerCancellationInterceptor`` sets it, as a task-local value, for the handler and what it runs in its task,
/// child tasks and `Task { }`; ``ClientCancellationInterceptor`` and ``GRPCCore/GRPCClient``'s `cancellationToken:`
/// calls read it, so that an outgoing call inherits the inbound RPC's deadline and cancellation.
///
/// ```swift
/// func lookUp(_ id: String) async throws -> String {
///     // Cancelled with the inbound RPC, and given what is left of its deadline.
///     if RPCCancellation.token.isCancellationRequested { return "" }
///     return id
/// }
/// ```
///
/// ### Why a task-local value
/// It reaches code that cannot take a parameter: code generated for gRPC services, and interceptors, which see
/// only the request. Code that runs in no task of the handler does not see it: a `Future { }` (FutureLib starts
/// its task like `Task.detached`) and the continuations futures run on execution contexts. Hand them ``token``,
/// whose `timeRemaining` is the inbound deadline.
public enum RPCCancellation: Sendable {
    /// The token of the RPC being handled; its deadline is the `grpc-timeout` the client sent.
    @TaskLocal static var current: CancellationToken?

    /// The token of the RPC this task handles (under ``ServerCancellationInterceptor``): cancelled when the client
    /// cancels the RPC (``RPCCancelledByClientError``), its deadline passes (`DeadlineExceededError`) or the server
    /// shuts down gracefully (`GracefulShutdownError`). `.none` outside a handler and inside ``detached(_:)``.
    ///
    /// ```swift
    /// func report() async throws -> String {
    ///     try RPCCancellation.token.checkCancellation()
    ///     return "done"
    /// }
    /// ```
    public static var token: CancellationToken {
        current ?? .none
    }

    /// The time left until the inbound RPC's deadline (never negative; `.zero` once the token is cancelled): the
    /// token's `timeRemaining`. `nil` outside a handler, inside ``detached(_:)``, or when the RPC has no deadline.
    ///
    /// ```swift
    /// if let left = RPCCancellation.timeRemaining, left < .milliseconds(50) {
    ///     print("answering from the cache")
    /// }
    /// ```
    public static var timeRemaining: Duration? {
        current?.timeRemaining
    }

    /// Runs `body` as if no RPC were being handled: calls made inside it inherit neither the deadline nor the
    /// cancellation of the inbound RPC, so work that must outlive its caller (an audit write, a cache fill) does.
    ///
    /// ```swift
    /// func handle() async throws {
    ///     await RPCCancellation.detached {
    ///         // runs to its end even if the inbound RPC is cancelled
    ///     }
    /// }
    /// ```
    ///
    /// With ``ServerCancellationInterceptor``'s `cancelsHandlerTask: true`, the handler's task itself is cancelled
    /// with the RPC; start a task for work that must outlive the handler, as below, or that task's cancellation
    /// reaches the detached calls:
    ///
    /// ```swift
    /// func audit() {
    ///     Task {
    ///         await RPCCancellation.detached {
    ///             // a new task, no inbound token: outlives the RPC
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func detached<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $current.withValue(nil, operation: body)
    }
}
