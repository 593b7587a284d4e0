public import FutureLib

// The one way the tests enumerate the future combinators: a case per combinator (and per way a
// future continues into another: a continuation completing a promise, `resolve(with:)`), each
// applied by `apply` and its form variants. A test takes `FutureCombinator.allCases` or one of the
// named subsets below as its arguments, never a name in a string. Public API only, so that the
// attack suite (a client of the products) uses it too.

/// A combinator, applied to a `Future<Int>` as one stage of a chain.
///
/// On success a stage adds ``increment`` to the value; a stage whose closure handles an error
/// gives `-1`. `touch` (when given) is called from the stage's closure, so a test sees whether,
/// where and how often the closure ran and when its captures are released; a stage with no closure
/// of its own (`hop`, `zip`, the many-future combinators, `resolveWith`) is followed by a `map`
/// that calls it, so that it too holds something that only its result waits on.
public enum FutureCombinator: String, CaseIterable, Sendable, Codable {
    // One future into another (Future+Map, Future+Recover, Future+Ensure, Future+Zip).
    case map, flatMap, filter, transform, transformResult, mapError, andThen, recover, recoverWith, ensure, hop, zip
    // Several futures, this one among them (Sequence+Futures, Future+Race).
    case fold, sequence, results, traverse, firstCompleted, firstSuccess, race
    // Continuations that complete the next promise (Future+Callbacks), and a promise resolved with the future.
    case onComplete, onSuccess, resolveWith

    // MARK: - Subsets

    /// The stages of the depth attacks: every way to continue one future into the next.
    public static let chainStages: [Self] = [
        .map, .flatMap, .filter, .transform, .transformResult, .mapError, .andThen, .recover, .recoverWith, .ensure,
        .hop, .zip, .onComplete, .resolveWith,
    ]

    /// The combinators whose closure (or, for those with none, a following `map`) the lifetime tests follow.
    public static let capturing: [Self] = [
        .map, .flatMap, .filter, .transform, .transformResult, .mapError, .andThen, .recover, .recoverWith, .fold,
        .zip, .sequence, .results, .traverse, .firstCompleted, .firstSuccess, .race,
    ]

    /// The combinators over several inputs.
    public static let gathering: [Self] = [
        .zip, .sequence, .fold, .results, .traverse, .firstCompleted, .firstSuccess, .race,
    ]

    /// The combinators that derive a future by calling one closure, once, for the value or the error:
    /// a cancelled token fails them without calling it.
    public static let deriving: [Self] = [
        .map, .flatMap, .filter, .transform, .mapError, .andThen, .recover, .recoverWith,
    ]

    /// Those of ``deriving`` whose closure may throw.
    public static let throwing: [Self] = [.map, .flatMap, .filter, .transform, .recover, .recoverWith]

    /// Those with async-closure forms (a continuation's has no result: ``applyAsync(to:on:cancellationToken:_:)``
    /// gives `nil` for it).
    public static let asyncForms: [Self] = [.map, .flatMap, .recover, .recoverWith, .onSuccess, .onComplete]

    // MARK: - Properties

    /// How much the stage adds to the value when it succeeds.
    public var increment: Int {
        switch self {
        case .map, .flatMap, .transform, .transformResult: 1
        default: 0
        }
    }

    /// Whether the closure runs for a failure (and passes a value on untouched).
    public var handlesErrors: Bool {
        switch self {
        case .mapError, .recover, .recoverWith: true
        default: false
        }
    }

    // MARK: - On a context

