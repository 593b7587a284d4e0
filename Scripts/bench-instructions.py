#!/usr/bin/env python3
"""CI's instruction gate (`make bench-instructions`): instructions per operation of the hot paths, counted by
`valgrind --tool=callgrind`, against the committed baseline in Benchmarks/Thresholds/instructions.json.

    python3 Scripts/bench-instructions.py               build InstructionCheck, count, compare (exit 1 on a regression)
    python3 Scripts/bench-instructions.py --update      count and rewrite the baseline (make bench-instructions-update)
    python3 Scripts/bench-instructions.py --only KEY…   only these scenarios (with --update: merged into the file)
    python3 Scripts/bench-instructions.py --binary PATH count this InstructionCheck binary instead of building one

Each scenario of Benchmarks/Allocations/InstructionCheck runs under callgrind at n and 2n operations; instructions per
operation = (I(2n) − I(n)) / n, so the process's start-up, the runtime's first-use costs and teardown cancel out. The
count of a given binary is the same on every run, so the tolerance only has to absorb what a rebuild or an unrelated
change moves (Documentation/Performance.md, "Instruction gate (CI)", gives the measurements); a generic-metadata
lookup on a hot path (hundreds of instructions) is far above it.

The binary is built on the root package's release scratch path (.build-release, as `make bench-thresholds`), so in
CI, after `make test-release`, only InstructionCheck itself is compiled, and copied without its debug information
(`strip --strip-debug`: valgrind 3.19 cannot read some of it; the symbols stay for `callgrind_annotate`).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "Benchmarks" / "Allocations"
SCRATCH = ROOT / ".build-release"
BASELINE = ROOT / "Benchmarks" / "Thresholds" / "instructions.json"
# How far above its baseline a path may go, as a fraction of the baseline. The measurements behind it are in
# Documentation/Performance.md ("Instruction gate (CI)"): identical counts run to run, at most a few tenths of a
# percent between builds; the regressions this gate is for were +100 %.
DEFAULT_TOLERANCE = 0.03


def log(message: str) -> None:
    print(message, flush=True)


def swift() -> str:
    return os.environ.get("SWIFT", "swift")


def build() -> Path:
    """Builds InstructionCheck (release) on the root's release scratch path; returns a copy without debug info."""
    flags = ["-c", "release", "--scratch-path", str(SCRATCH), "-Xswiftc", "-warnings-as-errors"]
    subprocess.run([swift(), "build", *flags, "--product", "InstructionCheck"], cwd=PACKAGE, check=True)
    bin_dir = subprocess.run([swift(), "build", *flags, "--show-bin-path"], cwd=PACKAGE, check=True, text=True,
                             stdout=subprocess.PIPE).stdout.strip()
    return stripped_copy(Path(bin_dir) / "InstructionCheck")


def stripped_copy(binary: Path) -> Path:
    stripped = SCRATCH / "instruction-check" / "InstructionCheck"
    stripped.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, stripped)
    subprocess.run(["strip", "--strip-debug", str(stripped)], check=True)
    return stripped


def scenarios(binary: Path) -> list[tuple[str, int, str]]:
    """(key, n, description) of every scenario, from the binary itself."""
    out = subprocess.run([str(binary), "--list"], check=True, text=True, stdout=subprocess.PIPE).stdout
    rows = []
    for line in out.splitlines():
        key, count, description = line.split("\t", 2)
        rows.append((key, int(count), description))
    return rows


def instructions(binary: Path, key: str, count: int) -> int:
    """The instructions callgrind counts in a whole run of `binary key count`."""
    # Deterministic hashing: a Set or Dictionary probes the same slots on every run.
    env = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "callgrind.out"
        process = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), key, str(count)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if process.returncode != 0:
            tail = "\n".join(process.stderr.splitlines()[-15:])
            raise RuntimeError(f"valgrind failed on {key} {count} (exit {process.returncode}):\n{tail}")
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no instruction total for {key} {count}")


