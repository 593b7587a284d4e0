#!/usr/bin/env python3
"""`make bench-http`: what a request token and the AsyncHTTPClient adapter cost a server, measured from outside.

Three comparisons, each between two release-built servers on 127.0.0.1 (Integrations/Sources/*CostServer):

  proxy        Hummingbird, the route calls an upstream (a third process) with AsyncHTTPClient's own `execute`
               (A), against the server guide's route: RequestCancellationMiddleware,
               `.http1ObservingClientDisconnects()` and the call through the async
               `execute(_:timeout:cancellationToken:handleResponse:)` with the request's token (B); the plain
               application calling through that form with one long-lived token, the adapter alone (C); and the
               guide's route through the `Future` form, `execute(_:timeout:upTo:cancellationToken:)` (D)
  hummingbird  Hummingbird, `GET /` answers "ok", plain against the token route that calls nothing, with the
               middleware and with the request context's own token alone (no middleware)
  vapor        Vapor, the same
  vapor-aa, hummingbird-aa (only when asked for) the plain server against itself: what the method reads when
               nothing differs; vapor-aaaa the same with four sides
  vapor-defaults (only when asked for) Vapor plain against the token route with the middleware's defaults, alone
  vapor-parts (only when asked for) Vapor plain, on the observing server, with a middleware that only calls
               `next`, one that answers through a promise of its own, one that makes a CancellationRequest and
               checks for the deadline header, the token route on Vapor's own server, and the token route
  hummingbird-parts (only when asked for) Hummingbird plain, with the client-disconnect observer, with the
               cancellable context, with both (the context's own token), that and a middleware that only calls
               `next`, and the token route

Both servers of a comparison run side by side; `wrk` (keep-alive, one thread) loads one at a time, alternating
which goes first from round to round, each run after a warm-up of its own. Printed: each round's requests per
second, the medians and their ratio (the second side over the first), and the server's CPU time per answered request (user + system, from /proc: less
sensitive than the rate to other processes on a shared machine). Then allocations per request: each server
again, alone, with Scripts/bench-http/malloc-count.c preloaded, its heap allocations counted over one `wrk` run
(after a warm-up) and divided by the requests `wrk` saw answered. Timing figures are printed, never asserted.

    python3 Scripts/bench-http.py [--rounds 5] [--duration 6] [--warm-up 2] [--connections 32]
                                  [--only proxy,hummingbird,vapor] [--no-allocations] [--port-base 18081]
                                  [--together]

--together loads every side of a comparison at the same time, one `wrk` each, in every round: a side's rate then
depends on the CPU time it needs per request against the others', and whatever else the machine does during a round
(another build, a slower mode of the virtual machine) falls on every side alike, where taking turns lets it fall on
one. The ratios to read are then the median of the rounds' ratios.

BENCH_HTTP_NO_TRACER=1 in the environment reaches the servers: the proxies' AsyncHTTPClient clients then run with no
tracer instead of swift-distributed-tracing's default no-op one (about 11 allocations per request less on every side).

Ports: the sides listen on --port-base and the next ones, the counted server on base + 8, the upstream on base + 9
(another base lets two runs share a machine).
"""
import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# BENCH_HTTP_BINARIES: another folder with the servers (an older build, to compare before and after a change).
RELEASE = os.environ.get("BENCH_HTTP_BINARIES") or os.path.join(ROOT, "Integrations", ".build", "release")
SHIM = os.path.join(ROOT, ".build", "bench-http", "libmalloc-count.so")
PORT_BASE = 18081
UPSTREAM_PORT = PORT_BASE + 9
# Names of the sides of a comparison in the output (at most 8: the counted server listens on the port base + 8).
LETTERS = "ABCDEFGH"

