#!/usr/bin/env bash
# readme_figures_test.sh — the README's generated tables of figures (between
# <!-- bench:NAME --> markers) are what bench/report.py makes of the committed
# bench/results: figures live in one place, and `make bench` rewrites them.
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import importlib.util, os, re, sys

spec = importlib.util.spec_from_file_location("report", "bench/report.py")
report = importlib.util.module_from_spec(spec)
sys.modules["report"] = report
spec.loader.exec_module(report)

readme = open("README.md", encoding="utf-8").read()
passed = failed = 0
for name, make in (("performance", report.readme_performance), ("tuning", report.readme_tuning)):
    m = re.search(rf"<!-- bench:{name} -->\n(.*?)\n<!-- /bench:{name} -->", readme, re.S)
    want = make()
    if m and want and m.group(1) == want:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: README table '{name}' differs from bench/results (run: python3 bench/report.py)")
        if m and want:
            for a, b in zip(m.group(1).splitlines(), want.splitlines()):
                if a != b:
                    print(f"  README:  {a}\n  results: {b}")
print(f"{passed} passed, {failed} failed")
raise SystemExit(1 if failed else 0)
PY
