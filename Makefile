# ktimers: port of the ktimers subsystem to Linux 6.12, tested with KUnit under QEMU.
# The logic lives in tools/ktimers.py; this file only strings the steps together.
# `make help` lists the targets and variables.

PYTHON  ?= python3
ARCHES  ?= i386 arm
# `make test ARCH=arm` runs one arch.
ifneq ($(strip $(ARCH)),)
ARCHES  := $(ARCH)
endif
# Test configurations (kunit_configs/matrix): `make test CONFIG=up` runs one,
# CONFIGS="default up" several; neither runs those marked `by_default = yes`.
CONFIG  ?=
CONFIGS ?=
ifneq ($(strip $(CONFIG)),)
CONFIGS := $(CONFIG)
endif
TREE    ?= build/linux
TIMEOUT ?= 1200
# `make bench`: boots per configuration; the report gives the median and range of the per-boot ratios
BOOTS   ?= 5
FORCE   ?=
# FULL=1: `make selftest` also runs the slow selftests (`run = full` in selftests/plan)
FULL    ?=
RESULTS := build/results
# Configurations of kunit_configs/matrix that `make extended` runs (not by_default, for CI's time)
EXTENDED_CONFIGS := up kasan

KTIMERS     := $(PYTHON) tools/ktimers.py
FORCE_FLAG  := $(if $(filter 1 yes true,$(FORCE)),--force)
FULL_FLAG   := $(if $(filter 1 yes true,$(FULL)),--full)
CONFIG_FLAGS := $(foreach c,$(CONFIGS),--config $(c))
KUNIT_FLAGS := --tree $(TREE) $(CONFIG_FLAGS) --timeout $(TIMEOUT)
TOOLS_COUNTS := $(RESULTS)/tools-tests.json
STYLE_RESULT := $(RESULTS)/style.json
REPORT_RESULT := $(RESULTS)/report.json

# The guest selftests boot the `default` KUnit image: `make test` runs them when it runs
# that configuration (always, unless CONFIG=/CONFIGS= leave `default` out).
RUN_SELFTESTS := $(if $(strip $(CONFIGS)),$(filter default,$(CONFIGS)),yes)
SELFTEST_SUMMARY := $(if $(RUN_SELFTESTS),--selftests)
# `make report` / `make baseline`: CONFIG=/CONFIGS= narrow them; without, report shows every
# configuration recorded (or in the baseline) and baseline rewrites the `make test` ones.
REPORT_SELECTION := $(if $(strip $(CONFIGS)),$(CONFIG_FLAGS) $(SELFTEST_SUMMARY),--all)

# Kernel builds use every CPU already; never run two steps at once.
.NOTPARALLEL:
.DEFAULT_GOAL := all
.PHONY: all test extended quick selftest check tools-test style deps pin tree apply kunit summary report baseline export-kcidb \
	soak sanitizers leakcheck repeat breaks import series series-check bench bench-report mutants footprint clean \
	distclean help

# `make` and `make test` log each step's time here (tools/common/steps.py); the summary prints the table.
STEP_LOG := $(abspath $(RESULTS)/steps.jsonl)
all test extended: export KTIMERS_STEP_LOG := $(STEP_LOG)

# `make` runs the `default` configuration unless CONFIG=/CONFIGS= say otherwise; `make test` every
# configuration the matrix marks by_default.
MAIN_CONFIG_FLAGS := $(if $(strip $(CONFIGS)),$(CONFIG_FLAGS),--config default)

## all: deps + tree + apply + the `default` configuration (or CONFIGS) per arch in ARCHES + summary (default)
all:
	@rm -f $(STEP_LOG)
	@$(KTIMERS) deps $(ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) $(MAIN_CONFIG_FLAGS) --timeout $(TIMEOUT) $(ARCHES) || true
	@$(KTIMERS) summary $(MAIN_CONFIG_FLAGS) $(ARCHES)

