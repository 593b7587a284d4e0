# FutureLib — common tasks. `make help` lists them.
SWIFT ?= swift
SWIFT_FORMAT ?= swift-format
SWIFTC ?= swiftc
# The C compiler for `make test-wide`'s shim: the system's, else the toolchain's clang.
SHIM_CC ?= $(shell command -v cc || command -v clang)
TEST_FLAGS ?= -Xswiftc -warnings-as-errors

.PHONY: help build test forms-update api-check api-breakage test-wide test-release snippets demo lint format docs docs-site tsan tsan-consumer asan stress soak soak-ci bench bench-thresholds bench-thresholds-update bench-instructions bench-instructions-update bench-report bench-callgrind clean \
	integrations-test integrations-test-package guide-example integrations-soak integrations-soak-ci bench-http bench-http-instructions demo-server demo-services bench-grpc fuzz-deadline-header stream-oracle

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## Build everything (debug), warnings as errors
	$(SWIFT) build -Xswiftc -warnings-as-errors

test: ## Build, compile every ```swift block of the docs, check the public API, run the test suite; warnings as errors (what CI runs)
	$(SWIFT) build --build-tests $(TEST_FLAGS)
	SWIFT=$(SWIFT) python3 Scripts/forms.py
	SWIFT=$(SWIFT) python3 Scripts/check-doc-snippets.py
	$(MAKE) --no-print-directory api-check
	$(SWIFT) test $(TEST_FLAGS)

# The test targets see `package` symbols; a client does not. Type-checking the contract's shape
# files (Documentation/Guarantees.md) alone, without -package-name, proves they compile against the public interface.
# What a client compiler needs besides the Swift modules: the module maps of the package's C targets
# (`FutureLibThreadLocal`, which `FutureLib` imports, and `FutureLibReferenceCount`, which `Cancellation` imports),
# where SwiftPM writes them, as a client package's build does.
CLIENT_MODULES = -I .build/debug/Modules -Xcc -fmodule-map-file=.build/debug/FutureLibThreadLocal.build/module.modulemap \
	-Xcc -fmodule-map-file=.build/debug/FutureLibReferenceCount.build/module.modulemap
