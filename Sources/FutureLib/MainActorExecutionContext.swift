import Dispatch

/// The main actor as the place where continuations run: `on: .mainActor`.
///
/// Continuations and combinators given `on: .mainActor` take `@MainActor` closures, so code in
/// a `@MainActor` type reads and writes its state directly, in Swift 6 language mode, with no
/// `MainActor.assumeIsolated` and no `@unchecked`:
///
/// ```swift
/// @MainActor final class ProfileModel {
///     var text = ""
///     func show(_ name: Future<String>) {
///         name.onSuccess(on: .mainActor) { self.text = $0 }
///         let total: Future<Int> = name.map(on: .mainActor) { self.text.count + $0.count }
///         _ = total
///     }
/// }
/// ```
///
/// ### Why a type of its own
/// It does not conform to ``ExecutionContext`` on purpose. If it did, the generic
/// `on: some ExecutionContext` overloads, whose closures are `@Sendable` and nonisolated, would
/// win overload resolution (isolation is checked only after it), and the closures above would
/// fail to compile with "main actor-isolated property … from a Sendable closure". A distinct
/// type selects the overloads whose closures are `@MainActor`.
///
/// ### Semantics
/// - Each continuation runs exactly once, on the main actor (the main queue), always
///   asynchronously, also when the future is already complete and the caller is on the main actor.
/// - Continuations on `.mainActor` run in registration order.
/// - Tokens behave as on every other context: a token cancelled first removes the continuation
///   at once; `onFailure` and `onComplete` then get `CancellationError`, on the main actor.
/// - The main queue must be serviced: an app's run loop, `dispatchMain()`, or an `async` `main`
///   (Swift Testing's runner is one).
public struct MainActorExecutionContext: Sendable {
    /// The main actor.
    ///
    /// ```swift
    /// future.onSuccess(on: .mainActor) { value in print("on the main actor: \(value)") }
    /// ```
    public static var mainActor: MainActorExecutionContext {
        MainActorExecutionContext()
    }

    /// The queue behind the main actor, which also serves ``Future/value()``'s deadlock check.
    var queue: DispatchQueue { .main }
}
