#!/usr/bin/env bash
# Builds the DocC archives of the package's modules with the toolchain's `docc`, warnings as
# errors, without the swift-docc-plugin (the package has no dependencies).
#
#   ./Scripts/build-docs.sh                  # every module -> .docc-build/<Module>.doccarchive
#   ./Scripts/build-docs.sh Cancellation     # only the modules named
#   ./Scripts/build-docs.sh --static-hosting # also write docs-site/<Module>/ (and an index.html linking
#                                            them) for a static web server
#
# Environment: SWIFT (default `swift`), DOCC (default: `docc` next to `swift`, else on PATH),
# DOCS_SCRATCH_PATH (default `.build-docs`), DOCS_HOSTING_BASE_PATH (URL prefix of docs-site/,
# default empty: the site root).
#
# Steps: (1) compile the modules once with `-emit-symbol-graph` into a scratch path of their own,
# so `.build` of a concurrent `swift build` is untouched; (2) run `docc convert` on each module's
# catalog with only that module's symbol graphs (`<Module>.symbols.json` and the
# `<Module>@<Extended>.symbols.json` files for its extensions of other modules). A module that
# does not compile is reported and skipped; the others are still built. Exits non-zero if any
# module failed.
set -euo pipefail

cd "$(dirname "$0")/.."

SWIFT="${SWIFT:-swift}"
SCRATCH_PATH="${DOCS_SCRATCH_PATH:-.build-docs}"
OUTPUT_DIR=".docc-build"
SITE_DIR="docs-site"
HOSTING_BASE_PATH="${DOCS_HOSTING_BASE_PATH:-}"
BUNDLE_PREFIX="com.github.futurelib"
ALL_MODULES=(Cancellation FutureLib FutureLibFoundation)  # dependency order: each imports the ones before

static_hosting=false
modules=()
for argument in "$@"; do
    case "$argument" in
        --static-hosting) static_hosting=true ;;
        -h | --help)
            sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        -*)
            echo "build-docs: unknown option '$argument' (try --help)" >&2
            exit 2
            ;;
        *) modules+=("$argument") ;;
    esac
