// `make demo-services`: one role of the demo per process. Scripts/demo-services.sh starts a gRPC leaf, a gRPC
// middle that calls it and an HTTP edge (Hummingbird) that calls the middle, then the client, which runs three
// scenarios against the edge; each process writes its events as timeline lines (Timeline.swift), which the script
// merges into one timeline.
//
//   DemoServices leaf <port-file> [work-ms]
//   DemoServices middle <port-file> <leaf-port>
//   DemoServices edge <port-file> <middle-port>
//   DemoServices client <edge-port> <edge-pid> <leaf-log>

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The demo was started with arguments it does not know.
struct Usage: Error, CustomStringConvertible {
    var description: String {
        "usage: DemoServices leaf <port-file> [work-ms] | middle <port-file> <leaf-port> | edge <port-file> <middle-port> | client <edge-port> <edge-pid> <leaf-log>"
    }
}

/// Writes `port` to `path`, through a temporary file, so that a reader never sees half of it.
func writePort(_ port: Int, to path: String) throws {
    let temporary = path + ".tmp"
    guard let file = fopen(temporary, "w") else { throw Usage() }
    fputs("\(port)\n", file)
    fclose(file)
    rename(temporary, path)
}

let arguments = Array(CommandLine.arguments.dropFirst())
/// The argument at `index`, as an integer.
func integer(_ index: Int) throws -> Int {
    guard index < arguments.count, let value = Int(arguments[index]) else { throw Usage() }
    return value
}

// Stops a process that the script could not stop: no role runs longer than two minutes.
alarm(120)
do {
    guard arguments.count >= 2 else { throw Usage() }
    let timeline = Timeline(role: arguments[0])
    switch arguments[0] {
    case "leaf":
        let work = arguments.count > 2 ? try integer(2) : 2_000
        try await runLeaf(timeline, portFile: arguments[1], work: .milliseconds(work))
    case "middle":
        try await runMiddle(timeline, portFile: arguments[1], leafPort: try integer(2))
    case "edge":
        try await runEdge(timeline, portFile: arguments[1], middlePort: try integer(2))
    case "client":
        guard arguments.count > 3 else { throw Usage() }
        try await runClient(timeline, edgePort: try integer(1), edgePID: Int32(try integer(2)), leafLog: arguments[3])
    default:
        throw Usage()
    }
} catch {
    var message = "DemoServices \(arguments.first ?? ""): \(error)\n"
    message.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    exit(1)
}
