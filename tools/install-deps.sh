#!/usr/bin/env bash
# install-deps.sh — Debian 12 packages needed to build, test, demo and benchmark simhash
# (python3-matplotlib draws the plots of make bench/quality, time measures peak memory;
# clang-14 and libclang-rt-14-dev, which holds libFuzzer, build the fuzz targets of test/fuzz/;
# python3-psycopg runs the Python example of the README in make test;
# clang-format, clang-tidy and cppcheck run make format, format-check and lint;
# valgrind runs make valgrind; debhelper, dpkg-dev and postgresql-server-dev-all build the
# Debian package of test/package_test.sh).
set -euo pipefail
PKGS=(build-essential pkg-config postgresql-15 postgresql-server-dev-15 postgresql-contrib
      libxxhash-dev libicu-dev libgumbo-dev libgtest-dev libipc-run-perl postgresql-doc-15
      python3 python3-numpy python3-matplotlib python3-psycopg time clang-14 libclang-rt-14-dev
      clang-format clang-tidy cppcheck valgrind debhelper dpkg-dev postgresql-server-dev-all)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
