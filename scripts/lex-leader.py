#!/usr/bin/env python3
"""A cover's clausal form with its symmetries broken, for a SAT solver to decide faster.

    python3 scripts/lex-leader.py --m M --rank R --family T1,...,Tk FORMULA.cnf OUT.cnf
    python3 scripts/lex-leader.py --check-model SOLVER_OUTPUT FORMULA.cnf

FORMULA.cnf is what `nkrank lower chirotopes --m M --k K --rank R --cover --family T1,...,Tk
--write-cnf FORMULA.cnf` wrote (docs/CASE_TREES.md section 12). Every permutation of the M
coordinates that maps the set of queries onto itself permutes the queries, and so maps a
chirotope of them to another (the sign of a minor changes with the parity of the sort of its
permuted indices); with the global change of sign these are signed permutations of the
variables. The script checks that each maps the closed splits' clauses onto themselves,
clause for clause, and the axiom clauses of a random sample onto axiom clauses, and then
writes OUT.cnf: the formula without its unit clause (the global sign replaces it) and, for
each symmetry g but the identity, the chain of clauses saying that the assignment is not
larger than its image under g in the lexicographic order of the variables (false before
true). The least image of a model satisfies every chain, so OUT.cnf is satisfiable exactly
when FORMULA.cnf is; a model of OUT.cnf whose first variable is false gives one of
FORMULA.cnf after every sign is changed. With --check-model, the script reads the `v` lines of
a solver's output for OUT.cnf, changes every sign if the first variable is false, and counts
the clauses of FORMULA.cnf that this assignment leaves unsatisfied (none, for a model).

Nothing here is trusted, and nothing here makes a certificate: the checker replays reverse
unit propagation, which does not derive the chains. The script decides which way to look: a
model found is an escaping chirotope (check it against FORMULA.cnf), a refutation of OUT.cnf
says that the cover closes.
"""

import argparse
import itertools
import os
import random
from math import comb


def parity(seq):
    sign = 1
    for i in range(len(seq)):
        for j in range(i + 1, len(seq)):
            if seq[i] > seq[j]:
                sign = -sign
    return sign


