#!/usr/bin/env bash
# meta_test.sh — META.json is a valid PGXN distribution description (the
# required keys and value forms of the PGXN Meta Spec 1.0.0: names are terms,
# versions SemVer, every extension it provides has a file and a version, tags,
# prereqs and no_index in their forms), the files it names are in the
# distribution (tracked by git, so in make dist's tarball), its version is the
# extension's default_version in simhash.control, and its release_status says
# "stable" only when CHANGELOG.md gives that version a release date.
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import json, os, re, subprocess

passed = failed = 0
def check(what, ok):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)

semver = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
try:
    meta = json.load(open("META.json", encoding="utf-8"))
    check("META.json parses as JSON", True)
except (OSError, ValueError) as e:
    print("FAIL: META.json:", e)
    print("meta: 0 passed, 1 failed")
    raise SystemExit(1)

required = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]
optional = ["description", "generated_by", "tags", "no_index", "prereqs", "release_status", "resources"]
for key in required:
    check(f"required key {key}", key in meta)
for key in meta:
    check(f"known key {key}", key in required or key in optional or re.match(r"^[xX]_.", key))
check("meta-spec 1.0.0", meta.get("meta-spec", {}).get("version") == "1.0.0")
check("version is SemVer", bool(semver.match(meta.get("version", ""))))
licenses = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
            "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
            "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
            "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown"}
check("license is a PGXN license name", meta.get("license") in licenses)
check("release_status", meta.get("release_status", "stable") in ("stable", "testing", "unstable"))
term = re.compile(r"^[^/\\\s\x00-\x1f\x7f]{2,}$")
check("name is a term", bool(term.match(str(meta.get("name", "")))))
for key in ("abstract", "description", "generated_by"):
    check(f"{key} is a non-empty string", key not in meta or (isinstance(meta[key], str) and meta[key] != ""))
m = meta.get("maintainer")
check("maintainer is a string or a list of strings",
      (isinstance(m, str) and m != "") or (isinstance(m, list) and m != [] and all(isinstance(x, str) and x for x in m)))
check("meta-spec url", meta.get("meta-spec", {}).get("url", "https://pgxn.org/meta/spec.txt")
      in ("https://pgxn.org/meta/spec.txt", "http://pgxn.org/meta/spec.txt"))
tags = meta.get("tags", ["ok"])
check("tags: a non-empty list", isinstance(tags, list) and tags != [])
for t in tags if isinstance(tags, list) else []:
    check(f"tag {t!r}", isinstance(t, str) and 2 <= len(t) <= 255 and not re.search(r"[/\\\x00-\x1f\x7f]", t))
version_range = re.compile(r"^((([=!]=|[<>]=?)\s*)?(\d+\.\d+\.\d+\S*|0))(\s*,\s*(([=!]=|[<>]=?)\s*)?\d+\.\d+\.\d+\S*)*$")
prereqs = meta.get("prereqs", {})
for phase, rels in prereqs.items():
    check(f"prereq phase {phase}", phase in ("configure", "build", "test", "runtime", "develop") or phase.startswith(("x_", "X_")))
    for rel, reqs in rels.items():
        check(f"prereq relationship {phase}.{rel}", rel in ("requires", "recommends", "suggests", "conflicts") or rel.startswith(("x_", "X_")))
        for name, req in reqs.items():
            check(f"prereq {name} version range {req!r}", req == 0 or bool(version_range.match(str(req))))
for key, paths in meta.get("no_index", {}).items():
    check(f"no_index {key}", key in ("file", "directory") and (isinstance(paths, str) or isinstance(paths, list)))

control = open("simhash.control", encoding="utf-8").read()
m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
control_version = m.group(1) if m else None
ext = meta.get("provides", {}).get("simhash", {})
check("provides simhash", bool(ext))
check("provides simhash: version = distribution version", ext.get("version") == meta.get("version"))
for name, e in meta.get("provides", {}).items():
    check(f"provides {name}: a term", bool(term.match(name)))
    check(f"provides {name}: file and version", "file" in e and "version" in e)
    check(f"provides {name}: version is SemVer", bool(semver.match(str(e.get("version", "")))))
    check(f"provides {name}: known keys", all(k in ("file", "version", "abstract", "docfile") or k.startswith(("x_", "X_")) for k in e))
# the files it names exist, and are in the distribution: tracked by git where
# this is a checkout (make dist archives what git tracks)
try:
    tracked = set(subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split("\n"))
except (OSError, subprocess.CalledProcessError):
    tracked = None
for key in ("file", "docfile"):
    if key in ext:
        check(f"provides simhash: {key} {ext[key]} exists", os.path.isfile(ext[key]))
        check(f"provides simhash: {key} {ext[key]} is in the distribution", tracked is None or ext[key] in tracked)
major_minor = ".".join(meta.get("version", "").split(".")[:2])
check(f"version {meta.get('version')} is simhash.control's default_version {control_version}",
      major_minor == control_version and meta.get("version", "").split(".")[2:] == ["0"])
check("LICENSE exists", os.path.isfile("LICENSE"))
# release_status: stable only for a released version, one whose CHANGELOG.md
# section has a date (## 1.2 — 2026-12-01, commit abc1234)
changelog = open("CHANGELOG.md", encoding="utf-8").read()
sec = re.search(r"^## " + re.escape(control_version or "?") + r" — (.*)$", changelog, re.M)
check(f"CHANGELOG.md has a section for {control_version}", bool(sec))
dated = bool(sec and re.match(r"\d{4}-\d{2}-\d{2}\b", sec.group(1)))
status = meta.get("release_status", "stable")
check(f"release_status {status} fits the CHANGELOG ({'released' if dated else 'unreleased'})",
      (status == "stable") == dated)
print(f"meta: {passed} passed, {failed} failed")
raise SystemExit(1 if failed else 0)
PY
