#!/usr/bin/env python3
"""How far can the domination of a row alone carry a lower bound? A limit of Theorem K.

    python3 scripts/domination-relaxation.py search --m M --rank R [--ratios] [--seed S]
        [--steps N] [--delta D] --out FILE.json[.gz]
    python3 scripts/domination-relaxation.py check FILE.json[.gz]

`search` needs numpy (`python3 -m pip install numpy`); `check` needs nothing beyond Python.
Not part of the build, and nothing here is trusted.

In every solving model for (M, 3), in the row of a query q, a token b two or more levels above
a token a gets less weight: K(q, b) < K(q, a) when <q, b> - <q, a> >= 2 (Lemmas D2 and GD,
docs/PROOFS.md sections 12.8a and 11), and with `--ratios` the factor of Lemma CH as well:
f(G) K(q, b) <= K(q, a) for G = <q, b> - <q, a>. Theorem K uses nothing else of a model: the
nonnegativity of U and V, and these signs for pairs. A *domination kernel* of rank R is a pair
of nonnegative matrices U, V (2^M x R) whose product K = U V^T obeys these inequalities for
every query q and every pair of tokens, strictly (with `--ratios`, f(G) K(q, b) < K(q, a)).
Every solving model of rank R is one, so if a domination kernel of rank R exists, no argument
that uses only these inequalities and the nonnegativity of U and V proves r*(M, 3) > R
(docs/CASE_TREES.md section 9.2).

`search` looks for one by gradient descent (Adam on a squared hinge of the log-margins
`ln K(q, a) - ln K(q, b) - ln f(G)`, every row's least margin per pair of levels, U = exp(A)
and V = exp(B) so both stay positive), rounds it to integers (each row of U scaled to a
largest entry of 2^30, V to a largest entry of 2^62; a row's scale changes no inequality of
that row) and writes FILE.json only if the exact check passes. `check` reads the integers and
tests every inequality in Python's exact integers: for every query q and every pair of levels
alpha < beta with beta - alpha >= 2, the largest entry of the row at level beta, times f, is
below the least entry at level alpha. It prints "domination kernel: yes" or the first
inequality that fails, and exits non-zero then.
"""
import argparse
import gzip
import json
import os
import sys
import tempfile


def ch_factor(gap):
    """Lemma CH's f(G): the largest product of (g_i - 1) over compositions of G into parts >= 2."""
    best = gap - 1
    for g in range(2, gap - 1):
        best = max(best, (g - 1) * ch_factor(gap - g))
    return best


def factors(m, ratios):
    return [None, None] + [ch_factor(g) if ratios else 1 for g in range(2, m + 1)]


def check(doc):
    """The exact test; returns None if every inequality holds, else a description of one that fails."""
    m, rank, ratios = doc["m"], doc["rank"], doc["ratios"]
    n = 1 << m
    U, V = doc["U"], doc["V"]
    if len(U) != n or len(V) != n:
        return "U and V must have 2^m rows"
    for row in U + V:
        if len(row) != rank or any((not isinstance(x, int)) or x < 0 for x in row):
            return "every row must hold `rank` nonnegative integers"
    f = factors(m, ratios)
    for q in range(n):
        u = U[q]
        lo = [None] * (m + 1)
        hi = [None] * (m + 1)
        for z in range(n):
            k = sum(a * b for a, b in zip(u, V[z]))
            level = bin(q & z).count("1")
            if lo[level] is None or k < lo[level][0]:
                lo[level] = (k, z)
            if hi[level] is None or k > hi[level][0]:
                hi[level] = (k, z)
        for alpha in range(m + 1):
            for beta in range(alpha + 2, m + 1):
                if lo[alpha] is None or hi[beta] is None:
                    continue
                if f[beta - alpha] * hi[beta][0] >= lo[alpha][0]:
                    return (
                        f"query {q}: key {hi[beta][1]} at level {beta} times {f[beta - alpha]} "
                        f"is not below key {lo[alpha][1]} at level {alpha}"
                    )
    return None


