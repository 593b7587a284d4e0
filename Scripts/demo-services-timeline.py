#!/usr/bin/env python3
"""Merges the logs of `make demo-services`' processes into one timeline, and checks it.

Each line of a log is `<nanoseconds>\t<role>\t<label>\t<kind>\t<text>` (Integrations/Sources/DemoServices/
Timeline.swift), on the machine's uptime clock, which every process shares. A scenario's lines are printed in time
order, each with how long after the scenario's mark (the client gave up, sent the request, signalled the edge) it
happened. Then the checks: every hop's token fired, with the reason the scenario means, and the client got the
answer it means. Exit status 1 when one fails.

`--wait <middle.log> <leaf.log>` (the script runs it after the edge exited, before it stops the middle and the leaf):
waits until each RPC the middle or the leaf started has its lines, so that stopping the processes cuts none off. In
(c) the edge answers and exits as soon as its own token fired; the middle and the leaf hear of it later, over
loopback, and on a loaded machine their lines can come tens of milliseconds after the edge exited.
"""
import os
import sys
import time

SCENARIOS = {
    "a": "(a) the client gives up",
    "b": "(b) a 300 ms deadline set at the edge (the leaf's own work: 2 s)",
    "c": "(c) the edge shuts down gracefully with requests in flight",
}
# What each scenario means, request by request: the reason of each hop's token, and the client's outcome.
EXPECTED = {
    "a": {"edge": "ClientDisconnectedError", "middle": "RPCCancelledByClientError",
          "leaf": "RPCCancelledByClientError", "client": "gave up"},
    "b": {"edge": "DeadlineExceededError", "middle": "DeadlineExceededError",
          "leaf": "DeadlineExceededError", "client": "answer: 504"},
    "c": {"edge": "GracefulShutdownError", "middle": "RPCCancelledByClientError",
          "leaf": "RPCCancelledByClientError", "client": "answer: 503"},
}


# How long `--wait` waits, in seconds of a quiet machine (load-scaled: `slowdown`).
WAIT_SECONDS = 10
# The most a load stretches that wait: a line that never comes still fails, at most ten times later.
MAXIMUM_SLOWDOWN = 10.0


def read(paths):
    """The lines of the logs at `paths`, in time order: (nanoseconds, role, label, kind, text)."""
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                fields = line.rstrip("\n").split("\t", 4)
                if len(fields) == 5:
                    lines.append((int(fields[0]), fields[1], fields[2], fields[3], fields[4]))
    lines.sort()
    return lines


def missing(lines):
    """What the middle and the leaf have yet to say about the RPCs they started: `token fired` at each hop that
    started it and, at the leaf, how its work ended. An RPC whose leaf finished its work has nothing more to come
    (the checks then say what is wrong)."""
    started = {(role, label) for _, role, label, kind, text in lines
               if kind == "event" and label[:1] in SCENARIOS and text.startswith("RPC started")}
    said = {}
    for _, role, label, _, text in lines:
        said.setdefault((role, label), []).append(text)
    wanted = []
    for role, label in sorted(started):
        leaf = said.get(("leaf", label), [])
        if any(text.startswith("finished its") for text in leaf):
            continue
        texts = said.get((role, label), [])
        if not any(text.startswith("token fired: ") for text in texts):
            wanted.append(f"{label}: {role} 'token fired'")
        if role == "leaf" and not any(text.startswith("stopped after") for text in texts):
            wanted.append(f"{label}: leaf 'stopped after'")
    return wanted


def slowdown():
    """The one-minute load average per processor, at least 1, at most `MAXIMUM_SLOWDOWN`."""
    try:
        load = os.getloadavg()[0] / max(1, os.cpu_count() or 1)
    except OSError:
        return 1.0
    return min(max(load, 1.0), MAXIMUM_SLOWDOWN)


def wait(paths):
    """Polls the logs at `paths` until `missing` is empty; exit status 1 after `WAIT_SECONDS` of a quiet machine
    (each wall-clock second counts as 1 / `slowdown()`)."""
    counted, start = 0.0, time.monotonic()
    last = start
    while True:
        wanted = missing(read(paths))
        if not wanted:
            waited = (time.monotonic() - start) * 1e3
            if waited >= 1:
                print(f"demo-services: waited {waited:.0f} ms after the edge exited for the middle's and the leaf's lines")
            return 0
        now = time.monotonic()
        counted += (now - last) / slowdown()
        last = now
        if counted > WAIT_SECONDS:
            print(f"demo-services: FAILED: after {now - start:.1f} s ({WAIT_SECONDS} s of a quiet machine, "
                  f"load-scaled) the logs still lack: {'; '.join(wanted)}")
            return 1
        time.sleep(0.01)


def main(paths):
    lines = read(paths)
    for _, role, label, _, text in lines:
        if label == "-":
            print(f"{role:>6}: {text}")
    failures = []
    for scenario, title in SCENARIOS.items():
        mine = [line for line in lines if line[2][:1] == scenario]
        marks = [line[0] for line in mine if line[3] == "mark"]
        print(f"\n{title}")
        if not marks:
            failures.append(f"{scenario}: no mark")
            continue
        mark = marks[0]
        for time, role, label, _, text in mine:
            print(f"  {(time - mark) / 1e6:+9.1f} ms  {role:>6} {label:<3} {text}")
        labels = sorted({line[2] for line in mine if line[3] != "mark"})
        for label in labels:
            for role, expected in EXPECTED[scenario].items():
                texts = [text for _, r, l, _, text in mine if r == role and l == label]
                wanted = expected if role == "client" else f"token fired: {expected}"
                if not any(text.startswith(wanted) for text in texts):
                    failures.append(f"{label}: {role} never said '{wanted}' (it said {texts})")
            if not any(r == "leaf" and l == label and text.startswith("stopped after") for _, r, l, _, text in mine):
                failures.append(f"{label}: the leaf did not stop early")
    print()
    if failures:
        for failure in failures:
            print(f"demo-services: FAILED: {failure}")
        return 1
    print("demo-services: every hop's token fired with the reason its scenario means; every leaf stopped early")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--wait"]:
        sys.exit(wait(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