def check_model(output, formula):
    """Exit status 0 when the model in `output`, its sign fixed, satisfies `formula`."""
    with open(formula) as f:
        nv = int(f.readline().split()[2])
        value = [None] * (nv + 1)
        with open(output) as o:
            for line in o:
                if line.startswith("v "):
                    for x in map(int, line.split()[1:]):
                        if 0 < abs(x) <= nv:
                            value[abs(x)] = x > 0
        if None in value[1:]:
            raise SystemExit(f"{output}: no complete model of the {nv} variables")
        flip = value[1] is False
        bad = 0
        for i, line in enumerate(f, 1):
            if not any((int(x) > 0) == (value[abs(int(x))] != flip) for x in line.split()[:-1]):
                bad += 1
    print(f"{'signs changed, ' if flip else ''}{bad} clauses of {i} unsatisfied")
    raise SystemExit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--m", type=int)
    ap.add_argument("--rank", type=int)
    ap.add_argument("--family")
    ap.add_argument("--sample", type=float, default=2e-4, help="share of axiom clauses checked")
    ap.add_argument("--check-model", metavar="SOLVER_OUTPUT")
    ap.add_argument("formula")
    ap.add_argument("out", nargs="?")
    a = ap.parse_args()
    if a.check_model:
        check_model(a.check_model, a.formula)
    if None in (a.m, a.rank, a.family, a.out):
        ap.error("--m, --rank, --family and OUT.cnf are needed to write a formula")
    tokens = a.family.split(",")
    # Character c of a token is coordinate m - 1 - c, as nkrank writes them.
    queries = [frozenset(a.m - 1 - c for c, ch in enumerate(t) if ch == "1") for t in tokens]
    index = {q: j for j, q in enumerate(queries)}
    k, r = len(queries), a.rank
    subsets = list(itertools.combinations(range(k), r))
    position = {s: t for t, s in enumerate(subsets)}
    perms = set()
    for sigma in itertools.permutations(range(a.m)):
        images = [frozenset(sigma[i] for i in q) for q in queries]
        if all(q in index for q in images):
            perms.add(tuple(index[q] for q in images))
    # Variable t + 1 (the t-th r-subset) goes to (variable, sign) under each permutation.
    maps = []
    for pi in sorted(perms):
        vm = []
        for s in subsets:
            image = [pi[j] for j in s]
            vm.append((position[tuple(sorted(image))] + 1, parity(image)))
        maps.append(vm)
    # The identity first: the least permutation, with the sign kept.
    symmetries = [(vm, neg) for vm in maps for neg in (1, -1)]
    assert maps[0] == [(t + 1, 1) for t in range(len(subsets))]
    print(f"{len(perms)} permutations of the queries, {len(symmetries)} symmetries with the sign")

    def image(clause, vm, neg):
        return tuple(sorted(vm[abs(l) - 1][0] * vm[abs(l) - 1][1] * neg * (1 if l > 0 else -1)
                            for l in clause))

    axioms = 1 + 16 * comb(k, r - 2) * comb(k - r + 2, 4) + 2 * comb(k, r + 1)
    leaves, sample = [], []
    rng = random.Random(1)
    with open(a.formula) as f:
        head = f.readline().split()
        nv, nc = int(head[2]), int(head[3])
        assert nv == len(subsets), f"{a.formula}: {nv} variables, not C({k}, {r})"
        for i, line in enumerate(f, 1):
            clause = tuple(int(x) for x in line.split()[:-1])
            if i == 1:
                assert clause == (1,), f"{a.formula}: the first clause is not the unit 1"
            elif i > axioms:
                leaves.append(clause)
            elif rng.random() < a.sample:
                sample.append(clause)
    leafset = {tuple(sorted(c)) for c in leaves}
    for vm, neg in symmetries:
        assert all(image(c, vm, neg) in leafset for c in leaves), "a leaf clause without its image"
    print(f"the {len(leaves)} clauses of the closed splits are mapped onto themselves")
    wanted = {image(c, vm, neg) for c in sample for vm, neg in symmetries}
    keys = {tuple(sorted(abs(l) for l in c)) for c in wanted}
    found = set()
    with open(a.formula) as f:
        f.readline()
        for i, line in enumerate(f, 1):
            if i > axioms:
                break
            clause = tuple(int(x) for x in line.split()[:-1])
            if tuple(sorted(abs(l) for l in clause)) in keys:
                found.add(tuple(sorted(clause)))
    assert wanted <= found, f"{len(wanted - found)} images of sampled axiom clauses are missing"
    print(f"the images of {len(sample)} sampled axiom clauses are axiom clauses")
    # The chains: e = "equal so far" (None before the first compared position).
    chains, top = [], nv
    for vm, neg in symmetries[1:]:
        equal = None
        for t in range(nv):
            x = t + 1
            y = vm[t][0] * vm[t][1] * neg
            if y == x:
                continue
            before = [] if equal is None else [-equal]
            chains.append(before + [-x, y])
            if y == -x:
                break
            top += 1
            e = top
            if equal is not None:
                chains.append([-e, equal])
            chains += [[-e, -x, y], [-e, x, -y], before + [-x, -y, e], before + [x, y, e]]
            equal = e
    part = a.out + ".part"
    with open(a.formula) as f, open(part, "w") as out:
        f.readline()
        f.readline()
        out.write(f"p cnf {top} {nc - 1 + len(chains)}\n")
        while chunk := f.read(1 << 24):
            out.write(chunk)
        for c in chains:
            out.write(" ".join(map(str, c)) + " 0\n")
    os.replace(part, a.out)
    print(f"{a.out}: {len(chains)} clauses of chains, {top - nv} auxiliary variables")


if __name__ == "__main__":
    main()
