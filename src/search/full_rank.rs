//! Full-rank
