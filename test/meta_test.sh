#!/usr/bin/env bash
# meta_test.sh — META.json is a valid PGXN distribution description (the
# required keys and value forms of the PGXN Meta Spec 1.0.0) and its version
# is the extension's default_version in simhash.control.
cd "$(dirname "$0")/.."
exec python3 - <<'PY'
import json, os, re

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
    print("0 passed, 1 failed")
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
for req in meta.get("prereqs", {}).get("runtime", {}).get("requires", {}).values():
    check(f"prereq version {req}", req == 0 or bool(semver.match(str(req))))

control = open("simhash.control", encoding="utf-8").read()
m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
control_version = m.group(1) if m else None
ext = meta.get("provides", {}).get("simhash", {})
check("provides simhash", bool(ext))
check("provides simhash: version = distribution version", ext.get("version") == meta.get("version"))
for key in ("file", "docfile"):
    check(f"provides simhash: {key} exists", key not in ext or os.path.isfile(ext[key]))
major_minor = ".".join(meta.get("version", "").split(".")[:2])
check(f"version {meta.get('version')} is simhash.control's default_version {control_version}",
      major_minor == control_version and meta.get("version", "").split(".")[2:] == ["0"])
check("LICENSE exists", os.path.isfile("LICENSE"))
print(f"{passed} passed, {failed} failed")
raise SystemExit(1 if failed else 0)
PY
