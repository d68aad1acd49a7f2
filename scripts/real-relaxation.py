#!/usr/bin/env python3
"""Can a matrix of small *real* rank solve the rows of a few queries? A limit of case trees.

    python3 scripts/real-relaxation.py --m M --rank R --queries T1,...,Tk [--state FILE.npz]
        [--seed S] [--steps N] [--target E] [--floor F]

Needs numpy and scipy (`python3 -m pip install numpy scipy`, in a virtual environment where
the system's Python refuses it); not part of the build, and nothing here is trusted.

Every leaf of a case tree (splits, orders, chirotopes, covers proved by refutation) is a system
in the rows of its queries alone: each row x_i >= 0 strictly feasible with its own w_i, and
linear relations among the x_i (docs/PROOFS.md section 12). If rows x_i = u_i A with u_i in
R^R and a *real* R x 2^M matrix A have positive entries and are each strictly feasible with
values of their own, then (docs/CASE_TREES.md section 6) small perturbations put the u_i in
general position with every row still strictly feasible, so the chirotope of the u_i satisfies
a leaf of every tree for rank R on these queries: **no case tree on these queries refutes rank
R**. The script looks for such rows; the rank of a nonnegative model is at least its real rank,
so this is easier than finding a nonnegative model of rank R (`nkrank lower row-sets`), and a
set solved here is useless for case trees even where nonnegative training resists.

The search: start from random nonnegative u_i and alternate exact LPs (A and the w_i given the
u_i; each u_i and w_i given A), then joint steps on the linearization of u_i A in a trust
region (sequential linear programming), each kept only when the LP for A given the new u_i is
better. Every LP maximizes one margin `delta` of the row inequalities at error `--target`,
with every entry of a row at least `--floor` and x_i(q_i) >= 1 (the scale of a row is free;
K(q, q) > 0 in every solving model); HiGHS's interior point method solves them (at m = 8
the dual simplex took minutes per joint step where it mostly takes tens of seconds). A positive `delta` is a float solution; the script then
rounds u and A to rationals, forms the rows u_i A exactly (so their real rank stays at most R),
requires every entry to be positive, takes each row's w from its LP, and checks every sequence
of every row in exact arithmetic (fractions, brute force over all pairs of other tokens): only
that check's verdict is printed as "solved". Otherwise it prints each row's least float error
with values of its own. The state (u_i, A, margin, trust radius) is saved after every step,
atomically, so a cut run resumes from `--state`. Deterministic for given arguments and
versions of numpy and scipy.

The row system (N = 3): for query q and any tokens a, b, the output (w(q) + w(a) + w(b)) /
(x(q) + x(a) + x(b)) errs from min(|q|, <q, a>, <q, b>) by less than 1/2. The LPs use the level
reduction of docs/PROOFS.md L4: with t = min level, one auxiliary minimum per level and side.
"""

import argparse
import os
import sys
import time
from fractions import Fraction

try:
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog
except ImportError:
    sys.exit("scripts/real-relaxation.py needs numpy and scipy: python3 -m pip install numpy scipy")

ONE = "one"  # the column fixed to 1 that carries constants
LP_METHOD = "highs-ipm"  # --lp-method (interior point: far faster than simplex here)
LP_TIME_LIMIT = 600.0  # --lp-time-limit: an LP not solved by then counts as a failed step
FLOOR = 1e-6  # --floor: the least entry of a row (its query's entry is at least 1)


def weight(x):
    return bin(x).count("1")


def row_constraints(m, q, x_terms, w_col, aux_col, delta_col, target):
    """The level-reduced inequalities of row q as `lhs <= 0` (COO triplets, row count).

    `x_terms(z)` lists (column, coefficient) pairs whose sum is x(z); `w_col(z)` is the column
    of w(z); `aux_col` the first of 2 (|q| + 1) auxiliary columns."""
    n = 1 << m
    lev = [weight(q & z) for z in range(n)]
    rows, cols, vals = [], [], []
    r = 0

    def add_s(row, z, c, sign):  # sign * (w(z) - c x(z))
        rows.append(row)
        cols.append(w_col(z))
        vals.append(sign)
        for col, coef in x_terms(z):
            rows.append(row)
            cols.append(col)
            vals.append(-sign * c * coef)

    aux = aux_col
    for alpha in range(weight(q) + 1):
        for sign, c in ((1.0, alpha - target), (-1.0, alpha + target)):
            # aux <= sign * s_c(b) for every b at level >= alpha
            for b in range(n):
                if lev[b] >= alpha:
                    rows.append(r)
                    cols.append(aux)
                    vals.append(1.0)
                    add_s(r, b, c, -sign)
                    r += 1
            # sign * (s_c(q) + s_c(a)) + aux >= delta for every a at level alpha
            for a in range(n):
                if lev[a] == alpha:
                    add_s(r, q, c, -sign)
                    add_s(r, a, c, -sign)
                    rows += [r, r]
                    cols += [aux, delta_col]
                    vals += [-1.0, 1.0]
                    r += 1
            aux += 1
    return rows, cols, vals, r, aux


