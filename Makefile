# Ductile: the two commands of the README contract.
#   make demo   installs what is missing, builds, runs the main example
#   make test   installs what is missing, builds, runs every test (also under ASan+UBSan)
#   make install PREFIX=/opt/ductile [DESTDIR=/stage]   builds, then installs the
#               commands, the daemons, ductile.h, libductile, ductile.pc and the CMake
#               package (docs/user-guide.md, "Installing")
BUILD ?= build
ASAN_BUILD ?= build-asan
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build asan demo test unit clean bench fuzz faults install dos-large
FUZZ_SECONDS ?= 10
# make faults: the fault-injection harness's long form (docs/reliability-harness.md)
FAULT_ROUNDS ?= 200
FAULT_SEED ?= 1
FAULTS ?= controller,nodekill,nodestop,conndrop,diskfull
WORKLOAD ?= rigid,farm,jacobi

all: build

deps:
	@bash scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDUCTILE_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDUCTILE_SANITIZE=ON -DDUCTILE_WERROR=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# The optimised build, installed under $(DESTDIR)$(PREFIX) (cmake --install --prefix: the
# build directory keeps its configuration; ductile.pc is written for PREFIX).
# SLURM_WRAPPERS=1 also installs Slurm's command names (sbatch, squeue, scancel, scontrol,
# sinfo, sacct, srun, salloc, sprio, sshare) as links to ductile, which answers to them
# (docs/slurm-users.md, "Slurm's commands").
SLURM_COMMANDS = sbatch squeue scancel scontrol sinfo sacct srun salloc sprio sshare
install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(abspath $(PREFIX))"
	@if [ "$(SLURM_WRAPPERS)" = 1 ]; then \
	  for c in $(SLURM_COMMANDS); do \
	    ln -sf ductile "$(DESTDIR)$(abspath $(PREFIX))/bin/$$c" && \
	      echo "-- Installing: $(DESTDIR)$(abspath $(PREFIX))/bin/$$c -> ductile"; \
	  done; \
	fi

demo: build
	@bash scripts/demo.sh $(BUILD)

test: build asan
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS)
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz: deps
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

faults: build
	@python3 tests/fault/harness.py --bin $(BUILD)/ductile --rounds $(FAULT_ROUNDS) \
		--seed $(FAULT_SEED) --faults $(FAULTS) --workload $(WORKLOAD) --keep-failed

# make dos-large: issue 34's requests at full size: test_dos_requests on a history of
# 1,000,000 ended jobs (make test uses 300,000), in both cluster modes
DOS_ROWS ?= 1000000
dos-large: build
	@cd $(BUILD) && DUCTILE_DOS_ROWS=$(DOS_ROWS) ctest --output-on-failure \
		-R '^integration(-hosts)?/test_dos_requests$$'

bench: build
	@bash bench/sim/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
