#!/usr/bin/env bash
# readme_figures_test.sh — the tables of figures of docs/performance.md (the
# README's performance page; between <!-- bench:NAME --> markers) are those of
# bench/REPORT.md, which bench/report.py makes from one benchmark run and
# copies there: figures live in one place, and `make bench` rewrites both.
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import re

readme = open("docs/performance.md", encoding="utf-8").read()
report = open("bench/REPORT.md", encoding="utf-8").read()
passed = failed = 0
for name in ("performance", "tuning", "scale", "neardup"):
    pattern = rf"<!-- bench:{name} -->\n(.*?)\n<!-- /bench:{name} -->"
    mine, theirs = re.search(pattern, readme, re.S), re.search(pattern, report, re.S)
    if not mine or not theirs:
        failed += 1
        print(f"FAIL: table '{name}' is missing from", "docs/performance.md" if not mine else "bench/REPORT.md")
    elif mine.group(1) != theirs.group(1):
        failed += 1
        print(f"FAIL: docs/performance.md table '{name}' differs from bench/REPORT.md (python3 bench/report.py rewrites it)")
        for a, b in zip(mine.group(1).splitlines(), theirs.group(1).splitlines()):
            if a != b:
                print(f"  docs:    {a}\n  REPORT:  {b}")
    else:
        passed += 1
print(f"readme_figures: {passed} passed, {failed} failed")
raise SystemExit(1 if failed else 0)
PY