def solve(lp, box=()):
    """Maximizes delta (at most 1) over the LP that `system` built, every column free except
    those of `box` ((first, end, bound): columns first..end-1 within +-bound); the column ONE
    is mapped to a last column fixed to 1. Returns the solution or None."""
    rows, cols, vals, nrows, ncols, rhs, delta = lp
    one = ncols
    cols = [one if c == ONE else c for c in cols]
    a = sp.csr_matrix((vals, (rows, cols)), shape=(nrows, ncols + 1))
    cost = np.zeros(ncols + 1)
    cost[delta] = -1.0
    bounds = [(None, None)] * ncols + [(1.0, 1.0)]
    for first, end, bound in box:
        bounds[first:end] = [(-bound, bound)] * (end - first)
    bounds[delta] = (None, 1.0)
    res = linprog(cost, A_ub=a, b_ub=rhs, bounds=bounds, method=LP_METHOD,
                  options={"time_limit": LP_TIME_LIMIT})
    return res.x if res.status == 0 else None


def system(m, queries, x_of, w_base, aux_base, target, x_rows=True):
    """All rows' inequalities, then (with `x_rows`) x_i(z) >= FLOOR and x_i(q_i) >= 1, for LP
    columns where `x_of(i, z)` lists the terms of x_i(z). Returns the LP pieces and the delta
    column."""
    n = 1 << m
    rows, cols, vals = [], [], []
    nrows = 0
    aux = aux_base
    for i, q in enumerate(queries):
        ri, ci, vi, nr, aux = row_constraints(
            m, q, lambda z, i=i: x_of(i, z), lambda z, i=i: w_base + i * n + z, aux, -1, target
        )
        rows += [x + nrows for x in ri]
        cols += ci
        vals += vi
        nrows += nr
    delta = aux
    cols = [delta if c == -1 else c for c in cols]
    rhs = [0.0] * nrows
    for i, q in enumerate(queries if x_rows else []):
        for z in range(n):
            for col, coef in x_of(i, z):
                rows.append(nrows)
                cols.append(col)
                vals.append(-coef)
            rhs.append(-1.0 if z == q else -FLOOR)  # x_i(q_i) >= 1, every other x_i(z) >= FLOOR
            nrows += 1
    ncols = delta + 1
    return rows, cols, vals, nrows, ncols, np.array(rhs), delta


def best_a(m, queries, u, target):
    """The LP for A and the w_i with the u_i fixed: (A, delta)."""
    n, (k, r) = 1 << m, u.shape
    w_base = r * n
    lp = system(m, queries, lambda i, z: [(t * n + z, u[i, t]) for t in range(r)], w_base,
                w_base + k * n, target)
    x = solve(lp)
    return (None, None) if x is None else (x[: r * n].reshape(r, n), x[lp[-1]])


def best_u(m, q, a, target):
    """The LP for one u_i and its w_i with A fixed: (u_i, delta_i)."""
    r, n = a.shape
    lp = system(m, [q], lambda i, z: [(t, a[t, z]) for t in range(r)], r, r + n, target)
    x = solve(lp)
    return (None, None) if x is None else (x[:r], x[lp[-1]])


def joint_step(m, queries, u, a, target, radius):
    """One LP on the linearization of u_i A around (u, a) with |du|, |dA| within `radius`
    times the largest entry of u and of A: the new (u, a) and the linearized delta."""
    (k, r), n = u.shape, 1 << m
    a_base = k * r
    w_base = a_base + r * n

    def x_of(i, z):
        terms = [(i * r + t, a[t, z]) for t in range(r)]
        terms += [(a_base + t * n + z, u[i, t]) for t in range(r)]
        terms.append((ONE, float(u[i] @ a[:, z])))
        return terms

    lp = system(m, queries, x_of, w_base, w_base + k * n, target)
    su, sa = radius * np.abs(u).max(), radius * np.abs(a).max()
    x = solve(lp, box=[(0, a_base, su), (a_base, w_base, sa)])
    if x is None:
        return None, None, None
    return u + x[:a_base].reshape(k, r), a + x[a_base:w_base].reshape(r, n), x[lp[-1]]


def row_delta(m, q, x, target):
    """The LP of one row with x fixed (x(q) = 1): its largest margin and the w attaining it."""
    n = 1 << m
    lp = system(m, [q], lambda _i, z: [(ONE, float(x[z]))], 0, n, target, x_rows=False)
    sol = solve(lp)
    return (None, None) if sol is None else (sol[lp[-1]], sol[:n])


def float_errors(m, queries, u, a):
    """Each row's least float error with its own values (bisection on the row LP)."""
    x_all = np.maximum(u @ a, 0.0)
    out = []
    for i, q in enumerate(queries):
        x = x_all[i] / x_all[i][q]
        lo, hi = 0.0, 4.0
        while hi - lo > 1e-5:
            mid = (lo + hi) / 2
            d, _ = row_delta(m, q, x, mid)
            if d is not None and d >= -1e-12:
                hi = mid
            else:
                lo = mid
        out.append(hi)
    return out


