#!/usr/bin/env python3
"""Decide a cover's clausal form counterexample by counterexample, its axioms added as needed.

    python3 scripts/cegar-cover.py --m M --rank R --family T1,...,Tk FORMULA.cnf --state ADDED.npy
        [--relations] [--symmetric] [--write-subformula SUB.cnf | --model MODEL.txt]

Needs numpy and python-sat (`python3 -m pip install numpy python-sat`, in a virtual environment
where the system's Python refuses it); not part of the build, and nothing here is trusted.

FORMULA.cnf is what `nkrank lower chirotopes --m M --k K --rank R --cover --family T1,...,Tk
--write-cnf FORMULA.cnf` wrote (docs/CASE_TREES.md section 12): the unit clause, 16 clauses
per 3-term Grassmann-Pluecker relation, 2 per circuit (acyclicity), then the closed splits'
clauses. Most of it is the relations' clauses (43.4 million for the complement of the 8-cycle
at rank 5), and a solver may not need most of them. The script gives CaDiCaL (python-sat,
incremental) the unit clause, acyclicity and the closed splits, then repeats: solve; if the
solver finds a model, add the relation clauses that the model breaks (with --relations, all
16 clauses of every relation it breaks; with --symmetric too, those of the relations' images
under the permutations of the coordinates that map the queries onto themselves). A subset of
the formula's clauses that is unsatisfiable makes the whole formula unsatisfiable, so
"unsatisfiable" here says that the cover closes; a model that breaks no relation is a sign
vector that satisfies the whole formula, an escaping chirotope. Neither is a certificate: a
refutation of the formula still has to come from a solver's proof, given hints by `nkrank
lower chirotopes ... --drup PROOF` (the checker replays reverse unit propagation). The added
clauses' numbers are saved after every round, atomically, in ADDED.npy, and a cut run resumes
from it.

Any other SAT solver can take a round: `--write-subformula SUB.cnf` writes the clauses given to
the solver so far (the unit clause, acyclicity, the closed splits, then the added relation
clauses in the formula's order) as DIMACS and stops. A DRUP refutation of it (`cadical --unsat
SUB.cnf SUB.drup`) is one of the whole formula, since each of its clauses is one of the
formula's, so `nkrank lower chirotopes ... --drup SUB.drup` turns it into a certificate as it
does a refutation of FORMULA.cnf. A model that the other solver finds instead (its output,
`v` lines of DIMACS literals) is read by `--model MODEL.txt`: the clauses it breaks are added
as one round, saved in ADDED.npy, and the script stops.
"""

import argparse
import itertools
import os
import sys
import time
from math import comb

try:
    import numpy as np
    from pysat.solvers import Solver
except ImportError:
    sys.exit("scripts/cegar-cover.py needs numpy and python-sat: python3 -m pip install numpy python-sat")


def read_formula(path, k, rank):
    """The relation clauses as an array (16 rows of 6 literals per relation), the other clauses
    as lists, and the number of variables."""
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"p cnf"):
                break
        else:
            sys.exit(f"{path}: no `p cnf` line")
        nv = int(line.split()[2])
        numbers = np.fromstring(f.read(), dtype=np.int32, sep=" ")
    relations = comb(k, rank - 2) * comb(k - rank + 2, 4)
    circuits = comb(k, rank + 1)
    if nv != comb(k, rank) or len(numbers) < 2 or numbers[0] != 1 or numbers[1] != 0:
        sys.exit(f"{path} is not the clausal form of rank {rank} on {k} queries")
    at = 2
    gp = numbers[at:at + 7 * 16 * relations].reshape(16 * relations, 7)
    at += 7 * 16 * relations
    acyclic = numbers[at:at + (rank + 2) * 2 * circuits].reshape(2 * circuits, rank + 2)
    at += (rank + 2) * 2 * circuits
    if (gp[:, 6] != 0).any() or (acyclic[:, rank + 1] != 0).any():
        sys.exit(f"{path} is not the clausal form of rank {rank} on {k} queries")
    others = [[1]] + acyclic[:, :rank + 1].tolist()
    rest = numbers[at:]
    start = 0
    for end in np.flatnonzero(rest == 0):
        others.append(rest[start:end].tolist())
        start = end + 1
    return nv, gp[:, :6].copy(), others


def write_subformula(path, nv, others, relation_clauses):
    """The clauses as DIMACS, written to a part file renamed when whole."""
    part = path + ".part"
    with open(part, "w") as f:
        f.write(f"p cnf {nv} {len(others) + len(relation_clauses)}\n")
        for c in others:
            f.write(" ".join(map(str, c)) + " 0\n")
        rows = np.hstack([relation_clauses, np.zeros((len(relation_clauses), 1), dtype=np.int32)])
        np.savetxt(f, rows, fmt="%d")
    os.replace(part, path)


def read_model(path, nv):
    """A solver's model: the literals of its `v` lines, every variable 1..nv set once."""
    value = np.zeros(nv + 1, dtype=np.int8)
    with open(path) as f:
        for line in f:
            if line.startswith("s ") and "UNSATISFIABLE" in line:
                sys.exit(f"{path}: the solver says unsatisfiable; there is no model to read")
            if not line.startswith("v "):
                continue
            for lit in map(int, line.split()[1:]):
                if lit == 0:
                    continue
                if abs(lit) > nv or value[abs(lit)] != 0:
                    sys.exit(f"{path}: literal {lit} names no variable of 1..{nv}, "
                             "or one set twice")
                value[abs(lit)] = 1 if lit > 0 else -1
    if (value[1:] == 0).any():
        sys.exit(f"{path}: {(value[1:] == 0).sum()} of the {nv} variables are not set")
    return value[1:] > 0