done
if [ ${#modules[@]} -eq 0 ]; then
    modules=("${ALL_MODULES[@]}")
fi
for module in "${modules[@]}"; do
    if [ ! -d "Sources/$module/$module.docc" ]; then
        echo "build-docs: no catalog at Sources/$module/$module.docc" >&2
        exit 2
    fi
done

# Prefer the docc of the toolchain that `swift` belongs to.
if [ -z "${DOCC:-}" ]; then
    swift_path="$(command -v "$SWIFT" || true)"
    if [ -n "$swift_path" ] && [ -x "$(dirname "$(readlink -f "$swift_path")")/docc" ]; then
        DOCC="$(dirname "$(readlink -f "$swift_path")")/docc"
    elif command -v xcrun > /dev/null 2>&1; then
        DOCC="$(xcrun --find docc)"
    else
        DOCC="docc"
    fi
fi
if ! command -v "$DOCC" > /dev/null 2>&1; then
    echo "build-docs: docc not found (set DOCC to the toolchain's docc)" >&2
    exit 2
fi

log() { printf '==> %s\n' "$*"; }

# MARK: - Symbol graphs

# A stable directory: an up-to-date module is not recompiled and its graphs stay where they are.
SYMBOL_GRAPH_DIR="$SCRATCH_PATH/symbol-graphs"

# Compiles `target` (and what it depends on), emitting symbol graphs into `$2`.
emit_symbol_graphs() {
    local target="$1" directory="$2"
    mkdir -p "$directory"
    "$SWIFT" build \
        --scratch-path "$SCRATCH_PATH" \
        --target "$target" \
        -Xswiftc -emit-symbol-graph \
        -Xswiftc -emit-symbol-graph-dir -Xswiftc "$directory" \
        -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
        -Xswiftc -emit-extension-block-symbols
}

is_requested() {
    local module
    for module in "${modules[@]}"; do [ "$module" = "$1" ] && return 0; done
    return 1
}

# Compiles the requested modules, the last in dependency order first, since that compiles the
# others too. When a module fails (FutureLib mid-edit, say), the ones before it are tried alone.
declare -A built=()
for ((index = ${#ALL_MODULES[@]} - 1; index >= 0; index--)); do
    target="${ALL_MODULES[$index]}"
    if ! is_requested "$target" || [ -n "${built[$target]:-}" ]; then continue; fi
    log "Compiling $target with symbol graphs (scratch path $SCRATCH_PATH)"
    if emit_symbol_graphs "$target" "$SYMBOL_GRAPH_DIR"; then
        for ((earlier = 0; earlier <= index; earlier++)); do built[${ALL_MODULES[$earlier]}]=ok; done
    else
        echo "build-docs: $target does not compile; skipping its documentation" >&2
        built[$target]=failed
    fi
done

# Copies the graphs of `module` (its own and its extensions of other modules) into `$2`.
collect_symbol_graphs() {
    local module="$1" destination="$2" source="$3"
    rm -rf "$destination"
    mkdir -p "$destination"
    shopt -s nullglob
    local files=("$source/$module.symbols.json" "$source/$module"@*.symbols.json)
    shopt -u nullglob
    local file found=false
    for file in "${files[@]}"; do
        if [ -f "$file" ]; then
            cp "$file" "$destination/"
            found=true
        fi
    done
    $found
}

# MARK: - Archives

mkdir -p "$OUTPUT_DIR"
failed=()
for module in "${modules[@]}"; do
    if [ "${built[$module]:-}" != ok ]; then
        failed+=("$module (does not compile)")
        continue
    fi
    graphs="$SCRATCH_PATH/docs-input/$module"
    if ! collect_symbol_graphs "$module" "$graphs" "$SYMBOL_GRAPH_DIR"; then
        # The graphs were removed while the build was up to date: emit them again into a new
        # directory, which changes the compiler command line and so recompiles the module.
        fresh="$SCRATCH_PATH/symbol-graphs-$(date +%s)"
        log "Symbol graph of $module missing; recompiling into $fresh"
        if ! emit_symbol_graphs "$module" "$fresh" || ! collect_symbol_graphs "$module" "$graphs" "$fresh"; then
            failed+=("$module (no symbol graph)")
            continue
        fi
        rm -rf "$SYMBOL_GRAPH_DIR"
        mv "$fresh" "$SYMBOL_GRAPH_DIR"
    fi

    archive="$OUTPUT_DIR/$module.doccarchive"
    log "Converting Sources/$module/$module.docc -> $archive"
    rm -rf "$archive"
    if ! "$DOCC" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "$BUNDLE_PREFIX.$module" \
        --warnings-as-errors \
        --output-path "$archive"; then
        failed+=("$module (docc)")
        continue
    fi

    if $static_hosting; then
        site="$SITE_DIR/$module"
        log "Transforming $archive for static hosting -> $site"
        rm -rf "$site"
        mkdir -p "$SITE_DIR"
        "$DOCC" process-archive transform-for-static-hosting "$archive" \
            --output-path "$site" \
            --hosting-base-path "${HOSTING_BASE_PATH%/}/$module"
    fi
done

# A landing page at the root of docs-site/ that links each module's documentation.
if $static_hosting; then
    {
        echo '<!doctype html>'
        echo '<html lang="en"><head><meta charset="utf-8"><title>FutureLib documentation</title>'
        echo '<style>body{font-family:-apple-system,system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;line-height:1.5}</style>'
        echo '</head><body><h1>FutureLib documentation</h1><ul>'
        for module in "${ALL_MODULES[@]}"; do
            lowercase="$(printf '%s' "$module" | tr '[:upper:]' '[:lower:]')"
            if [ -d "$SITE_DIR/$module" ]; then
                echo "<li><a href=\"${HOSTING_BASE_PATH%/}/$module/documentation/$lowercase/\">$module</a></li>"
            fi
        done
        echo '</ul></body></html>'
    } > "$SITE_DIR/index.html"
    log "Wrote $SITE_DIR/index.html"
fi

if [ ${#failed[@]} -gt 0 ]; then
    printf 'build-docs: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
for module in "${modules[@]}"; do log "Built $OUTPUT_DIR/$module.doccarchive"; done