def exact_check(m, queries, u, a, target):
    """Rounds u and A to rationals, forms the rows x_i = u_i A exactly (so their real rank is at
    most that of u), requires every entry to be positive, takes each row's w from its LP and
    checks every sequence of every row exactly. Returns the largest error over the rows, or a
    message saying why there is none."""
    n = 1 << m
    fr = lambda v: Fraction(float(v)).limit_denominator(1 << 40)
    ur = [[fr(v) for v in row] for row in u]
    ar = [[fr(v) for v in row] for row in a]
    worst = Fraction(0)
    for i, q in enumerate(queries):
        x = [sum(ur[i][t] * ar[t][z] for t in range(len(ar))) for z in range(n)]
        if min(x) <= 0:
            return f"row {i}: an entry of the rounded row is not positive"
        x = [v / x[q] for v in x]  # the LP's scale (a row's scale is free): x_i(q_i) = 1
        _, sol = row_delta(m, q, x, target)
        if sol is None:
            return f"row {i}: its LP failed"
        w = [fr(v) for v in sol]
        W = weight(q)
        lev = [weight(q & z) for z in range(n)]
        for p in range(n):
            for b in range(p, n):
                mass = x[q] + x[p] + x[b]
                out = (w[q] + w[p] + w[b]) / mass
                err = abs(out - min(W, lev[p], lev[b]))
                worst = max(worst, err)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--queries", required=True, help="binary tokens joined by commas")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=200, help="joint steps at most")
    ap.add_argument("--alternations", type=int, default=3, help="alternating rounds first")
    ap.add_argument("--target", type=float, default=0.49, help="error level of the LPs")
    ap.add_argument("--floor", type=float, default=1e-6, help="least entry of a row")
    ap.add_argument("--state", help="npz file: resumed from when present, saved after each step")
    ap.add_argument("--lp-method", default="highs-ipm", help="scipy's HiGHS: highs, highs-ds, highs-ipm")
    ap.add_argument("--lp-time-limit", type=float, default=600.0, help="seconds per LP")
    args = ap.parse_args()
    global LP_METHOD, LP_TIME_LIMIT, FLOOR
    LP_METHOD, LP_TIME_LIMIT, FLOOR = args.lp_method, args.lp_time_limit, args.floor
    m, r = args.m, args.rank
    queries = [int(s, 2) for s in args.queries.split(",")]
    if len(set(queries)) != len(queries) or any(not 0 < q < (1 << m) for q in queries):
        sys.exit("queries must be distinct nonzero tokens of m bits")

    def save(u, a, d, radius):
        if args.state:
            tmp = args.state + ".part.npz"
            np.savez(tmp, u=u, a=a, delta=d, radius=radius)
            os.replace(tmp, args.state)

    if args.state and os.path.exists(args.state):
        st = np.load(args.state)
        u, radius = st["u"], float(st["radius"])
        a, d = best_a(m, queries, u, args.target)  # A again, under this run's options
        if a is None:
            sys.exit(f"{args.state}: the LP for A given its u_i failed")
        print(f"resumed: delta {d:.6g}, radius {radius:.3g}", flush=True)
    else:
        u = np.random.default_rng(args.seed).random((len(queries), r))
        a, d = best_a(m, queries, u, args.target)
        if a is None:
            sys.exit("the first LP for A failed (try another --seed or a longer --lp-time-limit)")
        for it in range(args.alternations):
            if d > 0:
                break
            for i, q in enumerate(queries):
                ui, _ = best_u(m, q, a, args.target)
                if ui is not None:  # a failed LP keeps the row's u_i
                    u[i] = ui
            a2, d2 = best_a(m, queries, u, args.target)
            if a2 is not None:
                a, d = a2, d2
            print(f"alternation {it}: delta {d:.6g}", flush=True)
        radius = 0.2
        save(u, a, d, radius)
    step = 0
    while d <= 0 and step < args.steps and radius >= 1e-4:
        t0 = time.time()
        u2, _, lin = joint_step(m, queries, u, a, args.target, radius)
        a3, d3 = (None, None) if u2 is None else best_a(m, queries, u2, args.target)
        kept = d3 is not None and d3 > d + 1e-9
        print(f"step {step}: radius {radius:.3g}, linearized {lin}, delta "
              f"{d3 if d3 is not None else 'none'}, {'kept' if kept else 'not kept'} "
              f"({time.time() - t0:.0f} s)", flush=True)
        if kept:
            u, a, d = u2, a3, d3
            radius = min(1.5 * radius, 1.0)
        else:
            radius /= 2
        save(u, a, d, radius)
        step += 1
    if d <= 0:
        errors = float_errors(m, queries, u, a)
        print(f"not solved: delta {d:.6g} at error {args.target}; the rows' least float errors "
              f"with values of their own: largest {max(errors):.5f}, smallest {min(errors):.5f} "
              "(floats; proves nothing)")
        return 1
    worst = exact_check(m, queries, u, a, args.target)
    if isinstance(worst, str) or worst >= Fraction(1, 2):
        print(f"float delta {d:.6g}, but the exact check failed: {worst}")
        return 1
    print(f"solved: real rank {r}, largest error {float(worst):.6f} in exact arithmetic "
          f"(a fraction of {len(str(worst.denominator))} digits below 1/2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
