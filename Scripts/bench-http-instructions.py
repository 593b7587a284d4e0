#!/usr/bin/env python3
"""Instructions per request of the cost servers, counted by callgrind: what `make bench-http` measures as a rate
and a CPU time, with their noise, counted the same in every run (Documentation/Performance.md, "Server costs under
wrk").

    python3 Scripts/bench-http-instructions.py [--requests N] [--connections C] [--functions K] SIDE...

A SIDE is PRODUCT:MODE, e.g. VaporCostServer:plain VaporCostServer:token (release builds in
Integrations/.build/release, or BENCH_HTTP_BINARIES). Each server runs alone under `valgrind --tool=callgrind`;
after a warm-up its counters are zeroed, N keep-alive requests are sent over C connections, one at a time on each,
and the counters are dumped: their total over N is the side's instructions per request (every thread of the
server; the kernel's work is not counted). With `--functions K`, the K functions whose own instructions per request
differ most between the first side and each other side are listed.

The Swift runtime's generic-metadata cache is a hash map whose keys hold heap addresses, so how long its probes are
changes from one launch of a server to the next (by up to 5,000 instructions per request between two launches of
one Hummingbird server here). Each side's count is printed with and without those probes, and the sides are
compared without them.
"""

import argparse
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# `make bench-http`'s script, for its check that a server answers (its name is not a module name).
_spec = importlib.util.spec_from_file_location("bench_http", os.path.join(ROOT, "Scripts", "bench-http.py"))
bench_http = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_http)
RELEASE = os.environ.get("BENCH_HTTP_BINARIES", os.path.join(ROOT, "Integrations", ".build", "release"))
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
THREAD_ENTRY = re.compile(r"^(clone|start_thread)|ThreadOpsPosix|setupThread|NIOThreadC")
# The Swift runtime's generic-metadata cache: the probes of its hash map, whose length depends on where the cache's
# entries landed in this process (heap addresses are part of the keys), so that two launches of one server differ by
# up to a few thousand instructions per request here and nowhere else. Reported apart.
METADATA_PROBES = re.compile(
    r"ConcurrentReadableHashMap<swift::HashMapElementWrapper<swift::GenericCacheEntry>.*find|MetadataCacheKey::operator=="
)


def send(port: int, count: int, failures: list) -> None:
    """`count` keep-alive requests on one connection, each answered before the next is sent."""
    try:
        with socket.create_connection(("127.0.0.1", port)) as s:
            for _ in range(count):
                s.sendall(REQUEST)
                data = b""
                while True:
                    head, separator, rest = data.partition(b"\r\n\r\n")
                    if separator:
                        length = re.search(rb"(?i)content-length:\s*(\d+)", head)
                        if length and len(rest) >= int(length.group(1)):
                            break
                    chunk = s.recv(4096)
                    if not chunk:
                        raise OSError("the server closed the connection")
                    data += chunk
                if not data.startswith(b"HTTP/1.1 200"):
                    raise OSError(f"unexpected answer {data[:40]!r}")
    except OSError as error:
        failures.append(error)


def load(port: int, requests: int, connections: int) -> None:
    failures = []
    threads = [threading.Thread(target=send, args=(port, requests // connections, failures))
               for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        sys.exit(f"bench-http-instructions: {failures[0]}")


def total(path: str) -> int:
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    sys.exit(f"bench-http-instructions: no total in {path}")


def functions(path: str) -> dict:
    """Each function's own instructions in a dump (callgrind_annotate's list, without a threshold)."""
    output = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100", path], capture_output=True, text=True,
                            check=True).stdout
    counts = defaultdict(int)
    for line in output.splitlines():
        match = re.match(r"^\s*([\d,]+)(?:\s+\([\d. ]+%\))?\s+(\S.*?)(?:\s+\[.*\])?$", line)
        if not match or ":" not in match.group(2):
            continue
        name = match.group(2).split(":", 1)[1]
        # The threads' entry functions show most of the run as their own (callgrind dumped while they ran): skipped.
        if not THREAD_ENTRY.search(name):
            counts[name] += int(match.group(1).replace(",", ""))
    return counts


def stripped(product: str, folder: str) -> str:
    """A copy of the server without its DWARF, which valgrind 3.19 cannot read all of; its symbols stay."""
    binary = os.path.join(folder, product)
    if not os.path.exists(binary):
        shutil.copy2(os.path.join(RELEASE, product), binary)
        subprocess.run(["strip", "--strip-debug", binary], check=True)
    return binary


def measure(side: str, port: int, options, folder: str) -> tuple:
    product, _, mode = side.partition(":")
    out = os.path.join(folder, f"{product}-{mode}.out")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", stripped(product, folder), mode,
               str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 300
        while not bench_http.answers(port):
            if process.poll() is not None or time.time() > end:
                sys.exit(f"bench-http-instructions: {side} did not start under valgrind")
            time.sleep(0.5)
        load(port, options.warm_up, options.connections)
        subprocess.run(["callgrind_control", "--zero", str(process.pid)], check=True, capture_output=True)
        load(port, options.requests, options.connections)
        before = set(os.listdir(folder))
        subprocess.run(["callgrind_control", "--dump", str(process.pid)], check=True, capture_output=True)
        dumps = sorted(set(os.listdir(folder)) - before)
        if not dumps:
            sys.exit(f"bench-http-instructions: {side} wrote no dump")
        path = os.path.join(folder, dumps[-1])
        probes = sum(count for name, count in functions(path).items() if METADATA_PROBES.search(name))
        return total(path) / options.requests, probes / options.requests, path
    finally:
        process.kill()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sides", nargs="+")
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--warm-up", type=int, default=2000)
    parser.add_argument("--port", type=int, default=18200)
    parser.add_argument("--functions", type=int, default=0)
    options = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    print(f"bench-http-instructions: commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{options.requests} requests over {options.connections} connections after {options.warm_up}")
    folder = tempfile.mkdtemp(prefix="bench-http-instructions-")
    results = []
    for index, side in enumerate(options.sides):
        per_request, probes, path = measure(side, options.port + index, options, folder)
        results.append((side, per_request - probes, path))
        print(f"  {side:36} {per_request:10,.0f} instructions per request: {probes:7,.0f} in the metadata cache's "
              f"probes, {per_request - probes:10,.0f} without them", flush=True)
    first_side, first, first_path = results[0]
    for side, per_request, path in results[1:]:
        print(f"  {side} - {first_side}, without the probes: {per_request - first:+,.0f} ({per_request / first:.3f}x)")
        if options.functions:
            base, other = functions(first_path), functions(path)
            differences = sorted(((other.get(name, 0) - base.get(name, 0)) / options.requests, name)
                                 for name in set(base) | set(other))
            differences.sort(key=lambda item: -abs(item[0]))
            for difference, name in differences[:options.functions]:
                print(f"      {difference:+9,.1f}  {name[:150]}")
    print(f"  dumps in {folder}")


if __name__ == "__main__":
    main()
