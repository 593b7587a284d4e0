import Testing

/// The suites that must not overlap: the soak loads the process enough to delay a call past a deadline of the
/// propagation tests. Its members run one after the other (the other suites still run beside them).
@Suite(.serialized) struct GRPCLoopbackSuites {}
