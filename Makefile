# The attention engine: native library, CLI, tests, WASM build, benchmarks.
# `make` builds build/libattention.a, build/libattention.so and build/attn;
# `make test` runs every suite after installing what the machine lacks
# (scripts/ensure-deps.sh).

CC      ?= cc
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wundef -Wcast-qual -Wwrite-strings \
           -Wpointer-arith -Wvla -Werror
# Never -ffast-math: it lets the compiler delete isinf/isnan guards. -O3
# vectorises the products (ISO C: no contraction into FMA, same results).
CFLAGS  ?= -O3 -g
ALL_CFLAGS := -std=c11 $(WARN) $(CFLAGS) -Isrc
LDLIBS_CORE := -lm

BUILD   := build
# The library's layers, lowest first (ARCHITECTURE.md): each includes only
# the public header and the layers before it.
LAYERS  := kernels text model problem walkthrough check lm train
LIB_SRC := $(foreach layer,$(LAYERS),$(wildcard src/$(layer)/*.c))
LIB_HDR := src/attention.h $(foreach layer,$(LAYERS),$(wildcard src/$(layer)/*.h))
CLI_SRC := $(wildcard src/cli/*.c)
# The JSON-to-problem adapter is shared by the CLI and the vector tests.
JSON_ADAPTER_SRC := src/cli/problem_json.c
TEST_SRC := $(wildcard tests/test_*.c)
SUPPORT_SRC := $(wildcard tests/support/*.c) $(JSON_ADAPTER_SRC)

LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/obj/%.o)
TESTS   := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer
SAN_LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/san/obj/%.o)
SAN_TESTS   := $(TEST_SRC:tests/%.c=$(BUILD)/san/tests/%)

.PHONY: all lib shared cli test deps lint format test-layers test-docs test-native test-sanitize \
        test-cli test-wasm test-browser test-engines test-dist wasm vendor presets bench bench-ab serve \
        clean install uninstall
.PHONY: model single test-single element fuzz test-fuzz fuzz-build python-package test-python h5p \
        facts test-bindings

all: lib shared cli
lib: $(BUILD)/libattention.a
shared: $(BUILD)/libattention.so
cli: $(BUILD)/attn

$(BUILD)/obj/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libattention.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The shared library, from position-independent objects of the same sources.
# Its soname carries the major version: libattention.so.$(SOVERSION).
PIC_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/pic/obj/%.o)

$(BUILD)/pic/obj/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

$(BUILD)/libattention.so: $(PIC_OBJ)
	$(CC) -shared -Wl,-soname,libattention.so.$(SOVERSION) $(LDFLAGS) $^ -o $@ $(LDLIBS_CORE)

# The CLI's objects sit beside the library's, where make test-layers reads
# their symbols.
CLI_OBJ := $(CLI_SRC:src/%.c=$(BUILD)/obj/%.o)

$(BUILD)/obj/cli/%.o: src/cli/%.c src/attention.h $(wildcard src/cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/attn: $(CLI_OBJ) $(BUILD)/libattention.a
	$(CC) $(ALL_CFLAGS) $(CLI_OBJ) -o $@ $(BUILD)/libattention.a -lcjson $(LDLIBS_CORE)

# One binary per tests/test_*.c, each linked with the shared test support.
# The tests' support files are compiled once into an archive (not once per
# test: 37 tests times 7 files, twice with the sanitizers, was most of
# make test's build).
SUPPORT_OBJ     := $(SUPPORT_SRC:%.c=$(BUILD)/support/%.o)
SAN_SUPPORT_OBJ := $(SUPPORT_SRC:%.c=$(BUILD)/san/support/%.o)

$(BUILD)/support/%.o: %.c tests/support/*.h src/attention.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/support -Isrc/cli -c $< -o $@

$(BUILD)/libtestsupport.a: $(SUPPORT_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/san/support/%.o: %.c tests/support/*.h src/attention.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/support -Isrc/cli -c $< -o $@

$(BUILD)/san/libtestsupport.a: $(SAN_SUPPORT_OBJ)
	$(AR) rcs $@ $^

$(BUILD)/tests/%: tests/%.c tests/support/*.h $(BUILD)/libtestsupport.a $(BUILD)/libattention.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/support -Isrc/cli $< -o $@ \
	    $(BUILD)/libtestsupport.a $(BUILD)/libattention.a -lcmocka -lcjson $(LDLIBS_CORE)

$(BUILD)/san/obj/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/san/libattention.a: $(SAN_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/san/tests/%: tests/%.c tests/support/*.h $(BUILD)/san/libtestsupport.a $(BUILD)/san/libattention.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/support -Isrc/cli $< -o $@ \
	    $(BUILD)/san/libtestsupport.a $(BUILD)/san/libattention.a -lcmocka -lcjson $(LDLIBS_CORE)

deps:
	./scripts/ensure-deps.sh

# The test binaries find tests/vectors relative to the repository root.
test-native: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$$t; done

test-sanitize: $(SAN_TESTS)
	@set -e; for t in $(SAN_TESTS); do echo "== $$t (ASan+UBSan)"; \
	    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./$$t; done

test-cli: $(BUILD)/attn
	./tests/cli/run.sh
	node --test tests/cli/

wasm:
	./build.sh

# web/lib/facts.js (committed): what the JS API shares with the C library,
# written from the library's tables by scripts/gen-facts.c. Run after
# changing a kind, a field, a task, a setting, a status code or a layout in
# src/kernels/wasm_layout.h; tests/wasm/facts.test.mjs fails until then.
$(BUILD)/gen-facts: scripts/gen-facts.c $(BUILD)/libattention.a $(LIB_HDR)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(BUILD)/libattention.a $(LDLIBS_CORE)

facts: $(BUILD)/gen-facts
	./$(BUILD)/gen-facts > web/lib/facts.js.tmp && mv web/lib/facts.js.tmp web/lib/facts.js

# relaxed.test.mjs runs the relaxed-SIMD builds: again with the flag Node
# 20 needs, where this Node knows it (elsewhere its tests say they skip).
RELAXED_FLAG = $(shell node --experimental-wasm-relaxed-simd -e '' 2>/dev/null && echo --experimental-wasm-relaxed-simd)
# The same bad problems through build/attn, the JS API and Python: the
# same message from each (tests/bindings/messages.test.mjs).
test-bindings: wasm $(BUILD)/attn $(BUILD)/libattention.so
	node --test tests/bindings/

# Two files at a time, the longest first (scripts/run-tests.mjs).
WASM_LONGEST = tests/wasm/trainer.test.mjs tests/wasm/steps.test.mjs tests/wasm/limits.test.mjs \
    tests/wasm/native.test.mjs tests/wasm/parallel.test.mjs
test-wasm: wasm $(BUILD)/attn $(BUILD)/gen-facts
	node scripts/run-tests.mjs $(WASM_LONGEST) \
	    $(filter-out $(WASM_LONGEST) tests/wasm/relaxed.test.mjs,$(wildcard tests/wasm/*.test.mjs))
	node $(RELAXED_FLAG) --test tests/wasm/relaxed.test.mjs

# KaTeX's built files, copied from node_modules (after npm ci) into web/vendor/katex/,
# the formulas typeset in advance, the walkthrough's examples as the native
# engine writes them (web/dist/walkthroughs/, scripts/build-walkthroughs.mjs:
# the first screen before the WebAssembly engine, every example without it),
# the page's bundles that index.html runs and the shipped model it serves (web/dist/page/, web/dist/models/,
# scripts/build-page.mjs: run it again after editing a module of the page),
# and the walkthrough's first screen drawn from them into index.html
# (scripts/build-first-screen.mjs, in chromium).
vendor: $(BUILD)/attn
	node scripts/vendor.mjs
	node scripts/build-walkthroughs.mjs
	node scripts/build-page.mjs
	node scripts/build-first-screen.mjs

# Regenerates web/presets.json after tests/vectors/tutorials.json changes.
presets:
	node scripts/make-presets.mjs

serve: wasm vendor element
	node scripts/serve.mjs web $${PORT:-8000}

# The <attention-walkthrough> custom element as one classic script, with the
# engine beside it: web/dist/ (scripts/build-element.mjs; not committed).
element: wasm vendor
	node scripts/build-element.mjs

# The walkthrough as H5P content for an LMS: build/attention-walkthrough.h5p
# (scripts/build-h5p.mjs), the element's self-contained script inside.
h5p: element
	node scripts/build-h5p.mjs

# tests/browser/ holds the one-file page's and the H5P package's tests too,
# hence `single` and `h5p`. Two files at a time, the longest first
# (scripts/run-tests.mjs): a file mostly waits on one page, so two take
# about half the time (docs/development.md), and the longest started last
# ran alone for its last minutes while the other core idled.
BROWSER_LONGEST = $(addprefix tests/browser/,walkthrough.test.mjs trainer.test.mjs sections.test.mjs \
    a11y.test.mjs first-screen.test.mjs touch.test.mjs)
BROWSER_TESTS = $(BROWSER_LONGEST) $(filter-out $(BROWSER_LONGEST),$(wildcard tests/browser/*.test.mjs))
test-browser: wasm vendor single element h5p
	node scripts/run-tests.mjs $(BROWSER_TESTS)

# The learner's checks in Firefox ESR and WebKitGTK (tests/engines/; the
# one-file page's among them, hence `single`). ENGINE=firefox or webkit for one.
test-engines: wasm vendor single
	node --test tests/engines/*.test.mjs

# The whole page as one file that works from disk with no network:
# build/attention.html (scripts/build-single.mjs, within its BUDGET_BYTES).
single: wasm
	node scripts/build-single.mjs

test-single: single
	node --test tests/browser/single-file.test.mjs

# The suites of `make test`, run by scripts/run-suites.sh: each to its end
# whatever the others did, every suite's result listed at the end.
SUITES = lint test-layers test-docs test-native test-sanitize test-cli test-wasm test-browser \
    test-engines test-dist test-python test-bindings test-fuzz

# What the suites run is built first, on both cores; the suites then run
# two at a time, the browser suite alone (scripts/run-suites.sh), with the
# page's builds marked done (make -o), so that no suite rewrites a file
# another suite is reading.
BUILT_FOR_SUITES = wasm vendor single element h5p python-package

test: deps
	$(MAKE) -j2 $(TESTS) $(SAN_TESTS) $(BUILD)/attn $(FUZZ_BIN) $(FUZZ_SEEDS) $(BUILT_FOR_SUITES)
	SUITE_MAKEFLAGS="$(BUILT_FOR_SUITES:%=-o %)" ./scripts/run-suites.sh $(SUITES)

# ---- Python (python/, the package attention_explainer) ----
# `make python-package` puts the shared library, the element's
# self-contained notebook script and the presets (whose ids show() checks)
# beside the package's modules, where
# `pip install ./python` picks them up. `make test-python` installs it,
# offline, into a virtual environment on Debian's Python (PEP 668 keeps the
# system one for Debian), runs its tests with Debian's pytest, executes the
# example notebook with jupyter nbconvert and opens the HTML in chromium.
PYTHON  ?= /usr/bin/python3
PY_VENV := $(BUILD)/python-venv
PY_PKG  := python/attention_explainer

python-package: shared element
	cp $(BUILD)/libattention.so $(PY_PKG)/libattention.so
	cp web/dist/attention-notebook.js $(PY_PKG)/attention-notebook.js
	cp web/presets.json $(PY_PKG)/presets.json

test-python: python-package
	rm -rf $(PY_VENV) $(BUILD)/python
	$(PYTHON) -m venv --system-site-packages $(PY_VENV)
	$(PY_VENV)/bin/pip install --quiet --no-build-isolation --no-index ./python
	cd $(BUILD) && python-venv/bin/python -m pytest -q -p no:cacheprovider ../python/tests
	$(PY_VENV)/bin/python -m ipykernel install --sys-prefix --name attention-explainer >/dev/null
	$(PY_VENV)/bin/python -m nbconvert --execute --to html \
	    --ExecutePreprocessor.kernel_name=attention-explainer \
	    --output-dir $(BUILD)/python python/examples/walkthrough.ipynb
	node --test tests/python/

# ---- Lint and format ----
# C is formatted by clang-format (.clang-format, Debian's clang-format 14):
# `make format` rewrites the files, `make lint` fails on any difference. The
# JavaScript is linted by ESLint (eslint.config.js: its recommended rules and
# lines of at most 120 columns). Every C file git knows, so new ones are in.
C_FORMATTED = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

lint:
	@echo "clang-format --dry-run -Werror <every C file git knows>"
	@clang-format --dry-run -Werror $(C_FORMATTED)
	node_modules/.bin/eslint --max-warnings 0 .

format:
	clang-format -i $(C_FORMATTED)

# Dependencies point one way (ARCHITECTURE.md): no upward include, call
# (read from the objects' symbols) or import, no cycle; ARCHITECTURE.md
# names every C file.
test-layers: $(LIB_OBJ) $(CLI_OBJ)
	node scripts/check-layers.mjs
	node --test tests/layers/

# Every relative link in README.md, CHANGES.md, ARCHITECTURE.md and docs/
# names a file and heading that exist; README.md stays within 250 lines.
test-docs:
	node --test tests/docs/

bench: lib shared wasm
	./bench/run.sh

# `make model`: retrains the shipped model, models/kjv-genesis, from scratch
# (the same seed writes the same weights, byte for byte) and writes its card.
model: $(BUILD)/attn
	node scripts/make-model.mjs

# `make bench-ab BASE=<commit>`: the engine's own timings against BASE's,
# alternating (ROUNDS=3 rounds): is a change within noise?
bench-ab:
	./bench/ab.sh $(BASE)

clean:
	rm -rf $(BUILD)

# The npm package (types checked, packed, installed offline in a scratch
# project) and `make install` (a C program built with pkg-config).
test-dist: lib shared cli wasm
	node --test tests/dist/*.test.mjs

# Installs under $(DESTDIR)$(PREFIX): the static and shared libraries, the
# header, attention.pc for pkg-config, a CMake config package
# (find_package(attention CONFIG), target attention::attention) and
# build/attn as bin/attn. `make uninstall` with the same PREFIX and DESTDIR
# removes exactly these files.
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^  "version": "\([^"]*\)",$$/\1/p' package.json)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
LIBDIR  := $(DESTDIR)$(PREFIX)/lib
CMAKEDIR := $(LIBDIR)/cmake/attention
INSTALLED := $(LIBDIR)/libattention.a $(LIBDIR)/libattention.so \
             $(LIBDIR)/libattention.so.$(SOVERSION) \
             $(LIBDIR)/libattention.so.$(VERSION) \
             $(DESTDIR)$(PREFIX)/include/attention.h \
             $(LIBDIR)/pkgconfig/attention.pc \
             $(CMAKEDIR)/attentionConfig.cmake \
             $(CMAKEDIR)/attentionConfigVersion.cmake \
             $(DESTDIR)$(PREFIX)/bin/attn

install: $(BUILD)/libattention.a $(BUILD)/libattention.so $(BUILD)/attn
	install -d $(LIBDIR)/pkgconfig $(CMAKEDIR) $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(BUILD)/libattention.a $(LIBDIR)/libattention.a
	install -m 755 $(BUILD)/libattention.so $(LIBDIR)/libattention.so.$(VERSION)
	ln -sf libattention.so.$(VERSION) $(LIBDIR)/libattention.so.$(SOVERSION)
	ln -sf libattention.so.$(SOVERSION) $(LIBDIR)/libattention.so
	install -m 644 src/attention.h $(DESTDIR)$(PREFIX)/include/attention.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    scripts/attention.pc.in > $(LIBDIR)/pkgconfig/attention.pc
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOVERSION@|$(SOVERSION)|g' \
	    cmake/attentionConfig.cmake.in > $(CMAKEDIR)/attentionConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' \
	    cmake/attentionConfigVersion.cmake.in > $(CMAKEDIR)/attentionConfigVersion.cmake
	install -m 755 $(BUILD)/attn $(DESTDIR)$(PREFIX)/bin/attn

uninstall:
	rm -f $(INSTALLED)
	-rmdir $(CMAKEDIR) $(LIBDIR)/cmake 2>/dev/null || true

# ---- Fuzzing (fuzz/*.c, libFuzzer) ----
# Each target links the library built with clang for libFuzzer, ASan and
# UBSan. `make fuzz` runs each for FUZZ_SECONDS (default 90, so about nine
# minutes for the six), keeping what it finds in build/fuzz/corpus/<target>/ (and
# a crashing input in build/fuzz/artifacts/); `make test-fuzz`, part of
# `make test`, runs each for FUZZ_SMOKE_SECONDS (default 5) from the seeds.
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 90
FUZZ_SMOKE_SECONDS ?= 5
# FUZZ_RUNS=N: each target runs N inputs instead of FUZZ_SECONDS (the
# campaign: nice -n 19 make fuzz FUZZ_RUNS=10000000).
FUZZ_RUNS ?=
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 $(filter-out -Werror,$(WARN)) -Werror -g -O1 -Isrc -Isrc/cli
FUZZ_TARGETS := problem_json kernels float32 trainer steps_json model_load
FUZZ_LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_BIN := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_SEEDS := $(BUILD)/fuzz/seeds
# -max_len: JSON problems and printed tables up to 1 MiB (what passes a
# limit, and what a ragged array's first rows promise, shows only in large
# inputs; the seeds include a 240 KB ragged one); kernel programs read at
# most a few KB; the trainer reads at most 66 bytes. -timeout: a single
# input may take at most 10 s.
# -len_control=0: steps_json tries labels past the 94 bytes a sentence keeps
# from the start, and the trainer all 8 settings (3 bytes each), not after
# libFuzzer's slow growth of input lengths.
FUZZ_OPTIONS_problem_json := -max_len=1048576 -dict=fuzz/json.dict
FUZZ_OPTIONS_kernels := -max_len=2048
FUZZ_OPTIONS_float32 := -max_len=4096
FUZZ_OPTIONS_trainer := -max_len=128 -len_control=0
FUZZ_OPTIONS_steps_json := -max_len=1024 -len_control=0
# model_load: checkpoints up to 2 MiB (the seeds include one of 1.4 MB),
# their config.json mutated with the JSON dictionary.
FUZZ_OPTIONS_model_load := -max_len=2097152 -dict=fuzz/json.dict

$(BUILD)/fuzz/obj/%.o: src/%.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/fuzz_problem_json: fuzz/fuzz_problem_json.c $(JSON_ADAPTER_SRC) src/cli/problem_json.h $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer $< $(JSON_ADAPTER_SRC) \
	    $(FUZZ_LIB_OBJ) -o $@ -lcjson $(LDLIBS_CORE)

$(BUILD)/fuzz/fuzz_steps_json: fuzz/fuzz_steps_json.c fuzz/fuzz_reader.h $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJ) \
	    -o $@ -lcjson $(LDLIBS_CORE)

# kernels, float32, trainer: the library alone.
$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_reader.h $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer $< $(FUZZ_LIB_OBJ) -o $@ $(LDLIBS_CORE)

fuzz-build: $(FUZZ_BIN)

$(FUZZ_SEEDS): fuzz/seed-corpus.mjs tests/vectors/tutorials.json web/presets.json tests/wasm/fixtures/local-vectors.json \
    tests/cli/tiny-model.mjs
	rm -rf $@ && node fuzz/seed-corpus.mjs $@

# run_fuzz TARGET SECONDS: new inputs go to build/fuzz/corpus/TARGET.
define run_fuzz
	@mkdir -p $(BUILD)/fuzz/corpus/$(1) $(BUILD)/fuzz/artifacts
	@echo "== fuzz_$(1) for $(if $(FUZZ_RUNS),$(FUZZ_RUNS) inputs,$(2) s)"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ./$(BUILD)/fuzz/fuzz_$(1) $(FUZZ_OPTIONS_$(1)) \
	    $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(2)) \
	    -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/artifacts/$(1)- \
	    $(BUILD)/fuzz/corpus/$(1) $(FUZZ_SEEDS)/$(1)
endef

# run_fuzz_all SECONDS: each of FUZZ_TARGETS in turn, one recipe line per
# line of run_fuzz (so the first finding stops make).
define run_fuzz_all
$(foreach target,$(FUZZ_TARGETS),$(call run_fuzz,$(target),$(1))
)
endef

fuzz: $(FUZZ_BIN) $(FUZZ_SEEDS)
	$(call run_fuzz_all,$(FUZZ_SECONDS))

test-fuzz: $(FUZZ_BIN) $(FUZZ_SEEDS)
	$(call run_fuzz_all,$(FUZZ_SMOKE_SECONDS))
