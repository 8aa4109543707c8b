# simhash: PGXS build of the extension, its C++ core, unit tests and CLI tools.
EXTENSION   = simhash
EXTVERSION  = 1.2
MODULE_big  = simhash

PG_CONFIG  ?= pg_config

# The module: the C shim (src/*.c and its role folders), the index access
# method (src/am/) and the C++ core (src/core/ and its role folders).  The CLI
# in src/cli/ links the core only.  Pieces of the install script of the
# current version live in src/install/ and are concatenated in name order;
# each has a number of its own (the build refuses two with one number).
SHIM_DIRS   = src src/type src/fingerprint src/batch src/am
CORE_DIRS   = src/core src/core/fingerprint src/core/search
C_SRCS      = $(sort $(wildcard $(addsuffix /*.c,$(SHIM_DIRS))))
CORE_SRCS   = $(sort $(wildcard $(addsuffix /*.cpp,$(CORE_DIRS))))
CORE_HDRS   = $(wildcard $(addsuffix /*.h,$(CORE_DIRS)) $(addsuffix /*.hpp,$(CORE_DIRS)))
CORE_INC    = $(addprefix -I,$(CORE_DIRS))
CORE_OBJS   = $(CORE_SRCS:.cpp=.o)
OBJS        = $(C_SRCS:.c=.o) $(CORE_OBJS)
SQL_PARTS   = $(sort $(wildcard src/install/*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
# Install scripts of released versions, frozen, and the update scripts
# between versions (ALTER EXTENSION simhash UPDATE).
DATA        = $(wildcard src/install/upgrade/$(EXTENSION)--*.sql)

# The tests: pg_regress in sql/ and expected/ (where PGXS and contrib keep
# them); everything else under test/: isolation specs in test/specs/ with
# their expected output in test/expected/ (pg_isolation_regress reads both
# from its --inputdir), TAP in test/t/, the core's unit tests in test/unit/,
# the fuzz targets in test/fuzz/ and shell tests in test/*_test.sh.
REGRESS     := $(sort $(notdir $(basename $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)
ISOLATION   := $(sort $(notdir $(basename $(wildcard test/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test --load-extension=$(EXTENSION)
TAP_TESTS   := $(if $(wildcard test/t/*.pl),1)
# PGXS's prove runs t/*.pl unless PROVE_TESTS names the files.
PROVE_TESTS ?= $(sort $(wildcard test/t/*.pl))

CORE_LIBS   = -lxxhash -licuuc -licudata -lgumbo
SHLIB_LINK += $(CORE_LIBS) -lstdc++
# -MMD -MP: the compiler writes each object's header dependencies beside it
# (src/am/scan.d), included below, so a header edit rebuilds its includers only.
PG_CPPFLAGS = -Isrc $(CORE_INC) -DSIMHASH_EXTVERSION='"$(EXTVERSION)"' -MMD -MP
# Warnings are errors only when developing or in CI (make WERROR=1; make test
# and .ci/run set it): a newer compiler's new warning must not break a user's
# make install.
WERROR     ?= 0
WERROR_FLAG = $(if $(filter 1 yes true,$(WERROR)),-Werror)
PG_CFLAGS   = -Wall -Wextra $(WERROR_FLAG) -Wno-unused-parameter -Wno-missing-field-initializers -Wno-cast-function-type
PG_CXXFLAGS = -std=c++17 -Wall -Wextra $(WERROR_FLAG) -fPIC

# No LLVM bitcode: the JIT gains nothing from our functions and it would need clang.
override with_llvm = no

TOOLS       = $(patsubst %.cpp,%,$(wildcard src/cli/simhash-*.cpp))
EXTRA_CLEAN = .pg-build $(DATA_built) $(OBJS:.o=.d) $(TOOLS) test/unit/unit_tests test/unit/*.o test/unit/unit_tests_asan test/unit/asan src/cli/*.o tmp_install tmp_check results regression.* output_iso log tmp_valgrind

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

all: $(TOOLS)

$(DATA_built): $(SQL_PARTS) simhash.control
	@dup=$$(printf '%s\n' $(notdir $(SQL_PARTS)) | sed 's/_.*//' | uniq -d); \
	if [ -n "$$dup" ]; then echo "src/install/: two pieces share the number" $$dup >&2; exit 1; fi
	( echo '-- complain if script is sourced in psql, rather than via CREATE EXTENSION'; \
	  printf '%s\n' '\echo Use "CREATE EXTENSION simhash" to load this file. \quit'; \
	  cat $(SQL_PARTS) ) > $@

# Objects built against another server (make PG_CONFIG=...: another major, or
# the assert-enabled build) are rebuilt, never mixed: .pg-build names the
# server the objects in this tree were built for.
PG_BUILD_ID := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server)
$(shell test "`cat .pg-build 2>/dev/null`" = "$(PG_BUILD_ID)" || echo "$(PG_BUILD_ID)" > .pg-build)
$(OBJS): .pg-build

# The headers each object was built from, as the compiler listed them.
-include $(OBJS:.o=.d)

# ---- CLI tools (pure core, no PostgreSQL) ----------------------------------
TOOL_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra $(WERROR_FLAG) $(CORE_INC) -pthread
src/cli/simhash-%: src/cli/simhash-%.cpp $(wildcard src/cli/*.hpp) $(CORE_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) -DSIMHASH_VERSION='"$(EXTVERSION)"' -o $@ $< $(CORE_OBJS) $(CORE_LIBS)

# The tools go next to the server's programs ($(pg_config --bindir)); the
# directory may not exist yet under a DESTDIR (a package build).
install: install-tools
install-tools: $(TOOLS)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(TOOLS) '$(DESTDIR)$(bindir)/'

uninstall: uninstall-tools
uninstall-tools:
	rm -f $(addprefix '$(DESTDIR)$(bindir)'/,$(notdir $(TOOLS)))

# ---- unit tests of the core (GoogleTest) -----------------------------------
# Each test file is an object of its own, so that make -j compiles them side
# by side (one compiler run over all of them was the build's longest step).
UNIT_SRCS = $(sort $(wildcard test/unit/*_test.cpp))
UNIT_OBJS = $(UNIT_SRCS:.cpp=.o)
$(UNIT_OBJS): %.o: %.cpp $(CORE_HDRS)
	$(CXX) $(TOOL_CXXFLAGS) -c -o $@ $<
test/unit/unit_tests: $(UNIT_OBJS) $(CORE_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) -o $@ $(UNIT_OBJS) $(CORE_OBJS) $(CORE_LIBS) -lgtest -lgtest_main

unit: test/unit/unit_tests
	./test/unit/unit_tests

# The same tests on a core built with AddressSanitizer and UBSan, each
# source an object of its own under test/unit/asan/ (make -j compiles them
# side by side).
ASAN_FLAGS = -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_OBJS  = $(patsubst %.cpp,test/unit/asan/%.o,$(UNIT_SRCS) $(CORE_SRCS))
test/unit/asan/%.o: %.cpp $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(TOOL_CXXFLAGS) $(ASAN_FLAGS) -c -o $@ $<
test/unit/unit_tests_asan: $(ASAN_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) $(ASAN_FLAGS) -o $@ $(ASAN_OBJS) $(CORE_LIBS) -lgtest -lgtest_main

unit-asan: test/unit/unit_tests_asan
	./test/unit/unit_tests_asan

# ---- style and static analysis ---------------------------------------------
# C++ (core, CLI, tests, fuzzers): .clang-format and .clang-tidy at the top.  The
# C shim, index access method included: src/.clang-format (PostgreSQL's layout
# as near as clang-format comes) and src/.clang-tidy.
CXX_STYLE_FILES = $(CORE_SRCS) $(filter %.hpp,$(CORE_HDRS)) $(UNIT_SRCS) $(wildcard src/cli/*.cpp src/cli/*.hpp) $(wildcard test/fuzz/*.cpp test/fuzz/*.hpp)
C_STYLE_FILES   = $(wildcard $(addsuffix /*.c,$(SHIM_DIRS)) $(addsuffix /*.h,$(SHIM_DIRS)))
format:
	clang-format -i $(CXX_STYLE_FILES) $(C_STYLE_FILES)

format-check:
	clang-format --dry-run --Werror $(CXX_STYLE_FILES) $(C_STYLE_FILES)

# cppcheck does not see that sh::guard (boundary.hpp) catches what the lambda
# it runs throws, inside the noexcept entry points of html.cpp and
# neardup_batch.cpp.
# Each file is its own clang-tidy target, so that make -j runs them side by
# side (make test runs lint with -j beside the sanitizer build).
LINT_TIDY_CXX = $(addprefix lint-tidy/,$(CORE_SRCS))
LINT_TIDY_C   = $(addprefix lint-tidy/,$(filter %.c,$(C_STYLE_FILES)))
lint: lint-cppcheck-cxx lint-cppcheck-c $(LINT_TIDY_CXX) $(LINT_TIDY_C)

lint-cppcheck-cxx:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--std=c++17 --language=c++ $(CORE_INC) --suppress=missingIncludeSystem \
		--suppress=throwInNoexceptFunction:src/core/fingerprint/html.cpp --suppress=throwInNoexceptFunction:src/core/search/neardup_batch.cpp $(CORE_SRCS) $(wildcard src/cli/*.cpp)

lint-cppcheck-c:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--std=c11 --language=c -Isrc $(CORE_INC) --suppress=missingIncludeSystem $(filter %.c,$(C_STYLE_FILES))

$(LINT_TIDY_CXX): lint-tidy/%:
	clang-tidy --quiet $* -- -std=c++17 $(CORE_INC)

$(LINT_TIDY_C): lint-tidy/%:
	clang-tidy --quiet $* -- -I$(includedir_server) -Isrc $(CORE_INC)

.PHONY: lint-cppcheck-cxx lint-cppcheck-c $(LINT_TIDY_CXX) $(LINT_TIDY_C)

# ---- the two commands of the README ----------------------------------------
test:
	bash test/run-all.sh

# Benchmarks and the fingerprint quality report (bench/REPORT.md); not part of test.
bench:
	bash bench/run.sh

quality:
	bash bench/quality.sh

.PHONY: bench quality

demo:
	bash tools/demo.sh

.PHONY: unit unit-asan test demo install-tools uninstall-tools format format-check lint

# ---- a release tarball ------------------------------------------------------
# make dist: simhash-VERSION.tar.gz (VERSION from META.json, SemVer) of the
# committed tree at DIST_REF (default HEAD), made by git archive; uncommitted
# changes are not in it.  The tarball names its commit (git get-tar-commit-id
# reads it).  test/dist_test.sh builds one, installs it and runs installcheck.
DIST_REF ?= HEAD
DIST_DIR ?= .
dist:
	@v=$$(git show '$(DIST_REF):META.json' | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])') || exit 1; \
	c=$$(git rev-parse --short '$(DIST_REF)^{commit}') || exit 1; \
	git archive --format=tar.gz --prefix=$(EXTENSION)-$$v/ -o '$(DIST_DIR)'/$(EXTENSION)-$$v.tar.gz $$c || exit 1; \
	echo "$(DIST_DIR)/$(EXTENSION)-$$v.tar.gz: $(EXTENSION) $$v at commit $$c"; \
	if [ '$(DIST_REF)' = HEAD ] && ! git diff --quiet HEAD; then echo "(uncommitted changes are not in it)"; fi

.PHONY: dist
EXTRA_CLEAN += $(EXTENSION)-*.tar.gz

# ---- micro-benchmark of the core's text fingerprint (not part of make test) ----
bench/fingerprint_bench: bench/fingerprint_bench.cpp $(CORE_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) -o $@ $< $(CORE_OBJS) $(CORE_LIBS) -lcrypto

bench-core: bench/fingerprint_bench
	./bench/fingerprint_bench

.PHONY: bench-core
EXTRA_CLEAN += bench/fingerprint_bench

# ---- the physical limit: a packed linear scan of the codes (bench/limit.sh) ----
# A bench tool, not the product: tuned for this machine.
bench/packed_scan: bench/packed_scan.cpp
	$(CXX) -std=c++17 -O3 -march=native -Wall -Wextra $(WERROR_FLAG) -o $@ $<

EXTRA_CLEAN += bench/packed_scan

# ---- the server suites once under valgrind memcheck (slow; not part of test) ----
valgrind:
	bash test/valgrind.sh

.PHONY: valgrind

# ---- libFuzzer targets (test/fuzz/; clang-14, not part of the module) --------
# make fuzz runs every target for FUZZ_SECONDS (default 300) each; make test
# runs them for a few seconds (test/fuzz/run.sh).  The core is compiled again
# with clang's coverage and sanitizers into test/fuzz/build/.
FUZZ_CXX      ?= clang++-14
FUZZ_SECONDS  ?= 300
FUZZ_CXXFLAGS  = -std=c++17 -O1 -g -Wall -Wextra -Werror $(CORE_INC) -Isrc/cli -fno-omit-frame-pointer \
                 -fno-sanitize-recover=all
FUZZ_SANITIZE  = address,undefined
FUZZ_CORE_OBJS = $(patsubst src/core/%.cpp,test/fuzz/build/core/%.o,$(CORE_SRCS))
FUZZ_TARGETS   = $(patsubst test/fuzz/%.cpp,test/fuzz/build/%,$(wildcard test/fuzz/fuzz_*.cpp))

test/fuzz/build/core/%.o: src/core/%.cpp $(CORE_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SANITIZE) -c -o $@ $<

test/fuzz/build/fuzz_%: test/fuzz/fuzz_%.cpp test/fuzz/fuzz.hpp $(wildcard src/cli/*.hpp) $(FUZZ_CORE_OBJS)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer,$(FUZZ_SANITIZE) -o $@ $< $(FUZZ_CORE_OBJS) $(CORE_LIBS)

fuzz-build: $(FUZZ_TARGETS)

fuzz: fuzz-build
	bash test/fuzz/run.sh $(FUZZ_SECONDS)

.PHONY: fuzz fuzz-build
EXTRA_CLEAN += test/fuzz/build
