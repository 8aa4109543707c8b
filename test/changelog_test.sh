#!/usr/bin/env bash
# changelog_test.sh — CHANGELOG.md is a record a user can check: its newest
# section is simhash.control's default_version, only that one may be
# unreleased, every release has a date and the commit it was made from (tags
# are not kept), and where git history is at hand that commit exists, is of
# that date and carries that version in simhash.control; every change is one
# line; no git tag is named that does not exist.
cd "$(dirname "$0")/.."
export TZ=UTC   # commit dates as the CHANGELOG writes them
exec python3 - <<'PY'
import re, subprocess

passed = failed = 0
def check(what, ok):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)

def git(*args):
    try:
        r = subprocess.run(["git", *args], capture_output=True, text=True)
    except OSError:
        return None
    return r.stdout if r.returncode == 0 else None

text = open("CHANGELOG.md", encoding="utf-8").read()
control = open("simhash.control", encoding="utf-8").read()
default = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M).group(1)
history = git("rev-parse", "--verify", "-q", "HEAD") is not None

heads = re.findall(r"^## (\S+) — (.*)$", text, re.M)
check("release sections (## VERSION — ...)", len(heads) > 0)
check(f"newest section is simhash.control's {default}", bool(heads) and heads[0][0] == default)
key = lambda v: tuple(int(x) for x in v.split("."))
check("sections newest first", [key(v) for v, _ in heads] == sorted((key(v) for v, _ in heads), reverse=True))
for i, (v, rest) in enumerate(heads):
    if rest == "unreleased":
        check(f"{v}: only the newest section is unreleased", i == 0)
        continue
    # the release commit itself dates its section; the commit after it,
    # which opens the next version, adds the release's hash
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})(?:, commit ([0-9a-f]{7,40}))?", rest)
    check(f"{v}: '— YYYY-MM-DD, commit HASH' (got '{rest}')", bool(m) and (m.group(2) or i == 0))
    if not m or not m.group(2) or not history:
        continue
    date, commit = m.groups()
    when = git("show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%d", commit + "^{commit}")
    check(f"{v}: commit {commit} exists", when is not None)
    if when is None:
        continue
    check(f"{v}: commit {commit} is of {date} (it is {when.strip()})", when.strip() == date)
    ctl = git("show", f"{commit}:simhash.control") or ""
    cv = re.search(r"^default_version\s*=\s*'([^']*)'", ctl, re.M)
    check(f"{v}: simhash.control at {commit} says {v}", bool(cv) and cv.group(1) == v)

# one line per change: a bullet does not continue on the next line
cont = [l for l in text.splitlines() if re.match(r"^\s+\S", l)]
check("one line per change (no continued bullets)", not cont)
for l in cont[:5]:
    print("  continued:", l[:100])

# tags named (v1.0, ...) exist
tags = set((git("tag", "--list") or "").split()) if history else None
for t in sorted(set(re.findall(r"`(v\d+\.\d+(?:\.\d+)?)`", text))):
    check(f"tag {t} named in CHANGELOG.md exists", tags is None or t in tags)

print(f"changelog: {passed} passed, {failed} failed")
raise SystemExit(1 if failed else 0)
PY
