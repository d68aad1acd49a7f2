#!/usr/bin/env python3
"""A float start for `nkrank solve --from`, found by sequential LPs on a symmetric model.

The model has one feature per tied coordinate (0..gap-1), with --untied-gap one per other
coordinate too, and `shared` features; it is invariant under the permutations of the tied
coordinates (with their features) and of the other coordinates (with theirs). So the key side
of the feature of a tied coordinate `c` depends only on (`c in z`, the other tied coordinates
in `z`, the untied coordinates in `z`), that of an untied coordinate likewise, and a shared
feature only on (tied, untied coordinates in `z`); a query row is fixed by its class row
(the first `i` tied and the first `j` untied coordinates), and `(gap + 1)(m - gap + 1)` rows
decide the whole model (docs/UPPER_BOUNDS.md, "Symmetric starts").
Each step solves one LP: the kernel `U V^T` linearised around the current model inside a trust
region, the L4 constraints of every class row (docs/UPPER_BOUNDS.md, "The row LP"), minimising
one bound on the maximal error; a step is kept when the exact row LPs of the new kernel (values
by min-max, floats) lower the maximal error. The best model is written as an NKFM float model
(src/search/upper/train/float_model.rs, `FloatModel::to_bytes`) with the values of every row; then

    nkrank solve --m M --length 3 --rank R --engine train --from FILE --steps 0 --restarts 0 --polish worst-rows

rounds, polishes and certifies it, or not: nothing here is trusted. Needs numpy and scipy
(HiGHS). Deterministic for given arguments and versions of numpy and scipy; a cut run resumes
from FILE.state.npz. N = 3 only.
"""
import argparse
import os
import struct
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

# Bounds on the values, as moments: -(m + 1) k <= w <= 2 (m + 1) k, so that a token whose
# kernel vanishes carries no moment.
LOW, HIGH = 1.0, 2.0

# Seconds one LP may take: HiGHS sometimes stalls on a nearly degenerate step.
LP_SECONDS = 120.0


class Ansatz:
    """The symmetric model's parameters and the class rows."""

    def __init__(self, m, gap, shared, untied_gap=False):
        self.m, self.n = m, 1 << m
        self.tied, self.untied = list(range(gap)), list(range(gap, m))
        self.a, self.b, self.t = gap, m - gap, shared
        # Features: one per tied coordinate, one per untied coordinate if asked, then shared.
        self.gb = self.b if untied_gap else 0
        self.r = self.a + self.gb + shared
        bits = np.array([[(z >> i) & 1 for i in range(m)] for z in range(self.n)])
        in_tied = bits[:, : self.a].sum(1)
        in_untied = bits[:, self.a :].sum(1)
        self.n_gap = 2 * self.a * (self.b + 1)
        self.n_gap_untied = 2 * self.gb * (self.a + 1)
        self.n_shared = (self.a + 1) * (self.b + 1)
        self.params = self.n_gap + self.n_gap_untied + shared * self.n_shared
        # idx[z, f]: the parameter that is V(z, f).
        self.idx = np.zeros((self.n, self.r), dtype=np.int64)
        for k in range(self.a):
            x = bits[:, k]
            self.idx[:, k] = (x * self.a + in_tied - x) * (self.b + 1) + in_untied
        for j in range(self.gb):
            x = bits[:, self.a + j]
            self.idx[:, self.a + j] = (
                self.n_gap + (x * self.b + in_untied - x) * (self.a + 1) + in_tied
            )
        base = self.n_gap + self.n_gap_untied
        for f in range(shared):
            self.idx[:, self.a + self.gb + f] = (
                base + f * self.n_shared + in_tied * (self.b + 1) + in_untied
            )
        self.rows = [
            sum(1 << c for c in range(i)) | sum(1 << c for c in range(self.a, self.a + j))
            for i in range(self.a + 1)
            for j in range(self.b + 1)
        ]
        self.classes = [Classes(self, q) for q in self.rows]
        # A class row's features are symmetric too (the permutations that fix the row permute
        # its features): one value for the tied coordinates in the row, one for those out of
        # it, the same for the untied ones, and the shared features.
        self.free = 4 + shared
        self.expand = [self.expansion(q) for q in self.rows]

    def expansion(self, q):
        """The matrix that maps the `4 + shared` free numbers of row `q` to its `r` features."""
        e = np.zeros((self.r, self.free))
        for c in range(self.a):
            e[c, 0 if q >> c & 1 else 1] = 1.0
        for j in range(self.gb):
            e[self.a + j, 2 if q >> (self.a + j) & 1 else 3] = 1.0
        for f in range(self.t):
            e[self.a + self.gb + f, 4 + f] = 1.0
        return e

    def keys(self, p):
        return p[self.idx]

    def start(self, rng):
        """Gap features (large where the key lacks the coordinate) and shared features that
        fall with the untied coordinates of the key, each entry jittered."""
        p = np.zeros(self.params)
        for x in range(2):
            base = 1.0 if x == 0 else np.exp(-4)
            for i in range(self.a):
                for j in range(self.b + 1):
                    p[(x * self.a + i) * (self.b + 1) + j] = base * np.exp(rng.uniform(-0.3, 0.3))
            for j in range(self.gb):
                for i in range(self.a + 1):
                    k = self.n_gap + (x * self.b + j) * (self.a + 1) + i
                    p[k] = base * np.exp(rng.uniform(-0.3, 0.3))
        first = self.n_gap + self.n_gap_untied
        for f in range(self.t):
            for i in range(self.a + 1):
                for j in range(self.b + 1):
                    e = -2.4 * j * (1 + f) - 0.5 * f * i + rng.uniform(-0.3, 0.3)
                    p[first + f * self.n_shared + i * (self.b + 1) + j] = np.exp(e)
        return p


