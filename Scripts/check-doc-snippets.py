#!/usr/bin/env python3
"""Compiles every ```swift block of the documentation, so that a guide cannot drift from the API.

    python3 Scripts/check-doc-snippets.py [--integrations] [--modules DIR] [--keep-warnings] [--list]

`make test` runs it on the root package's blocks; `make integrations-test` runs it with
`--integrations` on the blocks about the nested Integrations/ package (Documentation/ServerSideSwift.md,
Integrations/README.md, the doc comments of Integrations/Sources, and any block fenced
```swift integrations), against that package's build, whose modules they import. The blocks about Vapor (the
doc comments of Integrations/Sources/FutureLibVapor, and blocks fenced ```swift vapor) go to files of their own,
which import Vapor instead of Hummingbird (both name their types `Application`, `Request`, `Response`).

Where the blocks come from: README.md, Documentation/*.md, the DocC catalogs
(Sources/*/*.docc/**/*.md) and the `///` doc comments of Sources/**/*.swift.

How it works (one compiler run for all of them, a few seconds):
  1. Each document becomes one file in .build-snippets/ (ignored by git). Its blocks live in a
     namespace of its own, an enum named after the document's path:
         enum `Documentation/Futures.md` {}
     so that names never clash between documents, and a document's blocks see each other's
     declarations, as a reader does.
  2. Each block is placed by its shape (its unindented lines decide):
       - only declarations (func, struct, class, enum, actor, typealias, attributes): members of the
         namespace (`static` is added to a top-level `func`), visible to the document's other blocks;
       - a top-level `extension` or `protocol`: at file scope, as written;
       - anything else (statements): the body of a function of its own,
         `static func `line N`() throws`, `async` when the block contains `await`.
     `import` lines are moved to the top of the file. `#sourceLocation` maps every line back, so
     the compiler reports errors at the document's own file and line.
  3. Names a block uses without declaring come from the prelude, Scripts/snippet-prelude/*.swift:
     Prelude.swift holds stubs every document can use (`fetchUser`, `download`, `User`, …);
     Documents.swift extends a document's namespace with stubs for that document only
     (`extension `Sources/FutureLib/Promise.swift` { static let promise = Promise<Int>() }`).
  4. All files are compiled as one module against the package's debug build (`swift build`
     first), in Swift 6 language mode, with `-emit-sil` (type checking, data-race and definite
     initialization diagnostics; no code generation).

A block that deliberately does not compile (a signature, another library's code, a manifest
fragment) says so in its fence: ```swift no-compile.

Exit status: 0 when every block compiles, 1 when one does not (each error is printed as
`file:line:column: error: …`, pointing into the document), 2 on a usage or setup error.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUTPUT = os.path.join(ROOT, ".build-snippets")
PRELUDE = os.path.join(ROOT, "Scripts", "snippet-prelude")
KNOWN_ATTRIBUTES = {"no-compile", "integrations", "vapor"}
# Documents about the nested Integrations/ package: their blocks import SwiftNIO, AsyncHTTPClient and
# swift-service-lifecycle, so they are compiled against that package's build (`--integrations`, run by
# `make integrations-test`), as is any other block fenced ```swift integrations.
INTEGRATIONS_DOCUMENTS = {"Documentation/ServerSideSwift.md", "Integrations/README.md"}
INTEGRATIONS_IMPORTS = [
    "import AsyncHTTPClient",
    "import Dispatch",
    "import Foundation",
    "import FutureLib",
    "import FutureLibAsyncHTTPClient",
    "import FutureLibHTTPDeadline",
    "import FutureLibGRPC",
    "import FutureLibHummingbird",
    "import FutureLibNIO",
    "import FutureLibServiceLifecycle",
    "import GRPCCore",
    "import GRPCNIOTransportHTTP2",
    "import Hummingbird",
    "import Logging",
    "import NIOCore",
    "import NIOHTTP1",
    "import NIOPosix",
    "import ServiceLifecycle",
    "import Synchronization",
    "import Testing",
]
# Vapor and Hummingbird both name their types `Application`, `Request`, `Response`, and FutureLibVapor and
# FutureLibHummingbird both have a `RequestCancellationMiddleware`: the blocks about Vapor (the doc comments of
# Integrations/Sources/FutureLibVapor, and any block fenced ```swift vapor) are compiled in files of their own,
# which import these instead of INTEGRATIONS_IMPORTS.
VAPOR_IMPORTS = [
    "import AsyncHTTPClient",
    "import Foundation",
    "import FutureLib",
    "import FutureLibAsyncHTTPClient",
    "import FutureLibVapor",
    "import NIOCore",
    "import NIOHTTP1",
    "import Testing",
    "import Vapor",
]
# Imported by every generated file (a block's own imports are added to these).
IMPORTS = [
    "import ChecksumExample",
    "import Dispatch",
    "import Foundation",
    "#if canImport(FoundationNetworking)",
    "import FoundationNetworking",
    "#endif",
    "import FutureLib",
    "import FutureLibFoundation",
    "import Synchronization",
    "import Testing",
]


class Block:
    def __init__(self, path, line, attributes, lines):
        self.path = path  # relative to ROOT
        self.line = line  # line of the block's first code line in `path`
        self.attributes = attributes
        self.lines = lines


# MARK: - Extraction


def markdown_blocks(path):
    """The ```swift blocks of a Markdown file (fences may be indented, e.g. in lists)."""
    blocks = []
    lines = read(path).split("\n")
    index = 0
    while index < len(lines):
        opening = re.match(r"^(\s*)(`{3,})swift\b(.*)$", lines[index])
        if opening:
            indent, fence, attributes = opening.group(1), opening.group(2), opening.group(3).split()
            body = []
            end = index + 1
            while end < len(lines) and not re.match(r"^\s*" + fence + r"\s*$", lines[end]):
                body.append(lines[end][len(indent) :] if lines[end].startswith(indent) else lines[end].lstrip())
                end += 1
            if end == len(lines):
                fail_setup(f"{relative(path)}:{index + 1}: the ```swift block is never closed")
            blocks.append(Block(relative(path), index + 2, attributes, body))
            index = end
        index += 1
    return blocks