API_CHECK_FILES = Tests/CancellationTests/CancellationShapesTests.swift Tests/FutureLibTests/FutureShapesTests.swift
api-check: ## Type-check the contract's shape tests (Guarantees.md), the combinators the tests enumerate and the attack suite as a client package would: public symbols only (after a debug build)
	for file in $(API_CHECK_FILES); do \
		$(SWIFTC) -typecheck -swift-version 6 -warnings-as-errors $(CLIENT_MODULES) $$file || exit 1; \
	done
	$(SWIFTC) -typecheck -swift-version 6 -warnings-as-errors -parse-as-library -module-name TestCombinators \
		$(CLIENT_MODULES) Tests/TestCombinators/*.swift
	$(SWIFTC) -typecheck -swift-version 6 -warnings-as-errors $(CLIENT_MODULES) Tests/AttackTests/*.swift
	@echo "api-check: $(words $(API_CHECK_FILES)) files, TestCombinators and the attack suite type-check against the public interface"
	@# The layers (Guarantees.md): Cancellation and the helpers it is built from import only the standard
	@# library, Synchronization, Dispatch, the C library and the package's C header FutureLibReferenceCount;
	@# FutureLib no Foundation; the root package no package.
	@if grep -rhE --include='*.swift' '^(@_exported )?(public |package )?import ' Sources/Cancellation Sources/FutureLibConcurrencyHelpers \
		| grep -vE 'import (FutureLibConcurrencyHelpers|FutureLibReferenceCount|Synchronization|Dispatch|Glibc|Musl|Darwin|WinSDK)( |$$)'; then \
		echo "api-check: Cancellation imports only the standard library, Synchronization, Dispatch and FutureLibReferenceCount"; exit 1; fi
	@if grep -rlE --include='*.swift' '^(@_exported )?(public |package )?import Foundation' Sources/FutureLib; then \
		echo "api-check: FutureLib imports no Foundation"; exit 1; fi
	@if grep -qE '^    dependencies:' Package.swift; then echo "api-check: the root package has no package dependencies"; exit 1; fi
	@echo "api-check: the layers import what Guarantees.md allows"

# Every public declaration of Cancellation, FutureLib and FutureLibFoundation, one normalized
# signature a line, in Documentation/API/*.forms.txt, read from the debug build's symbol graph
# (swift-symbolgraph-extract, seconds); Futures.md's and the Combinators article's forms table is
# generated from it. `make test` fails on a form missing from the files or extra to them, and on
# what a new combinator forgot (its table row, a ✗'s note, its shape-test call, its test file);
# this target rewrites the files and the tables on purpose (commit them with the change).
forms-update: ## Rewrite Documentation/API/*.forms.txt and the forms tables (Futures.md, Combinators) from the debug build's public API
	$(SWIFT) build $(TEST_FLAGS)
	SWIFT=$(SWIFT) python3 Scripts/forms.py --update

# The public API of the products against the baseline revision in .api-baseline; the breakages made
# on purpose since then are listed, message by message, in .api-breakage-allowlist (no comments: the
# tool then ignores the file; README, "Versioning", says how to move the baseline). The current
# revision is `make test`'s debug build (.build, with the same flags, so nothing is compiled again
# after it); the tool clones this repository (full history) into .build's apidiff/ folder and builds
# the baseline there, apart from every other build (with warnings as errors too: a toolchain that
# warns on the baseline's code fails this until the baseline moves), and keeps its API: a few
# seconds once cached.
API_BASELINE = $(shell cat .api-baseline)
api-breakage: ## Fail when the public API of Cancellation, FutureLib or FutureLibFoundation broke since the revision in .api-baseline
	@# A shallow clone lacks the baseline revision: fetch the history first.
	@if [ "$$(git rev-parse --is-shallow-repository)" = true ]; then git fetch --quiet --unshallow; fi
	@git cat-file -e $(API_BASELINE)^{commit} || { echo "api-breakage: the baseline $(API_BASELINE) is not in this clone"; exit 1; }
	$(SWIFT) package $(TEST_FLAGS) diagnose-api-breaking-changes $(API_BASELINE) \
		--products Cancellation FutureLib FutureLibFoundation \
		--breakage-allowlist-path $(CURDIR)/.api-breakage-allowlist

# `make test-wide` runs, under the shim, only the tests whose behaviour depends on how many processors
# the process sees, listed one pattern a line with the reason in Scripts/wide-machine/tests: what
# CurrentProcessor.count sizes (the worker pool behind `.default` and its spin, the contexts on it,
# the registration stripes), work delivered on concurrent contexts, blocking waits and starvation,
# and the async bridges (the cooperative pool is as wide as the processors). The rest of the suite
# starts a fixed number of threads or none, and runs the same on any machine; `make test` runs it.
# A pattern that matches no test fails the target, before the run.
WIDE_TESTS = Scripts/wide-machine/tests
WIDE_FILTER = $(shell grep -v -e '^\#' -e '^$$' $(WIDE_TESTS) | paste -s -d '|')
test-wide: ## The tests that depend on the processor count (Scripts/wide-machine/tests: pool, stripes, concurrent contexts, blocking waits, async bridges) again, after `make test`, as on an 8-processor machine: an LD_PRELOAD shim raises the processor count every part of the process sees (Linux)
	mkdir -p .build/wide-machine
	$(SHIM_CC) -shared -fPIC -O2 -o .build/wide-machine/libprocessors.so Scripts/wide-machine/processors.c -ldl
	$(SWIFT) test list --skip-build > .build/wide-machine/all-tests
	@grep -v -e '^#' -e '^$$' $(WIDE_TESTS) | while IFS= read -r pattern; do \
		grep -qE -e "$$pattern" .build/wide-machine/all-tests \
			|| { echo "test-wide: '$$pattern' ($(WIDE_TESTS)) matches no test"; exit 1; }; \
	done
	@echo "test-wide: $$(grep -cE -e '$(WIDE_FILTER)' .build/wide-machine/all-tests) of $$(wc -l < .build/wide-machine/all-tests) tests match $(WIDE_TESTS)"
	LD_PRELOAD=$(CURDIR)/.build/wide-machine/libprocessors.so WIDE_MACHINE_PROCESSORS=8 \
		$(SWIFT) test --skip-build $(TEST_FLAGS) --filter '$(WIDE_FILTER)'

# Without testable imports (no test uses `@testable`): the modules are compiled exactly as
# `swift build -c release` compiles them for users, so `make soak-ci` runs its Soak on this build
# without compiling anything again.
test-release: ## The test suite built with optimizations (-c release), as users ship it: the optimizer may end a value's lifetime inside a locked section, which a debug build never does. A hang is killed after 30 minutes, the release build included (which takes 15 on a busy machine)
	timeout -k 10 1800 $(SWIFT) test -c release --disable-testable-imports --scratch-path .build-release $(TEST_FLAGS)

snippets: ## Compile every ```swift block of README, Documentation/, DocC articles and doc comments (after a build)
	SWIFT=$(SWIFT) python3 Scripts/check-doc-snippets.py

demo: ## Run the demo: futures and tokens doing their main job
	$(SWIFT) run -c release Demo

integrations-test: integrations-test-package guide-example ## Build and test the Integrations/ package (SwiftNIO, AsyncHTTPClient, ServiceLifecycle, Hummingbird, Vapor, gRPC), warnings as errors; then build the server guide's example packages

# The two halves of `make integrations-test`, which `.ci/run` runs apart: the example packages build on the
# Integrations package's scratch path, from other source paths, and so leave its build out of date; the steps that
# run its executables (integrations-soak-ci, demo-services) come between them.
integrations-test-package: ## The Integrations/ package alone: built with its tests (warnings as errors), its doc snippets compiled, its tests run
	cd Integrations && $(SWIFT) build --build-tests $(TEST_FLAGS)
	SWIFT=$(SWIFT) python3 Scripts/check-doc-snippets.py --integrations
	cd Integrations && $(SWIFT) test $(TEST_FLAGS)

guide-example: ## Build the server guide's example packages as a new user would, on the Integrations/ package's scratch path (after integrations-test-package: only the examples and the local packages compile)
	SWIFT=$(SWIFT) python3 Scripts/build-server-guide-example.py

stream-oracle: ## Differential tests of the stream operators against swift-async-algorithms (the nested Tests/StreamOracle package; STREAM_ORACLE_SEEDS seeds per operator, default 200)
	cd Tests/StreamOracle && $(SWIFT) test $(TEST_FLAGS)

# The parsers' files need only the standard library, so they are compiled alone with the fuzz entry point (no
# package build). libFuzzer writes the inputs it finds to .build/fuzz/; the committed seeds are read only. A crash
# (a trap, an AddressSanitizer report, or a broken rule the target checks) fails the target and leaves its input
# in .build/fuzz/crash-<hash> (replay: .build/fuzz/deadline-header .build/fuzz/crash-<hash>).
# Fork mode runs FUZZ_FORKS fuzzing processes side by side, so that both of CI's 2 cores fuzz; a crash in one of
# them stops the run and fails it, as without forks.
FUZZ_TIME ?= 30
FUZZ_FORKS ?= 2
FUZZ_DEADLINE_SOURCES = $(addprefix Integrations/Sources/FutureLibHTTPDeadline/,TimeoutDigits.swift \
	MillisecondsTimeout.swift GRPCTimeout.swift DeadlineHeader.swift) Integrations/Fuzz/DeadlineHeader/main.swift
fuzz-deadline-header: ## libFuzzer (-sanitize=fuzzer,address) on the deadline header parsers (Connect-Timeout-Ms, grpc-timeout) for FUZZ_TIME seconds (30) in FUZZ_FORKS processes (2), from the seeds in Integrations/Fuzz/DeadlineHeader/corpus
	mkdir -p .build/fuzz/deadline-header-corpus
	$(SWIFTC) -sanitize=fuzzer,address -parse-as-library -O $(FUZZ_DEADLINE_SOURCES) \
		-o .build/fuzz/deadline-header 2> .build/fuzz/build.log || { cat .build/fuzz/build.log; exit 1; }
	@# The gold linker warns about every AddressSanitizer helper it cannot export; nothing else is expected.
	@grep -v "Cannot export local symbol" .build/fuzz/build.log || true
	.build/fuzz/deadline-header -fork=$(FUZZ_FORKS) -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=.build/fuzz/ \
		.build/fuzz/deadline-header-corpus Integrations/Fuzz/DeadlineHeader/corpus

# The requests: completed at once, through an upstream, cut by their deadline, from a client that leaves; each
# round's figures are printed (Performance.md, "The Hummingbird soak"). SOAK_FLAGS=--trim calls malloc_trim(0)
# before each reading.
integrations-soak: ## A Hummingbird application under keep-alive load (release): 10⁶ requests (SOAK_REQUESTS) in 10 rounds, fails on resident-set growth over 2 MB after the first, a wrong answer, or requests, registrations, timers or connections left behind
	cd Integrations && $(SWIFT) run -c release --scratch-path .build-release HummingbirdSoak $${SOAK_REQUESTS:-1000000} $(SOAK_FLAGS)

# The executable `make integrations-test` built (run that target first): nothing is compiled, and no manifest is read.
integrations-soak-ci: ## The Hummingbird soak, bounded for CI: 16,000 requests in 4 rounds on integrations-test's debug build (seconds to a minute); the same checks as integrations-soak
	Integrations/.build/debug/HummingbirdSoak 16000 --rounds 4

# Not in CI: throughput on a shared machine is noise; run it on a quiet one and read the load it prints.
# BENCH_HTTP_FLAGS passes options to the script (--rounds, --duration, --only proxy,hummingbird,vapor, --together, --port-base, ...);
# BENCH_HTTP_BEFORE=DIR adds the token side of older cost servers in DIR to each comparison.
bench-http: ## What a request token and the AsyncHTTPClient adapter cost a server (release): wrk against plain and token servers side by side (Hummingbird proxy, Hummingbird, Vapor), medians, ratios, allocations per request; needs wrk (apt-get install wrk)
	@command -v wrk > /dev/null || { echo "bench-http: needs wrk (Debian/Ubuntu: apt-get install -y wrk)"; exit 1; }
	cd Integrations && $(SWIFT) build -c release --product HummingbirdCostServer
	cd Integrations && $(SWIFT) build -c release --product VaporCostServer
	mkdir -p .build/bench-http
	$(SHIM_CC) -shared -fPIC -O2 -o .build/bench-http/libmalloc-count.so Scripts/bench-http/malloc-count.c
	python3 Scripts/bench-http.py $(BENCH_HTTP_FLAGS)

bench-http-instructions: ## The cost servers' instructions per request under callgrind: Vapor (plain, token with the middleware's defaults, token answering 499/504/503) and Hummingbird (plain, the cancellable context alone, the context's own token on an observed connection, that with a passing middleware, token), and the functions that differ most; release, valgrind
	cd Integrations && $(SWIFT) build -c release --product VaporCostServer
	cd Integrations && $(SWIFT) build -c release --product HummingbirdCostServer
	python3 Scripts/bench-http-instructions.py $${BENCH_HTTP_INSTRUCTIONS_FLAGS:---functions 25} VaporCostServer:plain VaporCostServer:default VaporCostServer:token
	python3 Scripts/bench-http-instructions.py $${BENCH_HTTP_INSTRUCTIONS_FLAGS:---functions 25} HummingbirdCostServer:plain HummingbirdCostServer:context HummingbirdCostServer:context-token HummingbirdCostServer:pass HummingbirdCostServer:token

demo-server: ## Run the server-side demo: AsyncHTTPClient requests cancelled by deadlines and graceful shutdown
	cd Integrations && $(SWIFT) run DemoServer

bench-grpc: ## A unary gRPC call with a token and propagation against plain grpc-swift-2 (time, allocations per call), and a client's cancel reaching the third server of a chain (median, p99); release, both sides in one process
	cd Integrations && $(SWIFT) run -c release --scratch-path .build-release GRPCCancellationBenchmark $${BENCH_GRPC_ARGS:-}

demo-services: ## Run an HTTP edge, a gRPC middle and a gRPC leaf as processes on loopback, and a client: one timeline of each hop's token (client gives up, 300 ms deadline, graceful shutdown); fails when a reason is wrong
	SWIFT=$(SWIFT) DEMO_FLAGS="$(TEST_FLAGS)" bash Scripts/demo-services.sh

tsan: ## Run the test suite under ThreadSanitizer, built exactly as a user builds it (no -D flag); runtime-only suppressions in Tests/ThreadSanitizer.supp
	TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/ThreadSanitizer.supp \
		$(SWIFT) test --sanitize=thread --scratch-path .build-tsan $(TEST_FLAGS)

# On `make tsan`'s scratch path: the products' modules are compiled there with the same command lines
# as the outside package's build makes them, so after it only the consumer's tests are compiled.
# The consumer gets the same runtime-only suppression as `make tsan`: its async `value()` awaits
# continuations too, and the runtime's report (Tests/ThreadSanitizer.supp) would be a user's as well.
tsan-consumer: ## An outside package (Tests/Consumer) under plain `swift test --sanitize=thread`; any TSan report fails
	mkdir -p .build-tsan
	cd Tests/Consumer && TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/Tests/ThreadSanitizer.supp" bash -o pipefail -c \
		'$(SWIFT) test --sanitize=thread --scratch-path $(CURDIR)/.build-tsan $(TEST_FLAGS) 2>&1 \
		| tee $(CURDIR)/.build-tsan/consumer-test.log'
	! grep -q 'ThreadSanitizer' .build-tsan/consumer-test.log

asan: ## Run the test suite under AddressSanitizer and LeakSanitizer (the tests use smaller sizes under it)
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/LeakSanitizer.supp \
		$(SWIFT) test --sanitize=address --scratch-path .build-asan $(TEST_FLAGS)

stress: ## Repeat the race tests (STRESS_ITERATIONS, default 100000), run MODEL_SEEDS model seeds (10000), the full-size scale, depth and lifetime-loop tests (10⁶) and STRESS_ITERATIONS cases per property test
	FUTURELIB_STRESS_ITERATIONS=$${STRESS_ITERATIONS:-100000} FUTURELIB_MODEL_SEEDS=$${MODEL_SEEDS:-10000} \
		$(SWIFT) test -c release --scratch-path .build-stress --filter 'Race|racing|WorkerPool|Model|Scale|Depth|Property|LifetimeAttacks|NeverCompleted|QueuedContinuation'

soak: ## A server-shaped soak (release): 10⁶ requests, fails on memory growth, a pending future or a handler run twice
	$(SWIFT) run -c release Soak $${SOAK_REQUESTS:-1000000}

soak-ci: ## The soak, bounded for CI (200,000 requests, a few seconds; again with a striped shutdown token), on `make test-release`'s build
	$(SWIFT) run -c release --scratch-path .build-release $(TEST_FLAGS) Soak 200000
	$(SWIFT) run -c release --scratch-path .build-release $(TEST_FLAGS) Soak 200000 --striped

bench: ## Run the ordo-one/benchmark harness: every benchmark's malloc counts, throughput and wall-clock percentiles (minutes; RoundsDriver gives the ratios)
	cd Benchmarks && $(SWIFT) package --allow-writing-to-package-directory benchmark

# On `make test-release`'s scratch path: the root package's modules are compiled there with the same
# command lines (release, no testable imports), so after it only AllocationCheck and its malloc
# counter are compiled.
bench-thresholds: ## The allocation gate (CI): mallocs per operation of the hot paths (release) against Benchmarks/Thresholds/allocations.json; one more allocation fails
	cd Benchmarks/Allocations && $(SWIFT) run -c release --scratch-path $(CURDIR)/.build-release $(TEST_FLAGS) AllocationCheck

bench-thresholds-update: ## Measure the hot paths' mallocs per operation again and rewrite Benchmarks/Thresholds/allocations.json (commit it with the reason)
	cd Benchmarks/Allocations && $(SWIFT) run -c release --scratch-path $(CURDIR)/.build-release $(TEST_FLAGS) AllocationCheck --update

# Also on `make test-release`'s scratch path, so after it only InstructionCheck is compiled. The script runs each
# scenario under valgrind at n and 2n operations (two at a time on 2 cores) and compares the difference per
# operation with the baseline.
bench-instructions: ## The instruction gate (CI): instructions per operation of the hot paths (callgrind, release) against Benchmarks/Thresholds/instructions.json; a few percent more fails
	SWIFT=$(SWIFT) python3 Scripts/bench-instructions.py

bench-instructions-update: ## Count the hot paths' instructions again and rewrite Benchmarks/Thresholds/instructions.json (commit it with the reason)
	SWIFT=$(SWIFT) python3 Scripts/bench-instructions.py --update

bench-report: ## RoundsDriver ratios + callgrind + mallinfo -> Documentation/Performance.md (BENCH_REPORT_FLAGS=--quick)
	SWIFT=$(SWIFT) python3 Scripts/bench-report.py $(BENCH_REPORT_FLAGS)

bench-callgrind: ## Instruction counts (valgrind) of FutureLib vs peers, into Documentation/Performance.md
	SWIFT=$(SWIFT) python3 Scripts/bench-report.py --callgrind

lint: ## Check formatting (swift-format --strict)
	$(SWIFT_FORMAT) lint --strict --recursive Sources Tests Package.swift \
		Integrations/Sources Integrations/Tests Integrations/Package.swift Integrations/Fuzz

format: ## Rewrite sources with swift-format
	$(SWIFT_FORMAT) format --in-place --recursive Sources Tests Package.swift \
		Integrations/Sources Integrations/Tests Integrations/Package.swift Integrations/Fuzz

docs: ## Build the DocC archives of the three modules, warnings as errors
	./Scripts/build-docs.sh

docs-site: ## Also write a static website of the three modules to docs-site/ (serve it with any web server)
	./Scripts/build-docs.sh --static-hosting

clean: ## Remove build products
	rm -rf .build .build-* .docc-build docs-site Tests/StreamOracle/.build Benchmarks/.build Benchmarks/Allocations/.build Integrations/.build Integrations/.build-release