class Kernel:
    """`k_c = sum_j coef[c, j] x[col[c, j]] + const[c]` for each token class `c` of a row (linear
    in the LP's variables), and its current value `now[c]`."""

    def __init__(self, col, coef, const, now):
        self.col, self.coef, self.const, self.now = col, coef, const, now

    @staticmethod
    def fixed(k):
        n = len(k)
        return Kernel(np.zeros((n, 1), dtype=np.int64), np.zeros((n, 1)), k.copy(), k.copy())


class Classes:
    """The tokens of row `q` up to the permutations that fix `q` (of the tied coordinates and
    of the others): a class is fixed by how many of its tied and untied coordinates lie in `q`
    and outside, so its tokens share the kernel, the level and (without loss, the LPs being
    convex) the value. `tokens[c]` is the least token of class `c`, `mult[c]` its size,
    `of[z]` the class of token `z`; `q` is a class of its own."""

    def __init__(self, ans, q):
        self.m = ans.m
        tied = (1 << ans.a) - 1
        keys = {}
        self.of = np.zeros(ans.n, dtype=np.int64)
        tokens, mult = [], []
        for z in range(ans.n):
            key = tuple(bin(x).count("1") for x in (z & q & tied, z & ~q & tied, z & q & ~tied, z & ~q & ~tied))
            if key not in keys:
                keys[key] = len(tokens)
                tokens.append(z)
                mult.append(0)
            self.of[z] = keys[key]
            mult[keys[key]] += 1
        self.tokens, self.mult = np.array(tokens), np.array(mult, dtype=float)
        self.level = np.array([bin(q & z).count("1") for z in tokens])
        self.q = int(self.of[q])


