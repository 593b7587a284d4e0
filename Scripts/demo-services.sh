#!/usr/bin/env bash
# `make demo-services`: a gRPC leaf, a gRPC middle that calls it, an HTTP edge (Hummingbird) that calls the middle,
# each a process of its own on loopback, and a client that runs three scenarios against the edge: (a) it gives up,
# (b) a 300 ms deadline set at the edge, (c) the edge shuts down gracefully with requests in flight. Each process
# writes its events to a log; Scripts/demo-services-timeline.py merges them into one timeline and checks that each
# hop's token fired with the reason the scenario means (exit 1 otherwise). The processes are started and stopped by
# their PIDs; none outlives the script.
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
cd "$scripts/../Integrations"
SWIFT=${SWIFT:-swift}
# The flags of `make integrations-test` (the Makefile passes them), so that its build is reused.
read -r -a flags <<<"${DEMO_FLAGS:-}"
$SWIFT build --product DemoServices "${flags[@]}"
bin="$($SWIFT build --show-bin-path "${flags[@]}")/DemoServices"
logs=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Waits (up to 30 s) for a server to write its port, and prints it.
port_of() {
    for _ in $(seq 300); do
        if [ -s "$1" ]; then cat "$1"; return 0; fi
        sleep 0.1
    done
    echo "demo-services: no port in $1" >&2
    return 1
}

"$bin" leaf "$logs/leaf.port" 2000 >"$logs/leaf.log" &
pids+=($!)
leaf_port=$(port_of "$logs/leaf.port")
"$bin" middle "$logs/middle.port" "$leaf_port" >"$logs/middle.log" &
pids+=($!)
middle_port=$(port_of "$logs/middle.port")
"$bin" edge "$logs/edge.port" "$middle_port" >"$logs/edge.log" &
edge=$!
pids+=("$edge")
edge_port=$(port_of "$logs/edge.port")
echo "demo-services: leaf (pid ${pids[0]}) on $leaf_port, middle (pid ${pids[1]}) on $middle_port, edge (pid $edge) on $edge_port"

"$bin" client "$edge_port" "$edge" "$logs/leaf.log" >"$logs/client.log"
# The client sent SIGTERM to the edge in scenario (c): it shuts down gracefully and exits by itself.
wait "$edge" || { echo "demo-services: the edge did not exit cleanly after SIGTERM" >&2; exit 1; }
# The middle and the leaf hear of (c) after the edge answered and exited: wait (load-scaled) for their lines before
# stopping them, so that a loaded machine cannot cut off a line that was about to come.
complete=0
python3 "$scripts/demo-services-timeline.py" --wait "$logs"/{middle,leaf}.log || complete=1
cleanup
pids=()
python3 "$scripts/demo-services-timeline.py" "$logs"/{client,edge,middle,leaf}.log
rm -rf "$logs"
exit "$complete"
