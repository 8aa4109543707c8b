# simhash: PGXS build of the extension, its C++ core, unit tests and CLI tools.
EXTENSION   = simhash
EXTVERSION  = 1.0
MODULE_big  = simhash

PG_CONFIG  ?= pg_config

# Every file under src/ is part of the module; pieces of the install script
# live in src/sql/ and are concatenated in name order.
C_SRCS      = $(sort $(wildcard src/*.c src/am/*.c))
CORE_SRCS   = $(sort $(wildcard src/core/*.cpp))
CORE_OBJS   = $(CORE_SRCS:.cpp=.o)
OBJS        = $(C_SRCS:.c=.o) $(CORE_OBJS)
SQL_PARTS   = $(sort $(wildcard src/sql/*.sql))
DATA_built  = $(EXTENSION)--$(EXTVERSION).sql
DATA        = $(filter-out $(DATA_built),$(wildcard $(EXTENSION)--*--*.sql))

REGRESS     := $(sort $(notdir $(basename $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)
ISOLATION   := $(sort $(notdir $(basename $(wildcard specs/*.spec))))
ISOLATION_OPTS = --load-extension=$(EXTENSION)
TAP_TESTS   := $(if $(wildcard t/*.pl),1)

CORE_LIBS   = -lxxhash -licuuc -licudata -lgumbo
SHLIB_LINK += $(CORE_LIBS) -lstdc++
PG_CPPFLAGS = -Isrc -Isrc/core
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-cast-function-type
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Werror -fPIC

# No LLVM bitcode: the JIT gains nothing from our functions and it would need clang.
override with_llvm = no

TOOLS       = $(patsubst tools/%.cpp,tools/%,$(wildcard tools/simhash-*.cpp))
EXTRA_CLEAN = $(DATA_built) $(TOOLS) test/unit_tests test/*.o tools/*.o tmp_install tmp_check results regression.* output_iso log tmp_valgrind

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

all: $(TOOLS)

$(DATA_built): $(SQL_PARTS) simhash.control
	( echo '-- complain if script is sourced in psql, rather than via CREATE EXTENSION'; \
	  printf '%s\n' '\echo Use "CREATE EXTENSION simhash" to load this file. \quit'; \
	  cat $(SQL_PARTS) ) > $@

# The core depends on its headers; keep rebuilds honest.
$(CORE_OBJS) $(C_SRCS:.c=.o): $(wildcard src/*.h src/am/*.h src/core/*.h src/core/*.hpp)

# ---- CLI tools (pure core, no PostgreSQL) ----------------------------------
TOOL_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra -Werror -Isrc/core -pthread
tools/simhash-%: tools/simhash-%.cpp $(wildcard tools/*.hpp) $(CORE_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) -o $@ $< $(CORE_OBJS) $(CORE_LIBS)

install: install-tools
install-tools: $(TOOLS)
	$(if $(TOOLS),$(INSTALL_PROGRAM) $(TOOLS) '$(DESTDIR)$(bindir)/')

# ---- unit tests of the core (GoogleTest) -----------------------------------
UNIT_SRCS = $(sort $(wildcard test/*_test.cpp))
test/unit_tests: $(UNIT_SRCS) $(CORE_OBJS) $(wildcard src/core/*.h src/core/*.hpp)
	$(CXX) $(TOOL_CXXFLAGS) -o $@ $(UNIT_SRCS) $(CORE_OBJS) $(CORE_LIBS) -lgtest -lgtest_main

unit: test/unit_tests
	./test/unit_tests

# The same tests on a core built with AddressSanitizer and UBSan.
test/unit_tests_asan: $(UNIT_SRCS) $(CORE_SRCS) $(wildcard src/core/*.h src/core/*.hpp)
	$(CXX) $(TOOL_CXXFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=all -o $@ $(UNIT_SRCS) $(CORE_SRCS) $(CORE_LIBS) -lgtest -lgtest_main

unit-asan: test/unit_tests_asan
	./test/unit_tests_asan

# ---- style and static analysis (C++ core, tests, tools) ------------------------
CXX_STYLE_FILES = $(CORE_SRCS) $(wildcard src/core/*.hpp) $(UNIT_SRCS) $(wildcard tools/*.cpp tools/*.hpp)
format:
	clang-format -i $(CXX_STYLE_FILES)

format-check:
	clang-format --dry-run --Werror $(CXX_STYLE_FILES)

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--std=c++17 --language=c++ -Isrc/core --suppress=missingIncludeSystem $(CORE_SRCS) $(wildcard tools/*.cpp)
	clang-tidy --quiet $(CORE_SRCS) -- -std=c++17 -Isrc/core

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

.PHONY: unit unit-asan test demo install-tools format format-check lint

# ---- micro-benchmark of the core's text fingerprint (not part of make test) ----
bench/fingerprint_bench: bench/fingerprint_bench.cpp $(CORE_OBJS)
	$(CXX) $(TOOL_CXXFLAGS) -o $@ $< $(CORE_OBJS) $(CORE_LIBS) -lcrypto

bench-core: bench/fingerprint_bench
	./bench/fingerprint_bench

.PHONY: bench-core
EXTRA_CLEAN += bench/fingerprint_bench

# ---- the server suites once under valgrind memcheck (slow; not part of test) ----
valgrind:
	bash test/valgrind.sh

.PHONY: valgrind