def row_constraints(cl, ker, wcol, mucol, lamcol, lam0, out, first, delta=None):
    """Appends the L4 constraints of the row of classes `cl` (rows `sum x + const <= 0` as COO
    triplets; one value variable per class from `wcol`) with the error bound `lam` (variable
    `lamcol`, its product with the kernel linearised at `lam0`) and, if `delta` names a
    variable, that margin on every sequence; returns the next row number."""
    rows, cols, vals, rhs = out
    lev, nc = cl.level, len(cl.tokens)
    nk = ker.col.shape[1]
    row = first

    def side(cs, sign, tau):
        # S_c = sign (w_c - tau k_c) + lam k_c.
        c = np.empty((len(cs), nk + 2), dtype=np.int64)
        v = np.empty((len(cs), nk + 2))
        c[:, 0], v[:, 0] = wcol + cs, sign
        factor = -sign * tau + lam0
        c[:, 1 : nk + 1], v[:, 1 : nk + 1] = ker.col[cs], factor * ker.coef[cs]
        c[:, nk + 1], v[:, nk + 1] = lamcol, ker.now[cs]
        return c, v, factor * ker.const[cs] - lam0 * ker.now[cs]

    def add(c, v, const):
        nonlocal row
        rows.append(np.repeat(np.arange(row, row + c.shape[0]), c.shape[1]))
        cols.append(c.ravel())
        vals.append(v.ravel())
        rhs.append(-const)
        row += c.shape[0]

    # Values within bounds, as moments: no moment where the kernel vanishes.
    bound = float(cl.m + 1)
    cs = np.arange(nc)
    for sign, scale in ((1.0, HIGH * bound), (-1.0, LOW * bound)):
        c = np.concatenate([(wcol + cs)[:, None], ker.col], 1)
        v = np.concatenate([np.full((nc, 1), sign), -scale * ker.coef], 1)
        add(c, v, -scale * ker.const)
    for tau in range(lev[cl.q] + 1):
        above, at = np.nonzero(lev >= tau)[0], np.nonzero(lev == tau)[0]
        for s, sign in enumerate((1.0, -1.0)):
            mu = mucol + 2 * tau + s
            c, v, k = side(above, sign, tau)  # mu <= S_b
            ones = np.ones((len(above), 1))
            add(np.concatenate([mu * ones.astype(np.int64), c], 1), np.concatenate([ones, -v], 1), -k)
            cq, vq, kq = side(np.array([cl.q]), sign, tau)  # S_q + S_a + mu >= delta
            ca, va, ka = side(at, sign, tau)
            ones = np.ones((len(at), 1))
            # Without a margin the last column repeats `mu` with coefficient 0 (an explicit
            # zero that HiGHS sees; kept so that the runs of docs/UPPER_BOUNDS.md reproduce).
            extra = (delta if delta is not None else mu) * ones.astype(np.int64)
            add(
                np.concatenate([mu * ones.astype(np.int64), np.repeat(cq, len(at), 0), ca, extra], 1),
                np.concatenate([-ones, -np.repeat(vq, len(at), 0), -va, ones * (delta is not None)], 1),
                -(kq[0] + ka),
            )
    return row


def solve(c, out, nrows, nv, bounds, eq=None):
    a = sp.csr_matrix(
        (np.concatenate(out[2]), (np.concatenate(out[0]), np.concatenate(out[1]))),
        shape=(nrows, nv),
    )
    kw = {} if eq is None else {"A_eq": eq[0], "b_eq": eq[1]}
    # An LP that runs past the limit counts as failed (the step is not kept).
    res = linprog(
        c, A_ub=a, b_ub=np.concatenate(out[3]), bounds=bounds, method="highs",
        options={"time_limit": LP_SECONDS}, **kw,
    )
    return res.x if res.status == 0 else None


def row_values(cl, k):
    """The least maximal error of a row with the kernel `k` on its classes fixed, and the
    values of its classes."""
    nc = len(cl.tokens)
    k = k / (cl.mult * k).sum()
    lamcol = nc + 2 * (cl.level[cl.q] + 1)
    out = ([], [], [], [])
    nrows = row_constraints(cl, Kernel.fixed(k), 0, nc, lamcol, 0.0, out, 0)
    c = np.zeros(lamcol + 1)
    c[lamcol] = 1
    x = solve(c, out, nrows, lamcol + 1, [(None, None)] * (lamcol + 1))
    if x is None:
        return None, float("inf")
    g = np.where(k > 0, x[:nc] / np.where(k > 0, k, 1), cl.level)
    return g, x[lamcol]


def errors(ans, p, us):
    v = ans.keys(p)
    return np.array(
        [row_values(cl, v[cl.tokens] @ (e @ u))[1] for u, cl, e in zip(us, ans.classes, ans.expand)]
    )


