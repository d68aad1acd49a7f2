#!/usr/bin/env python3
"""Writes the hostile certificate files of docs/BENCHMARKS.md ("Hostile files") into a directory.

    scripts/hostile-files.py OUT_DIR

Each file is built from parameters (nothing here is a committed blob); the same inputs are
built by tests/hostile_cost.rs for the test suite.
"""
import gzip
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def tiny(digits, i):
    """1/(10^digits + i): under the length cap, pairwise distinct denominators."""
    return "1/%d" % (10**digits + i)


def rank1_keys(m):
    """Every constraint key of the reduced rank-1 system for (m, 3), in the checker's order."""
    keys = []
    for w in range(m + 1):
        types = [(a, b) for a in range(w + 1) for b in range(m - w + 1)]
        for side in (0, 1):  # low < high
            for i, t1 in enumerate(types):
                for t2 in types[i:]:
                    keys.append((w, side, [list(t1), list(t2)]))
    return sorted(keys)


def rank1(m, ys):
    mults = [
        {"query_weight": w, "side": "low" if s == 0 else "high", "others": o, "y": y}
        for (w, s, o), y in zip(rank1_keys(m), ys)
    ]
    return {"format": "nkrank-certificate", "version": 1, "kind": "rank1-infeasible", "m": m,
            "length": 3, "claim": {"bound": "lower", "rank": 2}, "multipliers": mults}


def model_rank1(m, v, value):
    n = 1 << m
    return {"format": "nkrank-certificate", "version": 1, "kind": "model", "m": m, "length": 3,
            "claim": {"bound": "upper", "rank": 1},
            "model": {"U": {"rows": n, "cols": 1, "entries": [[q, 0, "1"] for q in range(n)]},
                      "V": {"rows": n, "cols": 1, "entries": [[z, 0, v(z)] for z in range(n)]},
                      "values": {"encoding": "levels",
                                 "gamma": [[value(q, s) for s in range(bin(q).count("1") + 1)]
                                           for q in range(n)]}}}


def write(name, doc, gz=False):
    text = json.dumps(doc).encode()
    path = os.path.join(out, name)
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(text)
    else:
        with open(path, "wb") as f:
            f.write(text)


here = os.path.dirname(os.path.abspath(__file__))
certs = os.path.join(here, "..", "certificates", "len3")
for k in (40, 80):
    write("rank1-%d.json.gz" % k, rank1(4, [tiny(4000, i + 1) for i in range(k)]), gz=True)
tree = json.load(open(os.path.join(certs, "m05-lower-r3-case-tree.json")))
for i, mj in enumerate(tree["case_tree"]["leaves"][0]["multipliers"]):
    mj["y"] = tiny(4000, i + 1)
write("case-tree-leaf.json.gz", tree, gz=True)
fool = json.load(open(os.path.join(certs, "m11-lower-r3-fooling-set.json")))
for i, mj in enumerate(fool["fooling"]["lemmas"][0]["multipliers"]):
    mj["y"] = tiny(4000, i + 1)
write("fooling-lemma.json.gz", fool, gz=True)
write("model-m8-v100.json.gz", model_rank1(8, lambda z: tiny(100, z + 1), lambda q, s: str(s)), gz=True)
write("model-m12-v1000.json.gz", model_rank1(12, lambda z: tiny(1000, z + 1), lambda q, s: str(s)), gz=True)
write("model-m12-zero.json.gz", model_rank1(12, lambda z: "1", lambda q, s: "0"), gz=True)
same = rank1(4, ["1"])
same["multipliers"] = same["multipliers"] * 1_400_000
write("same-multipliers.json.gz", same, gz=True)
same["multipliers"] = same["multipliers"][:500_000]
write("same-multipliers-500k.json.gz", same, gz=True)
with gzip.open(os.path.join(out, "huge.json.gz"), "wb") as f:
    f.write(b'{"format": "')
    chunk = b" " * (1 << 20)
    for _ in range(512):
        f.write(chunk)
# 15 000 fractions of about 2000-digit numerator and denominator (61 MB): each costs a gcd.
big = 10**1999
write("long-numbers.json", rank1(12, ["%d/%d" % ((3 * big + 2 * i + 1) // g, (7 * big + 2 * i) // g)
                                      for i in range(15000)
                                      for g in [__import__("math").gcd(3 * big + 2 * i + 1, 7 * big + 2 * i)]]))
bad = rank1(4, ["1" * 39 + "\u00e9" + "2" * 40])
write("utf8.json", bad)
loops = os.path.join(out, "loops")
os.makedirs(loops, exist_ok=True)
for name in ("a", "b"):
    if not os.path.lexists(os.path.join(loops, name)):
        os.symlink(".", os.path.join(loops, name))
special = os.path.join(out, "special")
os.makedirs(special, exist_ok=True)
if not os.path.lexists(os.path.join(special, "x.json")):
    os.mkfifo(os.path.join(special, "x.json"))
if not os.path.lexists(os.path.join(special, "zero.json")):
    os.symlink("/dev/zero", os.path.join(special, "zero.json"))
