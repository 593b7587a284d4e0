import FutureLib
import FutureTestSupport
import TestSupport

/// What a `.synchronous` subscriber of a stream saw, written as marbles: a value as itself, an
/// error as `✕` and its name (`✕2` for `TestFailure(code: 2)`, `✕c` for `CancellationError`,
/// `✕t` for `FutureError.timeout`), the end as `|`.
final class Tape<Value: Sendable>: Sendable {
    private let marks = Locked<[String]>([])

    init(_ stream: FutureStream<Value>, cancellationToken: CancellationToken = .none) {
        stream.onComplete(on: .synchronous, cancellationToken: cancellationToken) { [marks] result in
            let mark: String
            switch result {
            case .success(let value): mark = "\(value)"
            case .failure(let error): mark = Tape.mark(error)
            }
            marks.withLock { $0.append(mark) }
        }
        stream.onFinish(on: .synchronous) { [marks] in marks.withLock { $0.append("|") } }
    }

    static func mark(_ error: any Error) -> String {
        switch error {
        case let failure as TestFailure: "✕\(failure.code)"
        case is CancellationError: "✕c"
        case FutureError.timeout: "✕t"
        default: "✕?"
        }
    }

    /// The marks so far, space-separated: `"1 2 ✕3 |"`.
    var text: String { marks.value.joined(separator: " ") }
}

/// The outcome of a future as a mark: its value, or its error as a `Tape` writes it.
func mark<T>(_ future: Future<T>) async -> String {
    switch await settled(future) {
    case .success(let value): "\(value)"
    case .failure(let error): Tape<Int>.mark(error)
    }
}
