#!/usr/bin/env python3
"""Validates certificates against docs/certificate.schema.json (JSON Schema draft 2020-12).

Checks, from the repository root:
1. the schema itself is a valid draft 2020-12 schema;
2. every committed certificate under certificates/ (.json and .json.gz) validates;
3. every example listed in docs/examples/manifest.tsv validates or fails as its "schema" column
   says, and every file under docs/examples/ is listed there;
4. the Python snippet of docs/CERTIFICATES.md runs and prints the claims it should.

Two implementations of the standard validate: `jsonschema` (Python, the reference most readers
use) and `jsonschema_rs` (the Rust crate `jsonschema` behind Python bindings). Both must give the
same verdict on every example, valid or not. The committed certificates all go through
`jsonschema_rs`, and through `jsonschema` too up to REFERENCE_BYTES of JSON each (all of them with
`--reference-all`): on the large model files, a million rationals each, the Python validator
takes minutes per file (390 s for the whole folder, against under a second). Without
`jsonschema_rs` every file goes through `jsonschema`.

Needs the packages (scripts/check-schema.sh installs them). Exit status 0 iff all pass.
"""
import gzip
import json
import pathlib
import re
import subprocess
import sys

import jsonschema

try:
    import jsonschema_rs
except ImportError:
    jsonschema_rs = None

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
# Certificates of at most this many bytes of JSON also go through the Python validator.
REFERENCE_BYTES = 1 << 20


def load(path):
    """The JSON text of a certificate (plain or gzip, decided by content) and its value."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return len(raw), json.loads(raw.decode("utf-8"))


def short(message, limit=300):
    """A message cut to `limit` characters: some quote the whole failing value, a matrix of a
    million entries."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message)} characters)"


def errors_of(validator, doc):
    """The messages of the Python validator's errors, in the order of their paths."""
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return [short(e.message) for e in errors]


def errors_of_rs(validator, doc):
    """The messages of the Rust validator's errors."""
    return [short(e.message) for e in validator.iter_errors(doc)]


def main():
    reference_all = "--reference-all" in sys.argv[1:]
    schema = json.loads((ROOT / "docs" / "certificate.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    fast = jsonschema_rs.Draft202012Validator(schema) if jsonschema_rs else None
    failures = []

    def verdicts(doc, size):
        """The errors of each validator that reads a document of `size` bytes: (name, errors)."""
        out = []
        if fast is not None:
            out.append(("jsonschema_rs", errors_of_rs(fast, doc)))
        if fast is None or reference_all or size <= REFERENCE_BYTES:
            out.append(("jsonschema", errors_of(validator, doc)))
        return out

    committed = sorted(
        p for p in (ROOT / "certificates").rglob("*") if p.name.endswith((".json", ".json.gz"))
    )
    if not committed:
        failures.append("no committed certificate found under certificates/")
    validated = {"jsonschema_rs": 0, "jsonschema": 0}
    for p in committed:
        size, doc = load(p)
        for name, errs in verdicts(doc, size):
            validated[name] += 1
            if errs:
                failures.append(f"{p.relative_to(ROOT)}: {name}: {errs[0]}")

    listed = set()
    for line in (EXAMPLES / "manifest.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, expect, _checker = line.split("\t")
        listed.add(name)
        if expect not in ("valid", "invalid"):
            failures.append(f"manifest: bad schema column {expect!r} for {name}")
            continue
        _size, doc = load(EXAMPLES / name)
        # Every validator on every example, whatever its size.
        for tool, errs in verdicts(doc, 0):
            if expect == "valid" and errs:
                failures.append(f"docs/examples/{name}: {tool}: should validate: {errs[0]}")
            elif expect == "invalid" and not errs:
                failures.append(f"docs/examples/{name}: {tool}: should fail the schema, but validates")
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
    by_tool = ", ".join(f"{n} by {tool}" for tool, n in validated.items() if n or tool == "jsonschema")
    print(f"schema: {len(committed)} committed certificates ({by_tool}), {len(listed)} examples, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