def margin_rows(ans, p):
    """Each class row's features given the keys: the largest additive margin at error 1/2,
    kernel mass 1."""
    v = ans.keys(p)
    r = ans.free
    us = []
    for cl, e in zip(ans.classes, ans.expand):
        nc = len(cl.tokens)
        wcol, mucol, dcol = r, r + nc, r + nc + 2 * (cl.level[cl.q] + 1)
        vc = v[cl.tokens] @ e
        # The error bound fixed at 1/2 (its term has coefficient `now` = 0), the margin free.
        ker = Kernel(np.tile(np.arange(r), (nc, 1)), vc, np.zeros(nc), np.zeros(nc))
        out = ([], [], [], [])
        nrows = row_constraints(cl, ker, wcol, mucol, dcol, 0.5, out, 0, delta=dcol)
        nv = dcol + 1
        c = np.zeros(nv)
        c[dcol] = -1
        mass = (cl.mult[:, None] * vc).sum(0)
        eq = (sp.csr_matrix(np.concatenate([mass, np.zeros(nv - r)])[None, :]), [1.0])
        bounds = [(0, None)] * r + [(None, None)] * (nv - r - 1) + [(None, 1.0)]
        x = solve(c, out, nrows, nv, bounds, eq)
        us.append(x[:r] if x is not None else np.ones(r) / mass.sum())
    return us


def step(ans, p0, us0, lam0, rho, eps=1e-3):
    """One trust-region LP in the parameters, the class rows' features and the error bound."""
    r = ans.free
    ucol = ans.params
    col = ucol + len(ans.rows) * r
    offs = []
    for cl in ans.classes:
        offs.append(col)
        col += len(cl.tokens) + 2 * (cl.level[cl.q] + 1)
    lamcol = col
    nv = col + 1
    out = ([], [], [], [])
    nrows = 0
    er, ec, ev, eb = [], [], [], []
    v0 = ans.keys(p0)
    us0 = [
        u / (cl.mult * (v0[cl.tokens] @ (e @ u))).sum()
        for u, cl, e in zip(us0, ans.classes, ans.expand)
    ]
    for i, cl in enumerate(ans.classes):
        e, t, nc = ans.expand[i], cl.tokens, len(cl.tokens)
        u0 = us0[i]
        cols = np.concatenate([np.tile(ucol + i * r + np.arange(r), (nc, 1)), ans.idx[t]], 1)
        coef = np.concatenate([v0[t] @ e, np.tile(e @ u0, (nc, 1))], 1)
        k0 = v0[t] @ (e @ u0)
        nrows = row_constraints(cl, Kernel(cols, coef, -k0, k0), offs[i], offs[i] + nc, lamcol, lam0, out, nrows)
        er.append(np.full(cols.size, i))
        ec.append(cols.ravel())
        ev.append((coef * cl.mult[:, None]).ravel())
        eb.append(1.0 + (cl.mult * k0).sum())
    eq = (
        sp.csr_matrix((np.concatenate(ev), (np.concatenate(er), np.concatenate(ec))), shape=(len(ans.rows), nv)),
        np.array(eb),
    )
    lo, hi = np.full(nv, -np.inf), np.full(nv, np.inf)
    top = p0.max()
    lo[:ucol] = np.maximum(0, p0 - rho * (p0 + eps * top))
    hi[:ucol] = p0 + rho * (p0 + eps * top)
    for i, u in enumerate(us0):
        s = slice(ucol + i * r, ucol + (i + 1) * r)
        lo[s] = np.maximum(0, u - rho * (u + eps * u.max()))
        hi[s] = u + rho * (u + eps * u.max())
    lo[lamcol] = lam0 - 0.2
    c = np.zeros(nv)
    c[lamcol] = 1
    x = solve(c, out, nrows, nv, list(zip(lo, hi)), eq)
    if x is None:
        return None, None
    return x[:ucol], [x[ucol + i * r : ucol + (i + 1) * r] for i in range(len(ans.rows))]


def full_model(ans, p, us):
    """Every query's features: those of its class row (the same counts of tied and untied
    coordinates) placed on its own coordinates by [`Ansatz.expansion`]."""
    tied = (1 << ans.a) - 1
    cls = {(bin(q & tied).count("1"), bin(q >> ans.a).count("1")): i for i, q in enumerate(ans.rows)}
    u = np.array(
        [
            ans.expansion(q) @ us[cls[(bin(q & tied).count("1"), bin(q >> ans.a).count("1"))]]
            for q in range(ans.n)
        ]
    )
    return u, ans.keys(p)