## test: CI gate: tools tests + style + kunit per arch and configuration + guest selftests + regression report + summary (last line: N passed, N failed)
# Test steps never stop the recipe: summary judges them all, so its closing line stays last.
# `kunit` loops: for each arch, the configurations in matrix order (default builds,
# lowres only boots default's build dir, up builds its own). Each run is recorded in the
# results database; `report` compares the runs just made with the previous ones and
# results/baseline.json, and summary counts its regressions.
test:
	@rm -f $(STEP_LOG)
	@$(KTIMERS) deps $(ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@rm -f $(TOOLS_COUNTS) $(STYLE_RESULT) $(REPORT_RESULT)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@# after apply: the Kconfig checks of the tools' tests need the series in the tree
	@$(KTIMERS) tools-test --quiet --record $(TOOLS_COUNTS) || true
	@$(KTIMERS) style --tree $(TREE) --record $(STYLE_RESULT) $(ARCHES) || true
	@$(KTIMERS) kunit $(KUNIT_FLAGS) $(ARCHES) || true
	$(if $(RUN_SELFTESTS),@$(KTIMERS) selftest --tree $(TREE) $(ARCHES) || true)
	@$(KTIMERS) report $(CONFIG_FLAGS) $(SELFTEST_SUMMARY) --record $(REPORT_RESULT) $(ARCHES) || true
	@$(KTIMERS) summary $(CONFIG_FLAGS) $(SELFTEST_SUMMARY) --tools-tests $(TOOLS_COUNTS) --style $(STYLE_RESULT) \
		--report $(REPORT_RESULT) $(ARCHES)

## extended: the configurations outside the CI gate (`up` on each arch, `kasan` on ARM): `make test CONFIGS="up kasan"`
# Each is a cold kernel build of its own (8-11 minutes here); CI leaves them out for time, their
# last results stay in results/baseline.json (docs/running.md#what-ci-runs).
extended:
	@$(MAKE) --no-print-directory test CONFIGS="$(EXTENDED_CONFIGS)"

## quick: the edit-test loop: apply kernel/, rebuild incrementally and run the suites of the `default` configuration on ARCH (default i386) only
# No selftests, style or other configurations: `make test` remains the gate.
QUICK_ARCHES := $(if $(strip $(ARCH)),$(ARCH),i386)
quick:
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config default --timeout $(TIMEOUT) $(QUICK_ARCHES) || true
	@$(KTIMERS) summary --config default $(QUICK_ARCHES)

## selftest: the kernel's timer selftests in the guest, ktimer path on and off, per arch in ARCHES (builds `default` if needed)
# kunit first: it rebuilds the `default` image if kernel/ changed (and runs its suites, seconds),
# so the guest never boots a stale kernel.
selftest:
	@$(KTIMERS) deps $(ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config default --timeout $(TIMEOUT) $(ARCHES) || true
	@$(KTIMERS) selftest --tree $(TREE) $(FULL_FLAG) $(ARCHES) || true
	@$(KTIMERS) summary --config default --selftests $(ARCHES)

## check: tools tests + style, no boot: about 4 minutes the first time (sparse's build dirs), then 2
check: tools-test style

## tools-test: the tools' own unit tests (python3 -m unittest discover -s tools/tests -v)
tools-test:
	@$(KTIMERS) tools-test

## style: checkpatch --strict --codespell on kernel/patches, kernel-doc on the new files, sparse and W=1 on them per arch in ARCHES
style:
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) style --tree $(TREE) $(ARCHES)

## deps: install missing Debian packages for ARCHES (needs root)
deps:
	@$(KTIMERS) deps $(ARCHES)

## pin: rewrite kernel/base.pin from the installed linux-source-6.12 package
pin:
	@$(KTIMERS) pin --write

## tree: extract the pinned kernel into TREE (once; re-extracts if the tarball changed)
tree:
	@$(KTIMERS) tree --tree $(TREE)

## apply: git am kernel/patches onto base in TREE, branch ktimers (FORCE=1 drops local edits)
apply:
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)

## import: rewrite kernel/patches (and the new files under kernel/) from the commits base..HEAD of TREE
import:
	@$(KTIMERS) import --tree $(TREE)

## series: apply kernel/, then git format-patch the series with a cover letter into build/series/
series:
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) series --tree $(TREE)

## series-check: make series, then per patch: checkpatch --strict --codespell, kernel-doc, i386 builds with KTIMERS=y (+ sparse, W=1) and =n; git am and send-email --dry-run of the whole
series-check:
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) series-check --tree $(TREE)

## kunit: apply kernel/, then build, boot and run the KUnit suites for each arch in ARCHES and configuration in CONFIGS
kunit:
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit $(KUNIT_FLAGS) $(ARCHES)

## summary: print the results table for ARCHES x CONFIGS; non-zero exit on any failure
summary:
	@$(KTIMERS) summary $(CONFIG_FLAGS) $(ARCHES)

