#!/usr/bin/env python3
"""Where a gRPC call's allocations go: names the call stacks that GRPCCancellationBenchmark wrote with
GRPC_MALLOC_TRACE (Integrations/Sources/GRPCMallocCounter) and counts allocations per call site, per call, and,
with --against, the difference from another trace (one kind of call against another).

    cd Integrations
    GRPC_BENCH_ONLY=0 GRPC_MALLOC_TRACE=/tmp/plain.txt .build-release/release/GRPCCancellationBenchmark 0 0 0 500
    GRPC_BENCH_ONLY=1 GRPC_MALLOC_TRACE=/tmp/server.txt .build-release/release/GRPCCancellationBenchmark 0 0 0 500
    python3 ../Scripts/malloc-trace-report.py /tmp/server.txt 500 --against /tmp/plain.txt 500

A site is the first --depth N (3) frames below the allocator and the Swift runtime; --full N shows N raw frames
instead. Frames are named by llvm-symbolizer and swift-demangle from the toolchain in /opt/swift (SWIFT_BIN).
valgrind's DHAT, the obvious tool, stops with an internal error on this process (Swift concurrency's threads).
"""
import bisect, collections, os, subprocess, sys

BIN = os.environ.get("SWIFT_BIN", "/opt/swift/usr/bin")

def load(trace):
    maps = []
    for line in open(trace + ".maps"):
        parts = line.split()
        if len(parts) < 6: continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        maps.append((start, end, int(parts[2], 16), parts[5]))
    maps.sort()
    bases = {}
    for start, end, offset, path in maps:
        if path not in bases or start < bases[path]: bases[path] = start
    stacks = collections.Counter(tuple(int(a, 16) for a in line.split()) for line in open(trace))
    return maps, bases, stacks

def symbolize(maps, bases, addresses):
    starts = [m[0] for m in maps]
    per_object = collections.defaultdict(list)
    located = {}
    for address in addresses:
        i = bisect.bisect_right(starts, address) - 1
        if i < 0 or address >= maps[i][1]: located[address] = None; continue
        path = maps[i][3]
        located[address] = (path, address - bases[path])
        per_object[path].append(address)
    names = {}
    for path, addrs in per_object.items():
        query = "\n".join(hex(located[a][1] - 1) for a in addrs)
        out = subprocess.run([os.path.join(BIN, "llvm-symbolizer"), "--obj=" + path, "--no-demangle", "--functions=linkage", "--no-inlines"],
                             input=query, capture_output=True, text=True).stdout.split("\n\n")
        for a, block in zip(addrs, out):
            names[a] = block.strip().split("\n")[0]
    mangled = sorted(set(names.values()))
    dem = subprocess.run([os.path.join(BIN, "swift-demangle"), "--simplified"], input="\n".join(mangled), capture_output=True, text=True).stdout.split("\n")
    table = dict(zip(mangled, dem))
    return {a: table.get(names.get(a), "?")[:110] for a in addresses}

SKIP = ("malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "count_one", "trace_one",
        "swift_slowAlloc", "swift_allocObject", "swift::", "swift_task_alloc", "swift_task_create", "swift_", "_swift_",
        "operator new", "__libc", "?")

FULL = None
def key(stack, names, depth):
    frames = [names[a] for a in stack]
    if FULL is not None:
        return " <- ".join(f[:50] for f in frames[1:1+FULL])
    useful = [f for f in frames if not f.startswith(SKIP)]
    return " <- ".join(useful[:depth]) if useful else " <- ".join(frames[:3])

def main():
    args = sys.argv[1:]
    depth = 3
    if "--depth" in args:
        i = args.index("--depth"); depth = int(args[i + 1]); del args[i:i + 2]
    global FULL
    if "--full" in args:
        i = args.index("--full"); FULL = int(args[i + 1]); del args[i:i + 2]
    against = None
    if "--against" in args:
        i = args.index("--against"); against = (args[i + 1], float(args[i + 2])); del args[i:i + 3]
    trace, calls = args[0], float(args[1]) if len(args) > 1 else 1.0
    def counted(trace, calls):
        maps, bases, stacks = load(trace)
        names = symbolize(maps, bases, {a for s in stacks for a in s})
        result = collections.Counter()
        for stack, n in stacks.items(): result[key(stack, names, depth)] += n / calls
        return result
    mine = counted(trace, calls)
    other = counted(*against) if against else collections.Counter()
    rows = [(mine[k] - other[k], mine[k], other[k], k) for k in set(mine) | set(other)]
    rows.sort(key=lambda r: -abs(r[0]))
    print(f"total {sum(mine.values()):.1f} per call" + (f", other {sum(other.values()):.1f}" if against else ""))
    for d, m, o, k in rows:
        if abs(d) < 0.05: continue
        print(f"{d:+7.2f} ({m:6.2f} {o:6.2f})  {k}")

main()
