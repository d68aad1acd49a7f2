#!/usr/bin/env python3
"""Validates certificates against docs/certificate.schema.json (JSON Schema draft 2020-12).

Checks, from the repository root:
1. the schema itself is a valid draft 2020-12 schema;
2. every committed certificate under certificates/ (.json and .json.gz) validates;
3. every example listed in docs/examples/manifest.tsv validates or fails as its "schema" column
   says, and every file under docs/examples/ is listed there;
4. the Python snippet of docs/CERTIFICATES.md runs and prints the claims it should.

Needs the `jsonschema` package (scripts/check-schema.sh installs it). Exit status 0 iff all pass.
"""
import gzip
import json
import pathlib
import re
import subprocess
import sys

import jsonschema

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


def load(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def errors_of(validator, doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))


def main():
    schema = json.loads((ROOT / "docs" / "certificate.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []

    committed = sorted(
        p for p in (ROOT / "certificates").rglob("*") if p.name.endswith((".json", ".json.gz"))
    )
    if not committed:
        failures.append("no committed certificate found under certificates/")
    for p in committed:
        errs = errors_of(validator, load(p))
        if errs:
            failures.append(f"{p.relative_to(ROOT)}: {errs[0].message}")

    listed = set()
    for line in (EXAMPLES / "manifest.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, expect, _checker = line.split("\t")
        listed.add(name)
        errs = errors_of(validator, load(EXAMPLES / name))
        if expect == "valid" and errs:
            failures.append(f"docs/examples/{name}: should validate: {errs[0].message}")
        elif expect == "invalid" and not errs:
            failures.append(f"docs/examples/{name}: should fail the schema, but validates")
        elif expect not in ("valid", "invalid"):
            failures.append(f"manifest: bad schema column {expect!r} for {name}")
    on_disk = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*") if p.is_file()}
    for name in sorted(on_disk - listed - {"manifest.tsv"}):
        failures.append(f"docs/examples/{name}: not listed in manifest.tsv")

    # The snippet of docs/CERTIFICATES.md, run as a reader would run it.
    doc = (ROOT / "docs" / "CERTIFICATES.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", doc, re.S)
    if len(snippets) != 1:
        failures.append(f"docs/CERTIFICATES.md: expected one python snippet, found {len(snippets)}")
    else:
        args = ["docs/examples/valid/fooling-set.json", "docs/examples/valid/rank1-infeasible.json.gz",
                "docs/examples/valid/row-ratio.json"]
        out = subprocess.run([sys.executable, "-c", snippets[0], *args], cwd=ROOT,
                             capture_output=True, text=True)
        expected = (
            "docs/examples/valid/fooling-set.json: fooling-set: r*(11, 3) >= 3\n"
            "docs/examples/valid/rank1-infeasible.json.gz: rank1-infeasible: r*(4, 3) >= 2\n"
            "docs/examples/valid/row-ratio.json: row-ratio: a lemma for m = 11, N = 3\n"
        )
        if out.returncode != 0 or out.stdout != expected:
            failures.append(f"python snippet: exit {out.returncode}, output {out.stdout!r}, "
                            f"stderr {out.stderr!r}")

    for f in failures:
        print("FAIL", f)
    print(f"schema: {len(committed)} committed certificates, {len(listed)} examples, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