## footprint: what the `default` kernel of each arch in ARCHES compiles: objects per directory, largest first (after a build; docs/running.md#what-each-build-compiles)
footprint:
	@$(KTIMERS) footprint $(foreach arch,$(ARCHES),build/kunit/$(arch)-default)

## report: latest run per arch and configuration vs the previous run and results/baseline.json; HTML in build/results/report.html; non-zero exit on any regression
report:
	@$(KTIMERS) report $(REPORT_SELECTION) $(ARCHES)

## baseline: rewrite results/baseline.json from the latest recorded runs of ARCHES x CONFIGS (and the selftests)
baseline:
	@$(KTIMERS) baseline $(CONFIG_FLAGS) $(SELFTEST_SUMMARY) $(ARCHES)

## export-kcidb: write the results database as KCIDB v4 JSON (build/results/kcidb.json)
export-kcidb:
	@$(KTIMERS) export-kcidb

# The long runs, not in `make test`. Each arch defaults to the one(s) that make
# sense for it; ARCH= picks another.
SOAK_ARCHES       := $(if $(strip $(ARCH)),$(ARCH),i386)
SANITIZER_ARCHES  := $(if $(strip $(ARCH)),$(ARCH),arm x86_64)
LEAK_ARCHES       := $(if $(strip $(ARCH)),$(ARCH),i386)
REPEAT_ARCHES     := $(if $(strip $(ARCH)),$(ARCH),i386)
REPEAT_CONFIG     := $(if $(strip $(CONFIG)),$(CONFIG),repeat-realclock)
# BOOTS (default 5) is the benchmark's; repeat takes it only from the command line
REPEAT_BOOTS      := $(if $(filter command line environment,$(origin BOOTS)),$(BOOTS),100)
# The long runs get an hour per QEMU run unless TIMEOUT= says otherwise.
LONG_TIMEOUT      := $(if $(filter 1200,$(TIMEOUT)),3600,$(TIMEOUT))

