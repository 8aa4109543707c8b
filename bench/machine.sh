#!/usr/bin/env bash
# machine.sh — key,value lines describing where the benchmark ran: the
# machine, the software and the commit the run started from (REPORT.md is
# committed with the changes it measured, so no date and no dirty flag).
set -uo pipefail
cd "$(dirname "$0")/.."
kv() { printf '%s,"%s"\n' "$1" "$(printf '%s' "$2" | tr -d '"' | tr '\n' ' ' | sed 's/ *$//')"; }
echo "key,value"
kv cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
kv cores "$(nproc)"
kv ram_gib "$(awk '/MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)"
kv load_1min "$(cut -d' ' -f1 /proc/loadavg)"
kv os "$(. /etc/os-release && echo "$PRETTY_NAME")"
kv kernel "$(uname -r)"
kv postgresql "$(${TMPC_BIN:+$TMPC_BIN/}postgres --version)"
kv compiler "$(g++ --version | head -1)"
kv commit "$(git rev-parse --short HEAD 2>/dev/null)"
kv branch "$(git rev-parse --abbrev-ref HEAD 2>/dev/null)"
kv scale "${SCALE:-1}"
