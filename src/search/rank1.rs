//! rank1