## soak: the long soak on ARCH (default i386): 4 CPUs, stress and fuzz 25x longer; fails on any lost or duplicated expiry
soak:
	@$(KTIMERS) deps $(SOAK_ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config soak --timeout $(LONG_TIMEOUT) $(SOAK_ARCHES) || true
	@$(KTIMERS) summary --config soak $(SOAK_ARCHES)

## sanitizers: the suites under KASAN (arm, x86_64) and KCSAN (x86_64); ARCH= narrows
sanitizers:
	@$(KTIMERS) deps $(SANITIZER_ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config kasan --config kcsan --timeout $(LONG_TIMEOUT) $(SANITIZER_ARCHES) || true
	@$(KTIMERS) summary --config kasan --config kcsan $(SANITIZER_ARCHES)

## leakcheck: kmemleak on ARCH (default i386): the KUnit suites, then both selftest columns on that kernel with a kmemleak scan after the programs; any unreferenced object fails
leakcheck:
	@$(KTIMERS) deps $(LEAK_ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config kmemleak --timeout $(TIMEOUT) $(LEAK_ARCHES) || true
	@status=0; $(KTIMERS) summary --config kmemleak $(LEAK_ARCHES) || status=1; \
	$(KTIMERS) selftest --tree $(TREE) --config kmemleak $(LEAK_ARCHES) || status=1; exit $$status

## repeat: boot one configuration (CONFIG, default repeat-realclock) BOOTS times (default 100) in a row on ARCH (default i386): the rate of boots that do not pass, their consoles kept under build/findings/repeat/; SELFTESTS=1 boots the guest programs (PROGRAMS="a b", default all) on CONFIG's image in both columns instead, and gives the deepest stack per column
repeat:
	@$(KTIMERS) deps $(REPEAT_ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
ifeq ($(SELFTESTS),1)
	@$(KTIMERS) kunit --tree $(TREE) --config $(REPEAT_CONFIG) $(REPEAT_ARCHES)
	@$(KTIMERS) repeat --tree $(TREE) --config $(REPEAT_CONFIG) --boots $(REPEAT_BOOTS) --selftests \
		--programs "$(PROGRAMS)" $(REPEAT_ARCHES)
else
	@$(KTIMERS) repeat --tree $(TREE) --config $(REPEAT_CONFIG) --boots $(REPEAT_BOOTS) $(REPEAT_ARCHES)
endif

## breaks: the project's own user-space programs booted with every expectation inverted (KT_BREAK=1), both columns, per arch in ARCHES: each case must fail (a test must be able to fail)
breaks:
	@$(KTIMERS) deps $(ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) kunit --tree $(TREE) --config default --timeout $(TIMEOUT) $(ARCHES) || true
	@$(KTIMERS) breaks --tree $(TREE) $(ARCHES)

## bench: the boot-time benchmark per arch in ARCHES (ARCH=um: native, the primary figures): production-like kernel booted BOOTS times per engine (highres, lowres), ktimers vs hrtimers (also padded to the ktimer element size, and with softirq callbacks) vs timer_list; median and range of the per-boot ratios, event counts; bench.txt, bench.svg, bench.json (figures, not pass/fail)
# Exits non-zero only when a boot did not finish the benchmark (crash, timeout, build error);
# the goals it prints are information.
bench:
	@$(KTIMERS) deps $(ARCHES)
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) bench --tree $(TREE) --timeout $(LONG_TIMEOUT) --boots $(BOOTS) $(ARCHES)

## bench-report: the table, bench.svg and bench.json of the last `make bench` again, from its console logs (no build, no boot)
bench-report:
	@$(KTIMERS) bench --report-only $(ARCHES)

# Mutation testing, not in `make test` or CI (about a minute per mutant): one arch, i386 unless ARCH=
# says otherwise; MUTANTS="03 17" runs only those; TIMEOUT is per boot, 600 s unless given.
MUTANT_ARCH    := $(if $(strip $(ARCH)),$(ARCH),i386)
MUTANTS        ?=
MUTANT_TIMEOUT := $(if $(filter 1200,$(TIMEOUT)),600,$(TIMEOUT))

## mutants: mutation testing (not in CI): each mutants/*.patch in turn applied to TREE, rebuilt and tested on ARCH (default i386; MUTANTS="03 17" for some), TREE restored; table, score, build/results/mutants.json; non-zero exit on any survivor, stale or stillborn mutant
mutants:
	@$(KTIMERS) tree --tree $(TREE)
	@$(KTIMERS) apply --tree $(TREE) $(FORCE_FLAG)
	@$(KTIMERS) mutants --tree $(TREE) --arch $(MUTANT_ARCH) --timeout $(MUTANT_TIMEOUT) $(if $(strip $(MUTANTS)),--only $(MUTANTS))

## clean: remove kunit and series-check build dirs, the mutant runs' logs, the exported series and results, the results database and its stored logs too (keeps the kernel tree)
clean:
	rm -rf build/kunit build/results build/series build/series-check build/mutants
	@if [ -d $(TREE)/.git ]; then git -C $(TREE) worktree prune; fi

## distclean: remove everything under build/, including the kernel tree
distclean:
	rm -rf build

## help: this list
help:
	@echo "Targets:"
	@sed -n 's/^## \([a-z-]*\): /  \1\t/p' $(MAKEFILE_LIST) | expand -t 16
	@echo
	@echo "Variables:"
	@echo "  ARCH=<arch>      run one arch (default ARCHES='$(ARCHES)'; also x86_64 arm64 riscv um)"
	@echo "  CONFIG=<name>    run one configuration of kunit_configs/matrix (listed below)"
	@echo "  CONFIGS='a b'    run several (default: those with yes under 'make test' below)"
	@echo "  TIMEOUT=<s>      seconds allowed for the tests to run in QEMU (default 1200; soak, sanitizers, bench: 3600)"
	@echo "  TREE=<dir>       kernel tree (default build/linux)"
	@echo "  FORCE=1          let apply discard local modifications in the tree"
	@echo "  FULL=1           make selftest: also the slow selftests (run = full in selftests/plan)"
	@echo "  MUTANTS='03 17'  make mutants: only these mutants of mutants/ (default: all)"
	@echo "  BOOTS=<n>        make bench: boots per configuration (default 5); median and range of the per-boot ratios"
	@echo "                   make repeat: boots per arch (default 100)"
	@echo "  SELFTESTS=1      make repeat: boot the guest programs on CONFIG's image, both columns, not its KUnit suites"
	@echo "  PROGRAMS='a b'   make repeat SELFTESTS=1: only these programs of selftests/plan (default: all)"
	@echo
	@echo "Configurations (kunit_configs/matrix):"
	@$(KTIMERS) matrix | sed 's/^/  /'