def per_operation(binary: Path, key: str, count: int) -> float:
    return (instructions(binary, key, 2 * count) - instructions(binary, key, count)) / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update", action="store_true", help="rewrite the baseline with this run's counts")
    parser.add_argument("--only", nargs="+", metavar="KEY", help="only these scenarios")
    parser.add_argument("--binary", type=Path, help="an InstructionCheck binary to count, instead of building one")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="valgrind runs at once")
    parser.add_argument("--json", type=Path, help="also write this run's counts to this file")
    args = parser.parse_args()

    if shutil.which("valgrind") is None:
        log("bench-instructions: valgrind is not installed (apt-get install valgrind)")
        return 1
    started = time.monotonic()
    binary = stripped_copy(args.binary) if args.binary else build()
    built = time.monotonic()
    rows = scenarios(binary)
    if args.only:
        unknown = set(args.only) - {key for key, _, _ in rows}
        if unknown:
            log(f"bench-instructions: no scenario {', '.join(sorted(unknown))}")
            return 1
        rows = [row for row in rows if row[0] in args.only]

    measured: dict[str, float] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        runs = {key: pool.submit(per_operation, binary, key, count) for key, count, _ in rows}
        for key, run in runs.items():
            measured[key] = run.result()
    log(f"bench-instructions: {len(rows)} scenarios counted in {time.monotonic() - built:.0f} s "
        f"(build {built - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(measured, indent=2, sort_keys=True) + "\n")

    saved = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    tolerance = float(saved.get("tolerance", DEFAULT_TOLERANCE))
    baseline: dict[str, float] = saved.get("instructions", {})

    if args.update:
        counts = dict(baseline) if args.only else {}
        counts.update({key: round(value) for key, value in measured.items()})
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE.write_text(json.dumps({"tolerance": tolerance, "instructions": counts}, indent=2, sort_keys=True)
                            + "\n")
        for key, value in measured.items():
            before = baseline.get(key)
            change = f" (was {before:,})" if before is not None and before != round(value) else ""
            log(f"{key}: {value:,.0f} instructions per operation{change}")
        log(f"wrote {BASELINE.relative_to(ROOT)}: commit it with the change and its reason")
        return 0

    failures = 0
    for key, _, description in rows:
        value = measured[key]
        limit = baseline.get(key)
        if limit is None:
            log(f"FAIL {key}: {value:,.0f} instructions per operation, no baseline "
                "(run make bench-instructions-update and commit Benchmarks/Thresholds/instructions.json)")
            failures += 1
            continue
        change = (value - limit) / limit * 100
        summary = (f"{key}: {value:,.0f} instructions per operation, baseline {limit:,.0f} ({change:+.1f} %, "
                   f"tolerance ±{tolerance * 100:g} %)")
        if value > limit * (1 + tolerance):
            log(f"FAIL {summary}: {description}")
            failures += 1
        elif value < limit * (1 - tolerance):
            log(f"LOWER {summary}: lock the gain in with make bench-instructions-update")
        else:
            log(f"ok {summary}")
    if not args.only:
        for key in sorted(set(baseline) - set(measured)):
            log(f"note: {key} has a baseline but no scenario; make bench-instructions-update drops it")
    if failures:
        log(f"bench-instructions: {failures} hot path(s) above their baseline by more than "
            f"{tolerance * 100:g} %. A generic function or deinit that lost its specialization (an @inlinable or "
            "@usableFromInline removed, a generic class's deinit doing work) looks like this: "
            "`valgrind --tool=callgrind` the scenario and `callgrind_annotate` shows where (Benchmarks/Callgrind/"
            "README.md). If the cost is intended, run make bench-instructions-update and commit "
            "Benchmarks/Thresholds/instructions.json with the reason.")
        return 1
    log(f"bench-instructions: {len(rows)} hot paths within {tolerance * 100:g} % of their baseline "
        f"({time.monotonic() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
