//! Searches that produce certificates: floating-point LPs propose, exact checks dispose.

pub mod certify;
pub mod full_rank;
pub mod rank1;
pub mod table_render;
pub mod upper;
