#!/usr/bin/env python3
"""Builds the example package of Documentation/ServerSideSwift.md as a new user would.

    python3 Scripts/build-server-guide-example.py [--fresh]

The guide marks the blocks of its example packages with an HTML comment before each fence:
    <!-- guide-example: Package.swift -->
    <!-- guide-example: Sources/App/main.swift -->
    <!-- guide-example VaporApp: Package.swift -->
(blocks marked with the same file of the same package are joined, in order; a marker without a package name is
about the package `App`). This script writes each package to .build-guide-example/<package>/, beside a link
.build-guide-example/FutureLib to this repository, so that the guide's own dependency line,
`.package(path: "../FutureLib/Integrations")`, resolves as written; then runs `swift build` in each, warnings as
errors.

By default the builds share the Integrations/ package's scratch path (`make integrations-test` has
just built Hummingbird, Vapor, AsyncHTTPClient and SwiftNIO there, with the same flags), so only the examples and
the two local packages are compiled; `--fresh` builds in a scratch path of its own, from nothing.

Exit status: 0 when every package builds, else the first failing build's.
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
MARKER = re.compile(r"^<!-- guide-example(?: (\w+))?: (\S+) -->$")


def example_packages():
    """{package: {path: [block, …]}}."""
    packages = {}
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
        files = packages.setdefault(match.group(1) or "App", {})
        files.setdefault(match.group(2), []).append("\n".join(lines[index + 1 : end]))
        index = end + 1
    return packages


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fresh", action="store_true", help="build in a scratch path of its own, from nothing")
    arguments = parser.parse_args()

    link = os.path.join(WORK, "FutureLib")
    os.makedirs(WORK, exist_ok=True)
    if not os.path.islink(link):
        os.symlink(ROOT, link)
    scratch = os.path.join(WORK, ".build") if arguments.fresh else os.path.join(ROOT, "Integrations", ".build")
    if arguments.fresh:
        shutil.rmtree(scratch, ignore_errors=True)
    swift = os.environ.get("SWIFT", "swift")
    for name, files in example_packages().items():
        if "Package.swift" not in files:
            sys.exit(f"the guide marks no Package.swift for {name}")
        package = os.path.join(WORK, name)
        shutil.rmtree(package, ignore_errors=True)
        for path, blocks in files.items():
            target = os.path.join(package, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as file:
                file.write("\n\n".join(blocks) + "\n")
        command = [
            swift, "build", "--package-path", package, "--scratch-path", scratch, "-Xswiftc", "-warnings-as-errors"
        ]  # fmt: skip
        print("build-server-guide-example:", " ".join(command), flush=True)
        result = subprocess.run(command)
        if result.returncode != 0:
            return result.returncode
        print(f"build-server-guide-example: {name}: {', '.join(sorted(files))} from {os.path.relpath(GUIDE, ROOT)} built")
    return 0


if __name__ == "__main__":
    sys.exit(main())