def query_symmetries(m, queries):
    """The permutations of the queries that permutations of the m coordinates induce."""
    place = {q: i for i, q in enumerate(queries)}
    found = set()
    for sigma in itertools.permutations(range(m)):
        image = [place.get(sum(1 << sigma[b] for b in range(m) if q >> b & 1)) for q in queries]
        if None not in image:
            found.add(tuple(image))
    return sorted(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("formula")
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--family", required=True, help="the queries, binary, joined by commas")
    ap.add_argument("--state", required=True, help="npy file of the added clauses' numbers")
    ap.add_argument("--relations", action="store_true", help="add whole relations")
    ap.add_argument("--symmetric", action="store_true", help="and their images (with --relations)")
    ap.add_argument("--write-subformula", metavar="SUB.cnf",
                    help="write the clauses added so far and the others as DIMACS, and stop")
    ap.add_argument("--model", metavar="MODEL.txt",
                    help="add the clauses that another solver's model (`v` lines) breaks, and stop")
    args = ap.parse_args()
    m, rank = args.m, args.rank
    queries = [int(t, 2) for t in args.family.split(",")]
    k = len(queries)
    if len(set(queries)) != k or not 3 <= rank < k or any(not 0 < q < 1 << m for q in queries):
        sys.exit("the queries must be distinct nonzero tokens of m bits, more than the rank >= 3")
    if args.symmetric and not args.relations:
        sys.exit("--symmetric needs --relations")
    t0 = time.time()
    nv, gp, others = read_formula(args.formula, k, rank)
    print(f"{k} queries, rank {rank}: {len(gp) // 16} relations, {len(others)} other clauses "
          f"({time.time() - t0:.0f} s to read)", flush=True)
    subsets = list(itertools.combinations(range(k), rank - 2))
    set_number = {x: i for i, x in enumerate(subsets)}
    per_set = comb(k - rank + 2, 4)
    fours = list(itertools.combinations(range(k - rank + 2), 4))
    four_number = {q: i for i, q in enumerate(fours)}
    perms = query_symmetries(m, queries) if args.symmetric else []

    def images(j):
        x = subsets[j // per_set]
        rest = [e for e in range(k) if e not in x]
        four = [rest[t] for t in fours[j % per_set]]
        for p in perms:
            px = tuple(sorted(p[e] for e in x))
            prest = [e for e in range(k) if e not in px]
            yield set_number[px] * per_set + four_number[tuple(sorted(prest.index(p[e]) for e in four))]

    added = np.zeros(len(gp), dtype=bool)
    if os.path.exists(args.state):
        added[np.load(args.state)] = True
        print(f"resumed: {added.sum()} relation clauses", flush=True)
    if args.write_subformula:
        write_subformula(args.write_subformula, nv, others, gp[added])
        print(f"wrote {args.write_subformula}: {len(others)} clauses and {added.sum()} relation "
              "clauses", flush=True)
        return 0
    solver = None
    if not args.model:
        solver = Solver(name="cadical195", bootstrap_with=others)
        for c in gp[added]:
            solver.add_clause(c.tolist())
    variable, negative = np.abs(gp) - 1, gp < 0
    rnd = 0
    while True:
        t0 = time.time()
        if args.model:
            model = read_model(args.model, nv)
        elif not solver.solve():
            print(f"round {rnd}: unsatisfiable in {time.time() - t0:.0f} s, with {added.sum()} "
                  "relation clauses: the cover closes", flush=True)
            return 0
        else:
            model = np.array(solver.get_model()[:nv]) > 0
        solve_time = time.time() - t0
        broken = np.flatnonzero(~(model[variable] ^ negative).any(axis=1))
        if args.model:
            # A model of another formula would make "breaks no relation" mean nothing.
            unsat = [c for c in others if not any(model[abs(x) - 1] == (x > 0) for x in c)]
            if unsat or added[broken].any():
                sys.exit(f"{args.model} breaks {len(unsat) + added[broken].sum()} of the clauses "
                         "given so far: not a model of the subformula")
        if len(broken) == 0:
            print(f"round {rnd}: a model that breaks no relation: an escaping chirotope", flush=True)
            return 1
        if args.relations:
            rels = set((broken // 16).tolist())
            for j in list(rels):
                rels.update(images(j))
            new = np.array(sorted(rels), dtype=np.int64)[:, None] * 16 + np.arange(16)
            new = new.ravel()
        else:
            new = broken
        new = new[~added[new]]
        if solver is not None:
            for c in gp[new]:
                solver.add_clause(c.tolist())
        added[new] = True
        part = args.state + ".part.npy"
        np.save(part, np.flatnonzero(added))
        os.replace(part, args.state)
        print(f"round {rnd}: a model in {solve_time:.0f} s breaks {len(broken)} relation clauses; "
              f"{len(new)} added, {added.sum()} in all ({time.time() - t0:.0f} s)", flush=True)
        if args.model:
            return 0
        rnd += 1


if __name__ == "__main__":
    sys.exit(main())