COMPARISONS = {
    "proxy": (
        ("plain AHC", "HummingbirdCostServer", ["proxy-plain"]),
        ("async adapter + token", "HummingbirdCostServer", ["proxy-token"]),
        ("async adapter alone", "HummingbirdCostServer", ["proxy-adapter"]),
        ("Future adapter + token", "HummingbirdCostServer", ["proxy-future"]),
    ),
    "hummingbird": (
        ("plain", "HummingbirdCostServer", ["plain"]),
        ("token", "HummingbirdCostServer", ["token"]),
        ("context's token, no middleware", "HummingbirdCostServer", ["context-token"]),
    ),
    "vapor": (
        ("plain", "VaporCostServer", ["plain"]),
        ("token", "VaporCostServer", ["token"]),
        ("token, middleware's defaults", "VaporCostServer", ["default"]),
    ),
    # Not in the default set: the same plain server twice, to see what the method itself reads when nothing differs.
    "vapor-aa": (
        ("plain", "VaporCostServer", ["plain"]),
        ("plain again", "VaporCostServer", ["plain"]),
    ),
    # Not in the default set: plain against the middleware's defaults alone, two sides (a four-side run reads its first
    # side about 1.5 % low: `vapor-aaaa`).
    "vapor-defaults": (
        ("plain", "VaporCostServer", ["plain"]),
        ("token, middleware's defaults", "VaporCostServer", ["default"]),
    ),
    # The same with four sides, as many as `vapor` has with BENCH_HTTP_BEFORE: whether a side's place in the run
    # moves what it reads.
    "vapor-aaaa": (
        ("plain", "VaporCostServer", ["plain"]),
        ("plain 2", "VaporCostServer", ["plain"]),
        ("plain 3", "VaporCostServer", ["plain"]),
        ("plain 4", "VaporCostServer", ["plain"]),
    ),
    "hummingbird-aa": (
        ("plain", "HummingbirdCostServer", ["plain"]),
        ("plain again", "HummingbirdCostServer", ["plain"]),
    ),
    # Not in the default set: where the Vapor token route's cost goes, one part at a time.
    "vapor-parts": (
        ("plain", "VaporCostServer", ["plain"]),
        ("observer", "VaporCostServer", ["observer"]),
        ("pass", "VaporCostServer", ["pass"]),
        ("promise", "VaporCostServer", ["promise"]),
        ("request", "VaporCostServer", ["request"]),
        ("unobserved token", "VaporCostServer", ["unobserved"]),
        ("token", "VaporCostServer", ["token"]),
    ),
    # Not in the default set: where the Hummingbird token route's cost goes, one part at a time.
    "hummingbird-parts": (
        ("plain", "HummingbirdCostServer", ["plain"]),
        ("observer", "HummingbirdCostServer", ["observer"]),
        ("context", "HummingbirdCostServer", ["context"]),
        ("context's token", "HummingbirdCostServer", ["context-token"]),
        ("pass", "HummingbirdCostServer", ["pass"]),
        ("token", "HummingbirdCostServer", ["token"]),
    ),
}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def start(product: str, arguments: list, port: int, environment=None, binaries=()) -> subprocess.Popen:
    folder = binaries[0] if binaries else RELEASE
    command = [os.path.join(folder, product)] + arguments[:1] + [str(port)] + [str(UPSTREAM_PORT)]
    env = dict(os.environ, **(environment or {}))
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    end = time.time() + 120
    while not answers(port):
        if process.poll() is not None or time.time() > end:
            process.kill()
            sys.exit(f"bench-http: {' '.join(command)} did not start")
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (its threads included), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk_command(port: int, seconds: float, connections: int) -> list:
    return ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", f"http://127.0.0.1:{port}/"]


def wrk_result(output: str):
    """Requests per second and requests answered, from one `wrk` run's output."""
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", output)
    if errors:
        print(f"    wrk reported errors: {errors.group(0)}")
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    count = int(re.search(r"(\d+) requests in", output).group(1))
    return rate, count


def wrk(port: int, seconds: float, connections: int):
    """Requests per second and requests answered, of one `wrk` run."""
    output = subprocess.run(wrk_command(port, seconds, connections), capture_output=True, text=True, check=True).stdout
    return wrk_result(output)


def wrk_together(ports, seconds: float, connections: int):
    """One `wrk` run on each port at the same time: requests per second and requests answered, per port."""
    processes = [subprocess.Popen(wrk_command(port, seconds, connections), stdout=subprocess.PIPE, text=True)
                 for port in ports]
    outputs = [process.communicate()[0] for process in processes]
    if any(process.returncode != 0 for process in processes):
        sys.exit("bench-http: a wrk run failed")
    return [wrk_result(output) for output in outputs]


