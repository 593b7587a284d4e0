#!/usr/bin/env python3
"""Builds the example package of Documentation/ServerSideSwift.md as a new user would.

    python3 Scripts/build-server-guide-example.py [--fresh]

The guide marks the blocks of its example package with an HTML comment before each fence:
    <!-- guide-example: Package.swift -->
    <!-- guide-example: Sources/App/main.swift -->
(blocks marked with the same file are joined, in order). This script writes them to
.build-guide-example/App/, beside a link .build-guide-example/FutureLib to this repository, so that the
guide's own dependency line, `.package(path: "../FutureLib/Integrations")`, resolves as written; then runs
`swift build` there, warnings as errors.

By default the build shares the Integrations/ package's scratch path (`make integrations-test` has
just built Hummingbird, AsyncHTTPClient and SwiftNIO there, with the same flags), so only the example and the
two local packages are compiled; `--fresh` builds in a scratch path of its own, from nothing.

Exit status: the build's.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GUIDE = os.path.join(ROOT, "Documentation", "ServerSideSwift.md")
WORK = os.path.join(ROOT, ".build-guide-example")
MARKER = re.compile(r"^<!-- guide-example: (\S+) -->$")


def example_files():
    files = {}
    lines = open(GUIDE).read().splitlines()
    index = 0
    while index < len(lines):
        match = MARKER.match(lines[index])
        index += 1
        if not match:
            continue
        if index >= len(lines) or not lines[index].startswith("```swift"):
            sys.exit(f"{GUIDE}:{index}: a guide-example marker must be followed by a ```swift block")
        end = lines.index("```", index + 1)
        files.setdefault(match.group(1), []).append("\n".join(lines[index + 1 : end]))
        index = end + 1
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", action="store_true", help="build in a scratch path of its own, from nothing")
    arguments = parser.parse_args()

    files = example_files()
    if "Package.swift" not in files:
        sys.exit("the guide marks no Package.swift")
    package = os.path.join(WORK, "App")
    shutil.rmtree(package, ignore_errors=True)
    for path, blocks in files.items():
        target = os.path.join(package, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w") as file:
            file.write("\n\n".join(blocks) + "\n")
    link = os.path.join(WORK, "FutureLib")
    if not os.path.islink(link):
        os.symlink(ROOT, link)

    scratch = os.path.join(WORK, ".build") if arguments.fresh else os.path.join(ROOT, "Integrations", ".build")
    if arguments.fresh:
        shutil.rmtree(scratch, ignore_errors=True)
    swift = os.environ.get("SWIFT", "swift")
    command = [swift, "build", "--package-path", package, "--scratch-path", scratch, "-Xswiftc", "-warnings-as-errors"]
    print("build-server-guide-example:", " ".join(command), flush=True)
    result = subprocess.run(command)
    if result.returncode == 0:
        print(f"build-server-guide-example: {', '.join(sorted(files))} from {os.path.relpath(GUIDE, ROOT)} built")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
