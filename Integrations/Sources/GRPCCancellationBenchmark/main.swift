// `make bench-grpc`: what FutureLibGRPC costs a unary call over grpc-swift-2's HTTP/2 transport on loopback, and
// how long a client's cancel takes to reach the handler of the third server down a chain. Both sides run in this
// process; the plain and the FutureLib calls alternate, round by round, so that both see the same machine.
// Results: Documentation/Performance.md, "gRPC: a token per call".
//
//   GRPCCancellationBenchmark [rounds] [calls-per-round] [cancellations] [counted-calls]
//
// 0 rounds skips the timing, 0 cancellations the cancellation latency (to count allocations alone).
import GRPCMallocCounter

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.count > 0 ? arguments[0] : 20
let callsPerRound = arguments.count > 1 ? arguments[1] : 500
let cancellations = arguments.count > 2 ? arguments[2] : 300
let countedCalls = arguments.count > 3 ? arguments[3] : 2_000

print("GRPCCancellationBenchmark: \(rounds) rounds of \(callsPerRound) calls each way; \(cancellations) cancellations")
if malloc_counter_is_available() == 0 { print("(allocations are not counted on this platform)") }
try await measureCallOverhead(rounds: rounds, callsPerRound: callsPerRound, countedCalls: countedCalls)
if cancellations > 0 { try await measureCancellationLatency(cancellations: cancellations) }
