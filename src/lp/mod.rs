//! LPs
