// The example on README.md's first screen, compiled but never run: it would reach the network.
// The same calls run against a loopback server in FutureLibFoundationTests.
import Foundation
import FutureLib
import FutureLibFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

enum ReadmeExamples {
    static func downloadReport() async {
        let deadline = CancellationRequest(cancelAfter: .seconds(2))  // a timer: cancels in 2 s
        let request = URLRequest(url: URL(string: "https://example.com/large-report")!)

        let size = URLSession.shared.data(for: request, cancellationToken: deadline.token)
            .map { data, _ in data.count }  // runs only if the body arrived in time
        do {
            print("downloaded \(try await size.value()) bytes")
        } catch is CancellationError {
            print("no answer within 2 s: the URLSessionTask was cancelled")
        } catch {
            print("failed: \(error)")
        }
    }
}