def throughput(name: str, sides, rounds: int, duration: float, warm_up: float, connections: int,
               together: bool = False):
    ports = [PORT_BASE + index for index in range(len(sides))]
    processes = [start(product, arguments, port, binaries=binaries)
                 for (_, product, arguments, *binaries), port in zip(sides, ports)]
    rates = [[] for _ in sides]
    cpu = [[] for _ in sides]  # the server's CPU time per answered request, in µs
    try:
        print(f"\n{name}: " + " vs ".join(f"{side[0]} ({LETTERS[index]})" for index, side in enumerate(sides))
              + f", {rounds} rounds of {duration:g} s (warm-up {warm_up:g} s), wrk -t1 -c{connections}"
              + (", all sides at once" if together else "") + f", load {load()}")
        for round in range(rounds):
            if together:
                # All sides loaded at once: whatever else the machine does in a round, every side meets it.
                wrk_together(ports, warm_up, connections)
                before = [cpu_seconds(process.pid) for process in processes]
                for side, (rate, answered) in enumerate(wrk_together(ports, duration, connections)):
                    rates[side].append(rate)
                    cpu[side].append((cpu_seconds(processes[side].pid) - before[side]) / answered * 1e6)
            else:
                # Each side goes first in turn; with two, A first in odd rounds and B first in even ones.
                for side in [(round + index) % len(sides) for index in range(len(sides))]:
                    wrk(ports[side], warm_up, connections)
                    before = cpu_seconds(processes[side].pid)
                    rate, answered = wrk(ports[side], duration, connections)
                    rates[side].append(rate)
                    cpu[side].append((cpu_seconds(processes[side].pid) - before) / answered * 1e6)
            print(f"  round {round + 1}: "
                  + "  ".join(f"{LETTERS[index]} {rates[index][-1]:9.1f}" for index in range(len(sides)))
                  + "  " + "  ".join(f"{LETTERS[index]}/A {rates[index][-1] / rates[0][-1]:.3f}"
                                    for index in range(1, len(sides)))
                  + f"  (load {load()})")
    finally:
        for process in processes:
            stop(process)
    for index, side in enumerate(cpu):
        print(f"  server CPU per request, {LETTERS[index]}: " + ", ".join(f"{value:.1f}" for value in side)
              + f" µs; median {statistics.median(side):.1f} µs"
              + (f", {LETTERS[index]}/A {statistics.median(side) / statistics.median(cpu[0]):.3f}" if index else ""))
    ratios = [statistics.median(rates[index][round] / rates[0][round] for round in range(rounds))
              for index in range(len(sides))]
    print("  median of the rounds' ratios: "
          + ", ".join(f"{LETTERS[index]}/A {ratios[index]:.3f}" for index in range(1, len(sides))))
    medians = [statistics.median(side) for side in rates]
    print("  median: " + ", ".join(f"{LETTERS[index]} {value:.1f} req/s" for index, value in enumerate(medians))
          + ", " + ", ".join(f"{LETTERS[index]}/A {medians[index] / medians[0]:.3f}" for index in range(1, len(sides))))
    return medians


def allocations(sides, duration: float, warm_up: float, connections: int):
    counts = []
    with tempfile.TemporaryDirectory() as folder:
        for label, product, arguments, *binaries in sides:
            path = os.path.join(folder, "count")
            environment = {"LD_PRELOAD": SHIM, "BENCH_HTTP_MALLOC_FILE": path}
            process = start(product, arguments, PORT_BASE + 8, environment, binaries)
            try:
                wrk(PORT_BASE + 8, warm_up, connections)
                time.sleep(0.5)
                before = read_count(process, path)
                _, answered = wrk(PORT_BASE + 8, duration, connections)
                time.sleep(0.5)
                after = read_count(process, path)
            finally:
                stop(process)
            counts.append((after - before) / answered)
            print(f"  allocations per request, {label}: {counts[-1]:.1f} ({after - before} over {answered} requests)")
    for index in range(1, len(counts)):
        print(f"  allocations per request, {LETTERS[index]} - A: {counts[index] - counts[0]:+.1f}")
    return counts


def read_count(process: subprocess.Popen, path: str) -> int:
    if os.path.exists(path):
        os.remove(path)
    process.send_signal(signal.SIGUSR1)
    end = time.time() + 5
    while time.time() < end:
        if os.path.exists(path):
            text = open(path).read()
            if text.endswith("\n"):
                return int(text)
        time.sleep(0.01)
    sys.exit("bench-http: the allocation counter did not answer (is the shim built?)")


def main() -> None:
    global PORT_BASE, UPSTREAM_PORT
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=6)
    parser.add_argument("--warm-up", type=float, default=2)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--only", default="proxy,hummingbird,vapor")
    parser.add_argument("--no-allocations", action="store_true")
    parser.add_argument("--together", action="store_true",
                        help="load all the sides of a comparison at once in each round (a wrk each), not in turn")
    parser.add_argument("--port-base", type=int, default=PORT_BASE)
    options = parser.parse_args()
    PORT_BASE, UPSTREAM_PORT = options.port_base, options.port_base + 9
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"bench-http: commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} processors, load {load()}")
    upstream = None
    names = [name for name in options.only.split(",") if name]
    # BENCH_HTTP_BEFORE: a folder with older cost servers, whose token side joins each comparison as a third side
    # (before and after a change to the adapter or a middleware, in one run).
    before = os.environ.get("BENCH_HTTP_BEFORE")
    if before:
        for name, sides in COMPARISONS.items():
            label, product, arguments = sides[1]  # the token side (for the proxy, the guide's route)
            COMPARISONS[name] = sides + ((f"{label}, before", product, arguments, before),)
    if "proxy" in names:
        upstream = start("HummingbirdCostServer", ["upstream"], UPSTREAM_PORT)
    try:
        for name in names:
            sides = COMPARISONS[name]
            throughput(name, sides, options.rounds, options.duration, options.warm_up, options.connections,
                       options.together)
            if not options.no_allocations:
                allocations(sides, max(3, options.duration / 2), options.warm_up, options.connections)
    finally:
        if upstream:
            stop(upstream)
    print(f"\nbench-http: done, load {load()}")


if __name__ == "__main__":
    main()
