/// The observer side of cancellation: a cheap value that work checks and subscribes to.
///
/// Take a token as a parameter (conventionally `cancellationToken: CancellationToken = .none`),
/// check it between steps, or register a handler that stops the work. A token cannot cancel
/// anything itself; only its ``CancellationRequest`` can. This is .NET's `CancellationToken`.
///
/// ```swift
/// func checksum(of chunks: [[UInt8]], cancellationToken: CancellationToken = .none) throws -> UInt32 {
///     var sum: UInt32 = 0
///     for chunk in chunks {
///         try cancellationToken.checkCancellation()
///         for byte in chunk { sum = sum &* 31 &+ UInt32(byte) }
///     }
///     return sum
/// }
/// ```
///
/// Two tokens are equal when they observe the same request.
public struct CancellationToken: Sendable, Hashable {
    let core: CancellationCore?

    init(core: CancellationCore?) {
        self.core = core
    }

    /// A token that can never be cancelled: the default for optional cancellation.
    ///
    /// ```swift
    /// let token = CancellationToken.none
    /// #expect(token.canBeCancelled == false)
    /// token.onCancel { fatalError("never runs") }  // stores nothing
    /// ```
    public static var none: CancellationToken {
        CancellationToken(core: nil)
    }

    /// A token that is already cancelled.
    ///
    /// ```swift
    /// #expect(throws: CancellationError.self) { try CancellationToken.cancelled.checkCancellation() }
    /// ```
    public static var cancelled: CancellationToken {
        CancellationToken(core: .alreadyCancelled)
    }

    /// Whether cancellation has been requested.
    ///
    /// ```swift
    /// while !token.isCancellationRequested { step() }
    /// ```
    ///
    /// Once `true`, it stays `true`. It turns `true` before the handlers run, so a handler that
    /// reads it sees `true`. Reading it takes no lock: poll it as often as you like.
    public var isCancellationRequested: Bool {
        core?.isCancellationRequested ?? false
    }

    /// Why cancellation was requested: nil until it is, then the reason of the cancellation that won.
    ///
    /// ``CancellationRequest/cancel()`` gives `CancellationError()`, a timer
    /// ``DeadlineExceededError``, ``CancellationRequest/cancel(reason:)`` its reason; a linked
    /// request takes the reason of its source that was cancelled first (for
    /// ``CancellationRequest/init(linkedToAll:)``, the last). A server handler answers from it:
    ///
    /// ```swift
    /// struct ClientDisconnected: Error {}
    ///
    /// func status(after error: any Error, cancellationToken: CancellationToken) -> Int {
    ///     guard error is CancellationError else { return 500 }
    ///     switch cancellationToken.cancellationReason {
    ///     case is ClientDisconnected: return 499
    ///     case is DeadlineExceededError: return 504
    ///     default: return 503  // shutting down
    ///     }
    /// }
    /// ```
    ///
    /// It never changes once set, and every reader sees the same reason. Work that the token
    /// cancels still throws `CancellationError` (``checkCancellation()``, futures, streams): the
    /// reason is read here. Reading it takes the request's lock.
    public var cancellationReason: (any Error)? {
        core?.cancellationReason
    }

    /// Whether this token is, or may still become, cancelled.
    ///
    /// `false` for ``none`` and for a token whose request can no longer be cancelled (deallocated
    /// without being cancelled, with no pending timer and no live source link):
    /// such a token never fires, so work may skip registering handlers on it.
    ///
    /// ```swift
    /// let registration = token.canBeCancelled ? token.onCancel { connection.close() } : nil
    /// ```
    public var canBeCancelled: Bool {
        guard let core else { return false }
        return core.isCancellationRequested || core.canBeCancelled
    }

    /// Registers a handler that runs when cancellation is requested.
    ///
    /// ```swift
    /// let registration = token.onCancel { connection.close() }
    /// defer { registration.unregister() }  // the work finished first: the handler is not needed
    /// try await connection.send(request)
    /// ```
    ///
    /// ### Semantics
    /// - The handler runs exactly once, synchronously on the thread that calls
    ///   ``CancellationRequest/cancel()`` (or the timer's thread), newest registration first.
    /// - On a token that is already cancelled, the handler runs at once on this thread, before
    ///   `onCancel` returns. Called from inside a handler that itself ran that way (or that a
    ///   linked request's cancellation ran), it runs right after that handler returned, so that
    ///   handlers registering handlers run in constant stack at any depth.
    /// - On ``none``, or a token whose request can no longer be cancelled, nothing is
    ///   stored and nothing runs.
    /// - The handler is released as soon as it ran, was unregistered, or its request can no longer
    ///   be cancelled (for a request with a timer or links: once the request and every token and
    ///   registration of it are gone).
    ///
    /// - Parameter handler: The code to run on cancellation. Keep it short and non-blocking: it
    ///   runs on the cancelling thread, before `cancel()` returns.
    /// - Returns: A registration that can remove the handler in O(1) if the work finishes first.
    @discardableResult
    public func onCancel(_ handler: @escaping @Sendable () -> Void) -> CancellationRegistration {
        // Optional chaining, not `guard let core`: the binding copies the core, a retain and a
        // release around the call (on a shared token, two writes to the core's line; `RoundsDriver 11-2`).
        core?.register(handler) ?? .inert
    }

    /// ``onCancel(_:)`` whose handler is also called when it is released without having run: once in
    /// all, so that it can let go of what it keeps alive while the token can fire.
    ///
    /// For FutureLib's continuations, whose handler is their own box: the box holds the future it
    /// waits on while it is registered, and must let go of it when the token can no longer fire.
    /// A handler called with ``isCancellationRequested`` false was released unrun: when its request
    /// could no longer be cancelled (at once, on ``none``), outside every lock. Not for a handler
    /// that is unregistered: its owner knows.
    @usableFromInline
    package func onCancelOrRelease(_ handler: @escaping @Sendable () -> Void) -> CancellationRegistration {
        guard let core else {
            handler()
            return .inert
        }
        return core.register(handler, notifiesOnRelease: true)
    }

    /// Throws `CancellationError` when cancellation has been requested.
    ///
    /// ```swift
    /// for item in items {
    ///     try token.checkCancellation()
    ///     process(item)
    /// }
    /// ```
    ///
    /// - Throws: `CancellationError` if ``isCancellationRequested`` is `true`.
    public func checkCancellation() throws {
        if isCancellationRequested { throw CancellationError() }
    }

    /// Whether two tokens observe the same request.
    ///
    /// All ``none`` tokens are equal, and so are all ``cancelled`` tokens.
    ///
    /// ```swift
    /// #expect(request.token == request.token)
    /// #expect(request.token != CancellationRequest().token)
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A token.
    ///   - rhs: Another token.
    /// - Returns: `true` when both observe the same request.
    public static func == (lhs: CancellationToken, rhs: CancellationToken) -> Bool {
        lhs.core === rhs.core
    }

    /// Hashes the identity that equality compares.
    ///
    /// ```swift
    /// var seen: Set<CancellationToken> = [request.token]
    /// #expect(seen.contains(request.token))
    /// ```
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(core.map(ObjectIdentifier.init))
    }
}