    /// The stage on `future`, its closure on `context`.
    public func apply(
        to future: Future<Int>,
        on context: some ExecutionContext = .synchronous,
        cancellationToken token: CancellationToken = .none,
        _ touch: (@Sendable () -> Void)? = nil
    ) -> Future<Int> {
        let mark = touch ?? {}
        let stage: Future<Int> =
            switch self {
            case .map:
                future.map(on: context, cancellationToken: token) {
                    mark()
                    return $0 + 1
                }
            case .flatMap:
                future.flatMap(on: context, cancellationToken: token) {
                    mark()
                    return Future(value: $0 + 1)
                }
            case .filter:
                future.filter(on: context, cancellationToken: token) { _ in
                    mark()
                    return true
                }
            case .transform:
                future.transform(
                    on: context,
                    cancellationToken: token,
                    success: {
                        mark()
                        return $0 + 1
                    },
                    failure: {
                        mark()
                        return $0
                    }
                )
            case .transformResult:
                future.transform(on: context, cancellationToken: token) {
                    mark()
                    return $0.map { $0 + 1 }
                }
            case .mapError:
                future.mapError(on: context, cancellationToken: token) {
                    mark()
                    return $0
                }
            case .andThen: future.andThen(on: context, cancellationToken: token) { _ in mark() }
            case .recover:
                future.recover(on: context, cancellationToken: token) { _ in
                    mark()
                    return -1
                }
            case .recoverWith:
                future.recoverWith(on: context, cancellationToken: token) { _ in
                    mark()
                    return Future(value: -1)
                }
            case .ensure: future.ensure(on: context, cancellationToken: token) { mark() }
            case .fold:
                [future].fold(on: context, cancellationToken: token, initial: 0) {
                    mark()
                    return $0 + $1
                }
            case .onComplete:
                {
                    let next = Promise<Int>()
                    future.onComplete(on: context, cancellationToken: token) {
                        mark()
                        next.resolve($0)
                    }
                    return next.future
                }()
            case .onSuccess:
                {
                    let next = Promise<Int>()
                    future.onSuccess(on: context, cancellationToken: token) {
                        mark()
                        next.fulfill($0)
                    }
                    future.onFailure(on: context, cancellationToken: token, policy: .allErrors) { next.reject($0) }
                    return next.future
                }()
            case .hop, .zip, .sequence, .results, .traverse, .firstCompleted, .firstSuccess, .race, .resolveWith:
                gathered(future, on: context, cancellationToken: token)
            }
        guard let touch, Self.closureless.contains(self) else { return stage }
        return stage.map(on: .synchronous) {
            touch()
            return $0
        }
    }

    /// The stages with no closure of their own.
    private static let closureless: Set<Self> = [
        .hop, .zip, .sequence, .results, .traverse, .firstCompleted, .firstSuccess, .race, .resolveWith,
    ]

    /// A stage with no closure of its own. `firstCompleted` and `race` also wait on an input that
    /// never completes; `firstSuccess` waits on `future` twice, so that its failure fails the result.
    private func gathered(
        _ future: Future<Int>,
        on context: some ExecutionContext,
        cancellationToken token: CancellationToken
    ) -> Future<Int> {
        switch self {
        case .hop: future.hop(to: context, cancellationToken: token)
        case .zip: future.zip(Future(value: 0), on: context, cancellationToken: token).map(on: .synchronous) { $0.0 }
        case .sequence:
            [future, Future(value: 0)].sequence(cancellationToken: token).map(on: .synchronous) { $0[0] }
        case .results:
            [future, Future(value: 0)].results(cancellationToken: token).map(on: .synchronous) { try $0[0].get() }
        case .traverse:
            [0, 1].traverse(on: context, cancellationToken: token) { $0 == 0 ? future : Future(value: 0) }
                .map(on: .synchronous) { $0[0] }
        case .firstCompleted: [future, Future(on: DroppingContext()) { 0 }].firstCompleted(cancellationToken: token)
        case .firstSuccess: [future, future].firstSuccess(cancellationToken: token)
        case .race:
            Future.race(
                on: context,
                cancellationToken: token,
                [{ @Sendable _ in future }, { @Sendable _ in Future(on: DroppingContext()) { 0 } }]
            )
        default:
            {
                let next = Promise<Int>()
                next.resolve(with: future)
                return next.future
            }()
        }
    }

