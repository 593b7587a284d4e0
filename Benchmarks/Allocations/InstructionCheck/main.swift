// The instruction gate of CI (`make bench-instructions`, Scripts/bench-instructions.py): runs one hot path of
// ../HotPaths `count` times and nothing else, for `valgrind --tool=callgrind`. The script runs every path at n and 2n
// operations and takes (I(2n) − I(n)) / n, so start-up, first-use costs and teardown cancel out, and compares it with
// Benchmarks/Thresholds/instructions.json.
//
//     InstructionCheck <key> <count>    run one hot path `count` times (what valgrind runs)
//     InstructionCheck --list           print each hot path's key, n and what one operation is, tab-separated
//
// No async code: valgrind 3.19 dies with an internal SIGSEGV as soon as Swift async code runs, so this file has no
// `await` (top-level code with one would make the whole of it async). No thread either: with threads the count
// changes from run to run (the order valgrind runs them in, a pool thread's spin), and the cost of a hand-off is its
// wake-up, which instructions do not show.

import HotPaths

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--list" {
    for path in hotPaths { print("\(path.key)\t\(path.operations)\t\(path.description)") }
    exit(0)
}
guard arguments.count == 3, let count = Int(arguments[2]), count >= 0,
    let path = hotPaths.first(where: { $0.key == arguments[1] })
else {
    print("usage: InstructionCheck <key> <count> | --list; keys: \(hotPaths.map(\.key).joined(separator: ", "))")
    exit(2)
}
path.run(count)
