// libFuzzer target for the deadline header parsers of `FutureLibHTTPDeadline` (`make fuzz-deadline-header`).
//
// Compiled with the parser files alone (they need only the standard library):
//
//     swiftc -sanitize=fuzzer,address -parse-as-library -O \
//         Integrations/Sources/FutureLibHTTPDeadline/{TimeoutDigits,MillisecondsTimeout,GRPCTimeout,DeadlineHeader}.swift \
//         Integrations/Fuzz/DeadlineHeader/main.swift -o .build/fuzz-deadline-header
//
// Each input is read as header values by both grammars. Besides "never traps" (libFuzzer reports a crash, and
// AddressSanitizer a bad access), it checks the rules the parsers document, and traps when one is broken, so that
// libFuzzer saves the input.

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0 (traps on a broken rule).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeadlineHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    // Milliseconds (Connect-Timeout-Ms): within [0, maximum]; what it parsed formats back to the same value.
    if let timeout = MillisecondsTimeout.parse(text) {
        check(timeout >= .zero && timeout <= MillisecondsTimeout.maximum, "milliseconds out of range: \(text)")
        check(MillisecondsTimeout.parse(MillisecondsTimeout.format(timeout)) == timeout, "milliseconds round trip")
    }
    // gRPC: within [0, 99,999,999 H]; formatting what it parsed never says more than there is, in at most 7 digits.
    if let timeout = GRPCTimeout.parse(text) {
        check(timeout >= .zero && timeout <= .seconds(GRPCTimeout.maximumValue * 3_600), "grpc out of range: \(text)")
        let formatted = GRPCTimeout.format(timeout)
        check(GRPCTimeout.parse(formatted).map { $0 <= timeout } == true, "grpc format says more: \(formatted)")
        check(formatted.utf8.count <= 8, "grpc format longer than grpc-swift-2 reads: \(formatted)")
    }
    // A list (commas, several field lines): the smallest valid element, or nil when none is valid.
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    for header in [DeadlineHeader.connectTimeout, .grpcTimeout] {
        let elements = lines.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let valid = elements.compactMap { element -> Duration? in
            header.format == .milliseconds ? MillisecondsTimeout.parse(element) : GRPCTimeout.parse(element)
        }
        check(header.timeout(in: lines) == valid.min(), "list: not the smallest valid element")
    }
    // Formatting any duration the bytes spell never traps and parses back to at most that duration.
    if size >= 16 {
        let raw = UnsafeRawPointer(data).loadUnaligned(as: (Int64, Int64).self)
        let duration = Duration(secondsComponent: raw.0, attosecondsComponent: raw.1 % 1_000_000_000_000_000_000)
        let milliseconds = MillisecondsTimeout.parse(MillisecondsTimeout.format(duration))
        check(milliseconds.map { $0 <= max(duration, .zero) || $0 == MillisecondsTimeout.maximum } == true, "ms")
        let grpc = GRPCTimeout.parse(GRPCTimeout.format(duration))
        check(
            grpc.map { $0 <= max(duration, .zero) || duration > .seconds(GRPCTimeout.maximumValue * 3_600) } == true,
            "grpc"
        )
    }
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
