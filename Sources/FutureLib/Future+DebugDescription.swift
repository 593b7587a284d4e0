import FutureLibConcurrencyHelpers

// Debug descriptions of futures, promises and streams: what `po future` or
// `print(String(reflecting: future))` shows. Each reads the state once, under its lock: for
// debugging and logs, not for hot paths.

extension Future: CustomDebugStringConvertible {
    /// The future's state: its result, or while pending where its promise was created and how
    /// many continuations wait.
    ///
    /// ```swift
    /// let promise = Promise<Int>()
    /// promise.future.onSuccess { print($0) }
    /// print(String(reflecting: promise.future))
    /// // Future<Int>(pending; promise created at MyApp/Loader.swift:12; 1 continuation waiting)
    /// ```
    ///
    /// A pending future that no ``Promise`` completes (a combinator's, or one completed by its
    /// work) says so instead of a creation site.
    public var debugDescription: String {
        "Future<\(Value.self)>(\(stateDescription))"
    }

    /// `pending; promise created at …; 2 continuations waiting`, `succeeded: 42`, `failed: …`.
    var stateDescription: String {
        let (result, site, waiting) = withState { state in
            (state.result, state.pendingSite(fileCount: siteFileCount), state.waitingCount)
        }
        switch result {
        case .success(let value)?:
            return "succeeded: \(String(reflecting: value))"
        case .failure(let error)?:
            return "failed: \(String(reflecting: error))"
        case nil:
            let origin =
                if let site, site.fileAddress != 0 {
                    "promise created at \(site)"
                } else {
                    "completed by its work or a combinator"
                }
            return "pending; \(origin); \(waiting) continuation\(waiting == 1 ? "" : "s") waiting"
        }
    }
}

extension Promise: CustomDebugStringConvertible {
    /// The state of the promise's future: resolved with what, or pending, with where the promise
    /// was created and how many continuations wait.
    ///
    /// ```swift
    /// let promise = Promise<String>()
    /// print(String(reflecting: promise))
    /// // Promise<String>(pending; promise created at MyApp/Loader.swift:3; 0 continuations waiting)
    /// ```
    public var debugDescription: String {
        "Promise<\(Value.self)>(\(future.stateDescription))"
    }
}

extension FutureStream: CustomDebugStringConvertible {
    /// The stream's state: open or finished, its capacity, how many results it keeps now and how
    /// many subscribers it holds.
    ///
    /// ```swift
    /// let readings = StreamPromise<Double>(capacity: 10)
    /// readings.fulfill(21.5)
    /// print(String(reflecting: readings.stream))
    /// // FutureStream<Double>(open; capacity 10; keeps 1 result; 0 subscribers)
    /// ```
    public var debugDescription: String {
        let (finished, kept, subscribers) = state.withLock { state in
            (state.isFinished, state.recent.storage.count, state.subscribers.count)
        }
        let capacityText = capacity == Int.max ? "unbounded" : "capacity \(capacity)"
        return "FutureStream<\(Value.self)>(\(finished ? "finished" : "open"); \(capacityText); "
            + "keeps \(kept) result\(kept == 1 ? "" : "s"); \(subscribers) subscriber\(subscribers == 1 ? "" : "s"))"
    }
}
