// URLSession requests as futures whose token cancels the `URLSessionTask`. This module is the
// only one that imports Foundation; `Cancellation` and `FutureLib` stay free of it.
public import Foundation
public import FutureLib

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// `(Data, URLResponse)` and `(URL, URLResponse)` are `Sendable` (Future's requirement) because
// Foundation declares `URLResponse` `Sendable` on Apple platforms and in swift-corelibs-foundation
// (FoundationNetworking) alike; nothing here needs an unchecked conformance.

extension URLSession {
    /// Loads `request` and completes with the body and the response; cancelling the token
    /// cancels the `URLSessionTask`.
    ///
    /// ```swift
    /// let deadline = CancellationRequest(cancelAfter: .seconds(2))
    /// let page = URLSession.shared.data(for: URLRequest(url: url), cancellationToken: deadline.token)
    /// let (data, response) = try await page.value()
    /// ```
    ///
    /// The task starts at once (no need to `resume()` it). A status code such as 404 is not an
    /// error: check `(response as? HTTPURLResponse)?.statusCode`.
    ///
    /// ### Cancellation
    /// - A token that is already cancelled fails the future with `CancellationError` and starts
    ///   no task: nothing is sent.
    /// - Cancelled while the task runs (before the body is complete), the future fails with
    ///   `CancellationError` at once, on the cancelling thread, and the task is cancelled, which
    ///   closes its connection.
    /// - Cancelled after the task completed, nothing happens: the result stays.
    /// - The handler registered on the token is released when the task completes, so a
    ///   long-lived token does not collect one per request.
    ///
    /// A task cancelled by something other than the token (e.g. `invalidateAndCancel()`) fails
    /// the future with Foundation's `URLError(.cancelled)`, as it reported it.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - cancellationToken: Cancels the task and fails the future with `CancellationError`.
    ///     There is no default: without a token, use Foundation's `data(for:)`.
    /// - Returns: A future of the body and the response. It fails with `CancellationError` when
    ///   the token was cancelled first, or with the task's error (a `URLError`).
    public func data(
        for request: URLRequest,
        cancellationToken: CancellationToken
    ) -> Future<(Data, URLResponse)> {
        future(cancellationToken: cancellationToken) { resolve in
            dataTask(with: request) { data, response, error in
                _ = resolve(Self.result(data ?? Data(), response, error))
            }
        }
    }

    /// Loads `url` with a GET request and completes with the body and the response; cancelling
    /// the token cancels the `URLSessionTask`.
    ///
    /// ```swift
    /// let (data, _) = try await URLSession.shared.data(from: url, cancellationToken: token).value()
    /// ```
    ///
    /// The same as ``data(for:cancellationToken:)`` with `URLRequest(url:)`.
    ///
    /// - Parameters:
    ///   - url: The URL to load.
    ///   - cancellationToken: Cancels the task and fails the future with `CancellationError`.
    /// - Returns: A future of the body and the response. It fails with `CancellationError` when
    ///   the token was cancelled first, or with the task's error (a `URLError`).
    public func data(from url: URL, cancellationToken: CancellationToken) -> Future<(Data, URLResponse)> {
        data(for: URLRequest(url: url), cancellationToken: cancellationToken)
    }

    /// Downloads `request` to a file and completes with its location and the response;
    /// cancelling the token cancels the `URLSessionDownloadTask`.
    ///
    /// ```swift
    /// let download = session.download(for: URLRequest(url: url), cancellationToken: token)
    /// let (file, _) = try await download.value()
    /// defer { try? FileManager.default.removeItem(at: file) }
    /// ```
    ///
    /// The file is moved out of Foundation's temporary location (which Foundation deletes) to a
    /// new file in `FileManager.default.temporaryDirectory`; it belongs to the caller, who moves
    /// or deletes it. When the future was cancelled first, the file is deleted: nobody can see it.
    ///
    /// ### Cancellation
    /// As for ``data(for:cancellationToken:)``: an already cancelled token
    /// starts nothing; a token cancelled before the download completes fails the future with
    /// `CancellationError` at once and cancels the task; after completion it does nothing.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - cancellationToken: Cancels the task and fails the future with `CancellationError`.
    /// - Returns: A future of the downloaded file's location and the response. It fails with
    ///   `CancellationError` when the token was cancelled first, with the task's error (a
    ///   `URLError`), or with the error of moving the file.
    public func download(
        for request: URLRequest,
        cancellationToken: CancellationToken
    ) -> Future<(URL, URLResponse)> {
        future(cancellationToken: cancellationToken) { resolve in
            downloadTask(with: request) { location, response, error in
                // Foundation deletes `location` when this closure returns: move it first.
                let downloaded = Self.result(location, response, error).flatMap { location, response in
                    Result { (try Self.moveToOwnedFile(location), response) }
                }
                if !resolve(downloaded), case .success(let (file, _)) = downloaded {
                    try? FileManager.default.removeItem(at: file)  // cancelled first: nobody owns it
                }
            }
        }
    }

    /// What a task's completion handler reported, as a `Result`.
    private static func result<Value>(
        _ value: Value?,
        _ response: URLResponse?,
        _ error: (any Error)?
    ) -> Result<(Value, URLResponse), any Error> {
        if let error { return .failure(error) }
        guard let value, let response else { return .failure(URLError(.badServerResponse)) }
        return .success((value, response))
    }

    /// Moves a downloaded file to a new file of its own in the temporary directory.
    private static func moveToOwnedFile(_ location: URL) throws -> URL {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("FutureLib-\(UUID().uuidString).download")
        try FileManager.default.moveItem(at: location, to: file)
        return file
    }

    /// Starts the task `makeTask` returns unless `cancellationToken` is already cancelled, and
    /// links the token to it: cancelling fails the future with `CancellationError` and cancels
    /// the task; completing releases that handler.
    ///
    /// Not `Future(cancellationToken:method:)`: the download needs to know whether its result
    /// was taken (`tryResolve`) to delete a file that nobody will see.
    private func future<Value: Sendable>(
        cancellationToken: CancellationToken,
        makeTask: (_ resolve: @escaping @Sendable (Result<Value, any Error>) -> Bool) -> URLSessionTask
    ) -> Future<Value> {
        // FutureLib's callback adapter: the token fails the future at once and then cancels the task.
        Future(
            cancellationToken: cancellationToken,
            adapting: { resolve, token in
                let task = makeTask(resolve)
                token.onCancel { task.cancel() }  // released with the link when the future completes first
                if !token.isCancellationRequested {  // cancelled in between: never start the task
                    task.resume()
                }
            }
        )
    }
}
