#!/usr/bin/env bash
# Rebuilds and checks the certificate of r*(7, 3) >= 5 (docs/CASE_TREES.md section 12): rank 4
# refuted on the 14 queries of the complement of the 7-cycle by a cover whose clausal form
# CaDiCaL refutes. Together with the committed model of rank 5, r*(7, 3) = 5.
#
#   apt-get install cadical                 # once: the Debian package (version sc2021)
#   bash scripts/m07-lower-r5.sh [--python-sat] [DIR]   # default DIR: m07-lower
#
# The stages, their resumption and their options are those of scripts/cover-refutation.sh.
set -euo pipefail
pysat=()
[ "${1:-}" = --python-sat ] && pysat=(--python-sat) && shift
[ "${1:-}" = --unsat ] && shift
exec bash "$(dirname "$0")/cover-refutation.sh" m07-lower-r5 "${pysat[@]}" "${1:-m07-lower}"
