//! Certified lower bounds beyond rank 1 (issue 4): row-ratio lemmas (`docs/PROOFS.md` L7) and
//! multiplicative fooling sets (B2), and case trees (B3). The LP solver proposes; every object returned here has
//! already passed the checker's exact code.

pub mod aggregated;
pub mod case_tree;
pub mod chirotope;
pub mod clausal_cover;
pub mod cover_scan;
pub mod cubes;
pub mod drup;
pub mod fooling;
pub mod hint_checkpoint;
pub mod permutations;
pub mod ratio_lp;
pub mod row_set_scan;
pub mod row_sets;
pub mod runs;
pub mod sat;
pub mod theory;
pub mod unreduced;
pub mod witness;