def doc_comment_blocks(path):
    """The ```swift blocks inside the `///` comments of a Swift file."""
    blocks = []
    lines = read(path).split("\n")
    comment = re.compile(r"^\s*///( |$)")
    index = 0
    while index < len(lines):
        opening = re.match(r"^\s*/// ?```swift\b(.*)$", lines[index])
        if opening:
            body = []
            end = index + 1
            while end < len(lines) and comment.match(lines[end]) and not re.match(r"^\s*/// ?```\s*$", lines[end]):
                body.append(comment.sub("", lines[end], count=1))
                end += 1
            if end == len(lines) or not comment.match(lines[end]):
                fail_setup(f"{relative(path)}:{index + 1}: the ```swift block is never closed in its doc comment")
            blocks.append(Block(relative(path), index + 2, opening.group(1).split(), body))
            index = end
        index += 1
    return blocks


def documents():
    """Every file that may hold blocks, in a stable order."""
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "Integrations", "README.md")]
    paths += sorted(glob.glob(os.path.join(ROOT, "Documentation", "*.md")))
    paths += sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True))
    sources = sorted(glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True))
    sources += sorted(glob.glob(os.path.join(ROOT, "Integrations", "Sources", "**", "*.swift"), recursive=True))
    return [(path, markdown_blocks) for path in paths if os.path.exists(path)] + [
        (path, doc_comment_blocks) for path in sources
    ]


def belongs_to_integrations(block):
    return (
        block.path in INTEGRATIONS_DOCUMENTS
        or block.path.startswith("Integrations/")
        or "integrations" in block.attributes
        or "vapor" in block.attributes
    )


def is_about_vapor(block):
    return block.path.startswith("Integrations/Sources/FutureLibVapor/") or "vapor" in block.attributes


# MARK: - Placing a block


TOP_LEVEL_SKIP = re.compile(r"^(//|/\*|\*|\}|\)|\]|\.|#sourceLocation|$)")
ATTRIBUTE = re.compile(r"^@\w+(\([^)]*\))?\s*")
MODIFIER = re.compile(
    r"^(public|package|internal|fileprivate|private|final|nonisolated|static|override|indirect|"
    r"convenience|mutating|borrowing|consuming|isolated)\b\s*"
)
IMPORT = re.compile(r"^(@testable\s+|@preconcurrency\s+)?((public|package|internal)\s+)?import\s+\w+")


