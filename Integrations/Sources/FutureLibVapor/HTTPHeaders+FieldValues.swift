import NIOHTTP1

extension HTTPHeaders {
    /// The values of the fields named `name` (ASCII letters compared without case, every other byte as it is), in
    /// their order; empty when there is none: `["connect-timeout-ms": "250"]` has `["250"]` for
    /// `Connect-Timeout-Ms`.
    ///
    /// Each field whose name has another length costs one comparison of lengths: most of a request's fields, which
    /// `contains(name:)` compares byte by byte (`make bench-http-instructions`, the middleware's header check).
    func values(ofField name: String) -> [String] {
        let length = name.utf8.count
        var values: [String] = []
        for (field, value) in self where field.utf8.count == length {
            if field.utf8.elementsEqual(name.utf8, by: { $0.asciiLowercased == $1.asciiLowercased }) {
                values.append(value)
            }
        }
        return values
    }
}

extension UInt8 {
    /// The byte with an ASCII capital letter made small; every other byte as it is.
    fileprivate var asciiLowercased: UInt8 {
        (0x41...0x5A).contains(self) ? self | 0x20 : self
    }
}
