#!/usr/bin/env python3
"""The core of a cover's clausal form, for another run of a SAT solver.

    python3 scripts/core-cnf.py CERT FORMULA.cnf CORE.cnf

CERT is a certificate of a chirotope cover proved by refutation (field `proof` or
`proof_packed`, docs/CERTIFICATES.md sections 16.3 and 16.4), FORMULA.cnf the clausal form that
`nkrank lower chirotopes ... --write-cnf` wrote for the same queries and rank. CORE.cnf gets the
axiom clauses (Grassmann-Pluecker and acyclicity, the first ones of FORMULA.cnf) that the
certificate's refutation names, and every clause of FORMULA.cnf after them (the closed circuits).
A refutation of CORE.cnf, whose clauses are all clauses of FORMULA.cnf, is a refutation of
FORMULA.cnf too, and a solver often finds a shorter one on the smaller formula. Nothing here
is trusted: the result goes back through `nkrank ... --drup` and the checker.
"""

import base64
import gzip
import json
import math
import os
import sys


def read_json(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def numbers(data):
    """The unsigned LEB128 numbers of a byte string."""
    value, shift = 0, 0
    for b in data:
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            yield value
            value, shift = 0, 0


def packed_text(tree, cert_path):
    """The packed refutation's text: `proof_packed` and the texts of its part files
    (`NAME.proof-partI.gz` beside `NAME.json.gz`, docs/CERTIFICATES.md section 16.5)."""
    text = tree["proof_packed"]
    name = os.path.basename(cert_path)
    stem = name.removesuffix(".gz").removesuffix(".json")
    for i in range(1, len(tree.get("proof_packed_parts", [])) + 1):
        part = os.path.join(os.path.dirname(cert_path), f"{stem}.proof-part{i}.gz")
        with open(part, "rb") as f:
            raw = f.read()
        text += (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("ascii")
    return text


def hint_lists(tree, n, cert_path):
    """The hints of every step (identifiers), from `proof` or `proof_packed`."""
    if "proof" in tree:
        for step in tree["proof"]:
            yield step["hints"]
        return
    it = numbers(base64.b85decode(packed_text(tree, cert_path)))
    table = [next(it) for _ in range(next(it))]
    s = 0
    for lits in it:
        for _ in range(lits):
            next(it)
        step_id = n + s + 1
        codes = [next(it) for _ in range(next(it))]
        yield [table[c // 2] if c % 2 else step_id - 1 - c // 2 for c in codes]
        s += 1


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    cert_path, formula_path, out_path = sys.argv[1:]
    cert = read_json(cert_path)
    tree = cert["case_tree"]
    r, k = cert["claim"]["rank"] - 1, len(tree["queries"])
    axioms = 1 + 16 * math.comb(k, r - 2) * math.comb(k - r + 2, 4) + 2 * math.comb(k, r + 1)
    n = axioms + sum(2 ** len(leaf["relations"]) for leaf in tree["leaves"])
    used = {h for hints in hint_lists(tree, n, cert_path) for h in hints if h <= axioms}
    kept, index, variables = [], 0, 0
    with open(formula_path) as f:
        for line in f:
            if line.startswith("p cnf"):
                variables = int(line.split()[2])
            if line[0] in "cp" or not line.strip():
                continue
            index += 1
            if index > axioms or index in used:
                kept.append(line)
    part = out_path + ".part"
    with open(part, "w") as out:
        out.write(f"p cnf {variables} {len(kept)}\n")
        out.writelines(kept)
    os.replace(part, out_path)
    print(f"{out_path}: {len(used)} of {axioms} axiom clauses named, {len(kept)} clauses")


if __name__ == "__main__":
    main()
