#!/usr/bin/env python3
"""Decides a DIMACS CNF file with CaDiCaL 1.9.5 (PyPI package python-sat) and, when it is
unsatisfiable, writes CaDiCaL's DRUP proof as text, for `nkrank lower chirotopes ... --drup`.

    pip install python-sat
    python3 scripts/cadical-drup.py [--unsat] F.cnf F.drup

`--unsat` sets the two options that CaDiCaL's own configuration for unsatisfiable formulas
(`cadical --unsat`) sets, no stabilising phases and no local search (`stabilize=0`, `walk=0`).

Prints SAT or UNSAT with the time taken; exit status 10 (satisfiable) or 20 (unsatisfiable),
as SAT solvers report them. The proof is written only for an unsatisfiable formula, first to
F.drup.part and then renamed, so that a cut run leaves no proof behind."""
import os
import sys
import time

from pysat.formula import CNF
from pysat.solvers import Cadical195


def main():
    args = sys.argv[1:]
    unsat = args[:1] == ["--unsat"]
    if unsat:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: cadical-drup.py [--unsat] FORMULA.cnf PROOF.drup")
    formula, proof = args
    start = time.time()
    cnf = CNF(from_file=formula)
    # With --unsat the options are set before the first clause, as CaDiCaL requires; without
    # it the solver is built as before, so that earlier proofs are reproduced byte for byte.
    with Cadical195(bootstrap_with=None if unsat else cnf.clauses, with_proof=True) as solver:
        if unsat:
            solver.configure({"stabilize": 0, "walk": 0})
            solver.append_formula(cnf.clauses)
        satisfiable = solver.solve()
        print(f"{'SAT' if satisfiable else 'UNSAT'} after {time.time() - start:.1f} s", flush=True)
        if satisfiable:
            sys.exit(10)
        part = proof + ".part"
        with open(part, "w") as out:
            for line in solver.get_proof():
                out.write(line + "\n")
        os.replace(part, proof)
    sys.exit(20)


if __name__ == "__main__":
    main()