def hoist_imports(lines):
    """Moves `import` lines (and `#if` groups of them) out of `lines`, keeping line numbers."""
    imports = []
    lines = list(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        if IMPORT.match(line):
            imports.append(line)
            lines[index] = ""
        elif line.startswith("#if"):
            end = index + 1
            while end < len(lines) and (IMPORT.match(lines[end]) or lines[end].startswith("#else")):
                end += 1
            if end > index + 1 and end < len(lines) and lines[end].startswith("#endif"):
                imports.extend(lines[index : end + 1])
                for blank in range(index, end + 1):
                    lines[blank] = ""
                index = end
        index += 1
    return imports, lines


def keyword(line):
    """The declaration keyword a top-level line starts with, after attributes and modifiers."""
    rest = line
    while True:
        stripped = ATTRIBUTE.sub("", rest, count=1)
        stripped = MODIFIER.sub("", stripped, count=1)
        if stripped == rest:
            break
        rest = stripped
    if rest == "":
        return "attribute"  # an attribute on a line of its own: `@Test(arguments: …)`
    match = re.match(r"^(\w+)\b", rest)
    return match.group(1) if match else None


def shape(lines):
    """'file', 'declarations' or 'statements' (see the module comment)."""
    keywords = [keyword(line) for line in lines if not line[:1].isspace() and not TOP_LEVEL_SKIP.match(line)]
    if any(word in ("extension", "protocol") for word in keywords):
        return "file"
    declarations = ("func", "struct", "class", "enum", "actor", "typealias", "attribute")
    if keywords and all(word in declarations for word in keywords):
        return "declarations"
    return "statements"


def as_static_members(lines):
    """Makes each top-level `func` of a declaration block a `static func` of the namespace."""
    result = []
    for line in lines:
        if not line[:1].isspace() and keyword(line) == "func":
            line = re.sub(r"\bfunc\b", "static func", line, count=1)
        result.append(line)
    return result


def swift_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(name, blocks):
    """The Swift file for one document's blocks (`name`: the document's path, the namespace's name); returns
    (text, imports)."""
    path = blocks[0].path
    namespace = "`" + name + "`"
    body = []
    imports = []
    for block in blocks:
        block_imports, lines = hoist_imports(block.lines)
        imports.extend(block_imports)
        location = f"#sourceLocation(file: {swift_string(path)}, line: {block.line})"
        kind = shape(lines)
        if kind == "file":
            body += [location, *lines, "#sourceLocation()", ""]
        elif kind == "declarations":
            body += [f"extension {namespace} {{", location, *as_static_members(lines), "#sourceLocation()", "}", ""]
        else:
            effects = "async throws" if re.search(r"\bawait\b", "\n".join(lines)) else "throws"
            body += [
                f"extension {namespace} {{",
                f"    static func `line {block.line}`() {effects} {{",
                location,
                *lines,
                "#sourceLocation()",
                "    }",
                "}",
                "",
            ]
    header = [
        f"// Generated by Scripts/check-doc-snippets.py from {path}: do not edit, edit the document.",
        "",
        f"enum {namespace} {{}}",
        "",
    ]
    return "\n".join(header + body) + "\n", imports


# MARK: - Running


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", help="the Modules directory of the debug build (default: ask swift build)")
    parser.add_argument("--keep-warnings", action="store_true", help="show the compiler's warnings too")
    parser.add_argument("--list", action="store_true", help="list every block and how it is placed, compile nothing")
    parser.add_argument(
        "--integrations",
        action="store_true",
        help="compile the blocks about Integrations/ against its debug build instead of the root package's",
    )
    arguments = parser.parse_args()
    started = time.monotonic()

    blocks_by_document = []
    skipped = []
    for path, extract in documents():
        blocks = extract(path)
        for block in blocks:
            unknown = [attribute for attribute in block.attributes if attribute not in KNOWN_ATTRIBUTES]
            if unknown:
                fail_setup(f"{block.path}:{block.line - 1}: unknown fence attribute {' '.join(unknown)}"
                           f" (known: {', '.join(sorted(KNOWN_ATTRIBUTES))})")
        blocks = [block for block in blocks if belongs_to_integrations(block) == arguments.integrations]
        compiled = [block for block in blocks if "no-compile" not in block.attributes]
        skipped += [block for block in blocks if "no-compile" in block.attributes]
        # A document's Vapor blocks go to a file (and a namespace) of their own: see VAPOR_IMPORTS.
        vapor = [block for block in compiled if is_about_vapor(block)]
        others = [block for block in compiled if not is_about_vapor(block)]
        if others:
            blocks_by_document.append((relative(path), others))
        if vapor:
            name = relative(path) + " (Vapor)" if others else relative(path)
            blocks_by_document.append((name, vapor))

    count = sum(len(blocks) for _, blocks in blocks_by_document)
    if arguments.list:
        for path, blocks in blocks_by_document:
            for block in blocks:
                print(f"{block.path}:{block.line}: {shape(hoist_imports(block.lines)[1])}")
        for block in skipped:
            print(f"{block.path}:{block.line}: no-compile")
        return 0

    os.makedirs(OUTPUT, exist_ok=True)
    for stale in glob.glob(os.path.join(OUTPUT, "*.swift")):
        os.remove(stale)
    files = []
    for index, (path, blocks) in enumerate(blocks_by_document):
        text, imports = generate(path, blocks)
        base = IMPORTS
        if arguments.integrations:
            base = VAPOR_IMPORTS if all(is_about_vapor(block) for block in blocks) else INTEGRATIONS_IMPORTS
        imports = base + [line for line in dict.fromkeys(imports) if line not in base]
        name = os.path.join(OUTPUT, f"{index:03}-" + re.sub(r"[^A-Za-z0-9]+", "_", path) + ".swift")
        with open(name, "w") as file:
            file.write("\n".join(imports) + "\n\n" + text)
        files.append(name)
    if arguments.integrations:
        # The shared stubs, and the Integrations/ ones; Documents.swift is about the root's documents.
        prelude = [os.path.join(PRELUDE, "Prelude.swift")]
        prelude += sorted(glob.glob(os.path.join(PRELUDE, "Integrations", "*.swift")))
        package = os.path.join(ROOT, "Integrations")
    else:
        prelude = sorted(glob.glob(os.path.join(PRELUDE, "*.swift")))
        package = ROOT

    products = os.path.dirname(arguments.modules) if arguments.modules else swift_output(
        "build", "--show-bin-path", "--package-path", package
    )
    modules = arguments.modules or os.path.join(products, "Modules")
    if not os.path.isdir(modules):
        fail_setup(f"no build products in {modules}: run `swift build` first")
    # C modules of the dependencies (SwiftNIO's CNIOLinux, …): their module maps sit beside their objects.
    module_maps = []
    # Those that a dependency ships in its sources (swift-numerics' _NumericsShims, …) are in its checkout.
    checkouts = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(products))), "checkouts")
    shipped = glob.glob(os.path.join(checkouts, "*", "Sources", "*", "include", "module.modulemap"))
    shipped += glob.glob(os.path.join(checkouts, "*", "Sources", "*", "module.modulemap"))
    for module_map in sorted(glob.glob(os.path.join(products, "*.build", "module.modulemap"))) + sorted(shipped):
        module_maps += ["-Xcc", f"-fmodule-map-file={module_map}"]
    command = [
        swiftc(),
        "-swift-version", "6",
        "-module-name", "DocumentationSnippets",
        "-parse-as-library",
        "-wmo",
        "-emit-sil", "-o", os.devnull,
        "-diagnostic-style", "llvm",
        "-I", modules,
        *module_maps,
        *prelude,
        *files,
    ]  # fmt: skip
    if arguments.integrations:
        command += ["-D", "FUTURELIB_SNIPPETS_INTEGRATIONS"]  # Prelude.swift leaves its HTTPClient stub out
    if not arguments.keep_warnings:
        command.append("-suppress-warnings")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    seconds = time.monotonic() - started
    if result.returncode != 0:
        print(output)
        failed = sorted({match for match in re.findall(r"^(\S+?:\d+):\d+: error:", output, re.MULTILINE)})
        print(
            f"\ncheck-doc-snippets: {len(failed)} error location(s) in the {count} blocks compiled."
            "\n  A block that needs context: add a stub to Scripts/snippet-prelude/Prelude.swift (every"
            "\n  document) or to its document's namespace in Scripts/snippet-prelude/Documents.swift"
            "\n  (`extension `path/of/the/document` { static let … }`). A block that cannot compile"
            "\n  (a signature, another library's code): ```swift no-compile. Generated files: .build-snippets/",
            file=sys.stderr,
        )
        return 1
    if output and arguments.keep_warnings:
        print(output)
    print(
        f"check-doc-snippets{' --integrations' if arguments.integrations else ''}: {count} blocks in {len(blocks_by_document)} files compiled"
        f" ({len(skipped)} marked no-compile) in {seconds:.1f} s"
    )
    return 0


def swiftc():
    """The compiler of the toolchain that built the modules: `SWIFTC`, else the `swiftc` beside `SWIFT`.

    A `swiftc` taken from PATH while `SWIFT` names another toolchain could not load the modules it built."""
    if "SWIFTC" in os.environ:
        return os.environ["SWIFTC"]
    swift = os.environ.get("SWIFT", "swift")
    if os.path.dirname(swift):
        return os.path.join(os.path.dirname(swift), "swiftc")
    return "swiftc"


def swift_output(*arguments):
    swift = os.environ.get("SWIFT", "swift")
    result = subprocess.run([swift, *arguments], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        fail_setup(f"`{swift} {' '.join(arguments)}` failed:\n{result.stderr}")
    return result.stdout.strip()


def read(path):
    with open(path, encoding="utf-8") as file:
        return file.read()


def relative(path):
    return os.path.relpath(path, ROOT)


def fail_setup(message):
    print(f"check-doc-snippets: {message}", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    sys.exit(main())