def write_nkfm(path, ans, p, us):
    # No entry exactly 0: a kernel that vanishes on a token would leave sequences without a
    # denominator once rounded (docs/PROOFS.md, L3).
    p = p + 1e-5 * p.max()
    us = [x + 1e-5 * x.max() for x in us]
    u, v = full_model(ans, p, us)
    n = ans.n
    g = np.zeros((n, n))
    worst = 0.0
    for q in range(n):
        cl = Classes(ans, q)
        gc, e = row_values(cl, v[cl.tokens] @ u[q])
        g[q] = (gc if gc is not None else cl.level.astype(float))[cl.of]
        worst = max(worst, e)
    logs = [np.maximum(np.log(np.maximum(x, 1e-300)), -60.0) for x in (u, v)]
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(b"NKFM1\n" + struct.pack("<I", ans.m) + struct.pack("<Q", ans.r))
        for x in (logs[0], logs[1], g):
            fh.write(x.astype("<f8").tobytes())
    os.replace(tmp, path)
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--gap", type=int, required=True, help="features tied to coordinates 0..gap-1")
    ap.add_argument("--untied-gap", action="store_true", help="one feature per untied coordinate too")
    ap.add_argument("--shared", type=int, required=True, help="features shared by all coordinates")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--out", required=True, help="the NKFM file to write")
    args = ap.parse_args()
    if not (1 <= args.m <= 10 and 0 <= args.gap <= args.m and args.shared >= 0 and args.steps >= 0):
        sys.exit("need 1 <= m <= 10, 0 <= gap <= m, shared >= 0 and steps >= 0")
    if args.gap + args.shared + (args.m - args.gap) * args.untied_gap < 1:
        sys.exit("the rank (gap, untied gap and shared features) must be at least 1")
    ans = Ansatz(args.m, args.gap, args.shared, args.untied_gap)
    # The search state after every step, written atomically: a cut run resumes from it.
    state = args.out + ".state.npz"
    key = np.array([args.m, args.gap, args.shared, int(args.untied_gap), args.seed])
    if os.path.exists(state):
        z = np.load(state)
        if not np.array_equal(z["key"], key):
            sys.exit(f"{state} is the state of another search (--m, --gap, --shared, --untied-gap, --seed); remove it or choose another --out")
        p, us, lam, rho, done = z["p"], list(z["us"]), float(z["lam"]), float(z["rho"]), int(z["done"])
        print(f"resumed from {state} after {done} steps: float max error {lam:.4f}", flush=True)
    else:
        p = ans.start(np.random.default_rng(args.seed))
        us = margin_rows(ans, p)
        lam, rho, done = errors(ans, p, us).max(), 0.3, 0
    t0 = time.time()
    print(f"rank {ans.r}, {len(ans.rows)} class rows, {ans.params} parameters; float max error {lam:.4f}", flush=True)
    while done < args.steps and rho >= 1e-3:
        done += 1
        p1, us1 = step(ans, p, us, lam, rho)
        e1 = errors(ans, p1, us1).max() if p1 is not None else float("inf")
        kept = e1 < lam
        what = f"float max error {e1:.5f}" if e1 < float("inf") else "an LP failed"
        print(f"step {done}/{args.steps} ({time.time() - t0:.0f} s): radius {rho:.3g}, {what}{' kept' if kept else ''}", flush=True)
        if kept:
            p, us, lam = p1, us1, e1
            rho = min(rho * 1.5, 2.0)
        else:
            rho /= 2
        tmp = state + ".tmp.npz"
        np.savez(tmp, key=key, p=p, us=np.array(us), lam=lam, rho=rho, done=done)
        os.replace(tmp, state)
    worst = write_nkfm(args.out, ans, p, us)
    print(f"wrote {args.out}: rank {ans.r}, float max error {worst:.5f}")


if __name__ == "__main__":
    main()
