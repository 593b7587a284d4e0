import NIOHTTP1

extension HTTPHeaders {
    /// The values of the fields named `name` (ASCII letters compared without case, as NIO's `contains(name:)`
    /// and `subscript(name:)` do), in their order; empty when there is none.
    ///
    /// ```swift
    /// let headers: HTTPHeaders = ["Host": "example.com", "connect-timeout-ms": "250"]
    /// assert(headers.values(ofField: "Connect-Timeout-Ms") == ["250"])
    /// ```
    ///
    /// Each field whose name has another length costs one comparison of lengths: most of a request's fields, which
    /// `contains(name:)` compares byte by byte (`make bench-http-instructions`, the middleware's header check).
    func values(ofField name: String) -> [String] {
        let length = name.utf8.count
        var values: [String] = []
        for (field, value) in self where field.utf8.count == length {
            if field.utf8.elementsEqual(name.utf8, by: { $0 & 0xdf == $1 & 0xdf }) { values.append(value) }
        }
        return values
    }
}
