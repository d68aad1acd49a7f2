//! Floating-point LPs (good_lp over HiGHS) and the exact post-processing that turns their
//! answers into rationals. Nothing here is trusted: every result goes through the checker.

pub mod exact;
pub mod rank1_lp;
pub mod upper_margin;
