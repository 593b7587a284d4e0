#!/usr/bin/env python3
"""Merges the logs of `make demo-services`' processes into one timeline, and checks it.

Each line of a log is `<nanoseconds>\t<role>\t<label>\t<kind>\t<text>` (Integrations/Sources/DemoServices/
Timeline.swift), on the machine's uptime clock, which every process shares. A scenario's lines are printed in time
order, each with how long after the scenario's mark (the client gave up, sent the request, signalled the edge) it
happened. Then the checks: every hop's token fired, with the reason the scenario means, and the client got the
answer it means. Exit status 1 when one fails.
"""
import sys

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


def main(paths):
    lines = []
    for path in paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                fields = line.rstrip("\n").split("\t", 4)
                if len(fields) == 5:
                    lines.append((int(fields[0]), fields[1], fields[2], fields[3], fields[4]))
    lines.sort()
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
    sys.exit(main(sys.argv[1:]))