    // MARK: - Other forms

    /// The stage with a closure that throws `error`, or `nil` for a combinator whose closure cannot throw.
    public func applyThrowing(_ error: any Error, to future: Future<Int>) -> Future<Int>? {
        switch self {
        case .map: future.map { _ in throw error }
        case .flatMap: future.flatMap { _ -> Future<Int> in throw error }
        case .filter: future.filter { _ in throw error }
        case .transform: future.transform(success: { _ -> Int in throw error }, failure: { $0 })
        case .recover: future.recover { _ in throw error }
        case .recoverWith: future.recoverWith { _ -> Future<Int> in throw error }
        default: nil
        }
    }

    /// The stage's `.mainActor` form, its closure calling `touch` on the main actor, or `nil` for
    /// a combinator without one.
    public func apply(
        to future: Future<Int>,
        on mainActor: MainActorExecutionContext,
        cancellationToken token: CancellationToken = .none,
        _ touch: @escaping @MainActor () -> Void
    ) -> Future<Int>? {
        switch self {
        case .map:
            future.map(on: mainActor, cancellationToken: token) {
                touch()
                return $0 + 1
            }
        case .flatMap:
            future.flatMap(on: mainActor, cancellationToken: token) {
                touch()
                return Future(value: $0 + 1)
            }
        case .filter:
            future.filter(on: mainActor, cancellationToken: token) { _ in
                touch()
                return true
            }
        case .transform:
            future.transform(
                on: mainActor,
                cancellationToken: token,
                success: {
                    touch()
                    return $0 + 1
                },
                failure: {
                    touch()
                    return $0
                }
            )
        case .transformResult:
            future.transform(on: mainActor, cancellationToken: token) {
                touch()
                return $0.map { $0 + 1 }
            }
        case .mapError:
            future.mapError(on: mainActor, cancellationToken: token) {
                touch()
                return $0
            }
        case .andThen: future.andThen(on: mainActor, cancellationToken: token) { _ in touch() }
        case .recover:
            future.recover(on: mainActor, cancellationToken: token) { _ in
                touch()
                return -1
            }
        case .recoverWith:
            future.recoverWith(on: mainActor, cancellationToken: token) { _ in
                touch()
                return Future(value: -1)
            }
        case .ensure: future.ensure(on: mainActor, cancellationToken: token) { touch() }
        default: nil
        }
    }

    /// The stage's async form on `context`, its closure awaiting `body`, or `nil` for a combinator
    /// without one or a continuation (which has no result).
    public func applyAsync(
        to future: Future<Int>,
        on context: some ExecutionContext = .default,
        cancellationToken token: CancellationToken = .none,
        _ body: @escaping @Sendable () async -> Void
    ) -> Future<Int>? {
        switch self {
        case .map:
            return future.map(on: context, cancellationToken: token) { value in
                await body()
                return value + 1
            }
        case .flatMap:
            return future.flatMap(on: context, cancellationToken: token) { value in
                await body()
                return Future(value: value + 1)
            }
        case .recover:
            return future.recover(on: context, cancellationToken: token) { _ in
                await body()
                return -1
            }
        case .recoverWith:
            return future.recoverWith(on: context, cancellationToken: token) { _ in
                await body()
                return Future(value: -1)
            }
        case .onSuccess:
            future.onSuccess(on: context, cancellationToken: token) { _ in await body() }
            return nil
        case .onComplete:
            future.onComplete(on: context, cancellationToken: token) { _ in await body() }
            return nil
        default:
            return nil
        }
    }
}

/// An execution context that drops every job: a future whose work was given to it never
/// completes (as a wrapped callback API that dropped its callback), and nothing but its
/// continuations and its holders can reach it.
public struct DroppingContext: ExecutionContext {
    /// A context with nothing to configure.
    public init() {}

    /// Drops `work`.
    public func execute(_ work: @escaping @Sendable () -> Void) {}
}