def search(m, rank, ratios, seed, steps, delta):
    import numpy as np

    n = 1 << m
    pc = np.array([bin(x).count("1") for x in range(n)])
    level = pc[np.arange(n)[:, None] & np.arange(n)[None, :]]
    logf = [0.0, 0.0] + [float(np.log(f)) for f in factors(m, ratios)[2:]]
    rng = np.random.default_rng(seed)
    params = [rng.normal(scale=0.5, size=(n, rank)), rng.normal(scale=0.5, size=(n, rank))]
    mom = [np.zeros((n, rank)), np.zeros((n, rank))]
    vel = [np.zeros((n, rank)), np.zeros((n, rank))]
    rows = np.arange(n)
    for t in range(1, steps + 1):
        U, V = np.exp(params[0]), np.exp(params[1])
        K = U @ V.T
        lk = np.log(K)
        grad = np.zeros_like(K)
        lows, highs = [], []
        for lv in range(m + 1):
            z_lo = np.where(level == lv, lk, np.inf).argmin(1)
            z_hi = np.where(level == lv, lk, -np.inf).argmax(1)
            present = (level == lv).any(1)
            lows.append((np.where(present, lk[rows, z_lo], np.nan), z_lo))
            highs.append((np.where(present, lk[rows, z_hi], np.nan), z_hi))
        violated = 0
        for alpha in range(m + 1):
            for beta in range(alpha + 2, m + 1):
                margin = lows[alpha][0] - highs[beta][0] - logf[beta - alpha]
                ok = ~np.isnan(margin)
                margin = np.where(ok, margin, np.inf)
                slack = np.maximum(0.0, delta - margin)
                violated += int((margin <= 0).sum())
                np.add.at(grad, (rows, lows[alpha][1]), -2 * slack)
                np.add.at(grad, (rows, highs[beta][1]), 2 * slack)
        if t % 500 == 0:
            print(f"step {t}: {violated} inequalities violated (floats)", flush=True)
        if violated == 0:
            doc = rounded(U, V, m, rank, ratios)
            verdict = check(doc)
            if verdict is None:
                print(f"step {t}: the float kernel obeys every inequality; rounded, exactly too")
                return doc
            print(f"step {t}: rounded, it fails ({verdict}); going on", flush=True)
        dk = grad / K
        grads = [(dk @ V) * U, (dk.T @ U) * V]
        for i in range(2):
            mom[i] = 0.9 * mom[i] + 0.1 * grads[i]
            vel[i] = 0.999 * vel[i] + 0.001 * grads[i] ** 2
            step = 0.03 * (mom[i] / (1 - 0.9**t)) / (np.sqrt(vel[i] / (1 - 0.999**t)) + 1e-8)
            params[i] = params[i] - step
    return None


def rounded(U, V, m, rank, ratios):
    u_int = [[int(round(x * 2**30 / max(row))) for x in row] for row in U.tolist()]
    top = float(V.max())
    v_int = [[int(round(x * 2**62 / top)) for x in row] for row in V.tolist()]
    return {"m": m, "rank": rank, "ratios": ratios, "U": u_int, "V": v_int}


def write_atomically(path, doc):
    """Writes FILE.json, or FILE.json.gz compressed with no time stamp (the same bytes for the
    same kernel), through a temporary file renamed into place."""
    text = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
    if path.endswith(".gz"):
        text = gzip.compress(text, compresslevel=9, mtime=0)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, "wb") as out:
        out.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("search")
    s.add_argument("--m", type=int, required=True)
    s.add_argument("--rank", type=int, required=True)
    s.add_argument("--ratios", action="store_true")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--steps", type=int, default=20000)
    s.add_argument("--delta", type=float, default=0.05)
    s.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("file")
    a = ap.parse_args()
    if a.cmd == "search":
        doc = search(a.m, a.rank, a.ratios, a.seed, a.steps, a.delta)
        if doc is None:
            print("no domination kernel found (this proves nothing)")
            return 1
        write_atomically(a.out, doc)
        print(f"wrote {a.out}")
        return 0
    with (gzip.open if a.file.endswith(".gz") else open)(a.file, "rt") as fh:
        doc = json.load(fh)
    verdict = check(doc)
    if verdict is not None:
        print(f"not a domination kernel: {verdict}")
        return 1
    what = "with Lemma CH's factors" if doc["ratios"] else "signs"
    print(f"domination kernel: yes (m = {doc['m']}, rank {doc['rank']}, {what})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
