//! A normalized nonnegative kernel attention head in barycentric form (`docs/PROOFS.md` L1):
//! `K = U V^T` with `U, V >= 0` of shape `n x r`, and a value table `G`, so that the output at a
//! position whose token is `q` is `sum_j K(q,x_j) G(q,x_j) / sum_j K(q,x_j)`.

pub mod levels;
pub mod matrix;
pub mod scaled;

use crate::rational::Q;
use crate::task::{num_tokens, overlap, weight, Token};
pub use matrix::SparseMatrix;
use num_traits::{Signed, Zero};

/// The value table `G(q, z)`, in one of three encodings.
#[derive(Clone, Debug)]
pub enum Values {
    /// `G` as an explicit (sparse) `n x n` matrix; absent entries are 0.
    Dense(SparseMatrix),
    /// `G(q, z) = gamma[q][<q, z>]`; `gamma[q]` has `|q| + 1` entries.
    Levels(Vec<Vec<Q>>),
    /// `G(q, z) = gamma[|q|][|q & z|][|z \ q|]`: values that depend only on the orbit of
    /// `(q, z)` under coordinate permutations.
    Types(Vec<Vec<Vec<Q>>>),
}

impl Values {
    /// `G(q, z)`.
    pub fn get(&self, q: Token, z: Token) -> Q {
        match self {
            Values::Dense(g) => g.get(q as usize, z as usize),
            Values::Levels(gamma) => gamma[q as usize][overlap(q, z) as usize].clone(),
            Values::Types(gamma) => {
                gamma[weight(q) as usize][overlap(q, z) as usize][weight(z & !q) as usize].clone()
            }
        }
    }
}

/// A model of feature rank `r` on `m`-bit tokens. Construct it with [`Model::new`], which checks
/// every dimension, so that evaluation code can index without further checks.
#[derive(Clone, Debug)]
pub struct Model {
    m: u32,
    u: SparseMatrix,
    v: SparseMatrix,
    values: Values,
}

impl Model {
    /// Checks shapes (`U`, `V` are `2^m x r`; the value table fits `m`) and nonnegativity.
    pub fn new(m: u32, u: SparseMatrix, v: SparseMatrix, values: Values) -> Result<Model, String> {
        if m > crate::task::MAX_M_TOKENS {
            return Err(format!("m = {m} is too large for an explicit model"));
        }
        let n = num_tokens(m);
        if u.rows() != n || v.rows() != n {
            return Err(format!(
                "U and V must have 2^m = {n} rows, found {} and {}",
                u.rows(),
                v.rows()
            ));
        }
        if u.cols() != v.cols() {
            return Err(format!("U has {} columns but V has {}", u.cols(), v.cols()));
        }
        for (name, mat) in [("U", &u), ("V", &v)] {
            if let Some((i, j, x)) = mat.entries().find(|(_, _, x)| x.is_negative()) {
                return Err(format!(
                    "{name}[{i}][{j}] = {x} is negative: features must be nonnegative"
                ));
            }
        }
        match &values {
            Values::Dense(g) => {
                if g.rows() != n || g.cols() != n {
                    return Err(format!(
                        "dense G must be {n} x {n}, found {} x {}",
                        g.rows(),
                        g.cols()
                    ));
                }
            }
            Values::Levels(gamma) => {
                if gamma.len() != n {
                    return Err(format!(
                        "level table must have {n} rows, found {}",
                        gamma.len()
                    ));
                }
                for (q, row) in gamma.iter().enumerate() {
                    let want = weight(q as Token) as usize + 1;
                    if row.len() != want {
                        return Err(format!(
                            "level table row {q} must have |q| + 1 = {want} entries, found {}",
                            row.len()
                        ));
                    }
                }
            }
            Values::Types(gamma) => {
                if gamma.len() != m as usize + 1 {
                    return Err(format!(
                        "type table must have m + 1 = {} blocks, found {}",
                        m + 1,
                        gamma.len()
                    ));
                }
                for (w, block) in gamma.iter().enumerate() {
                    if block.len() != w + 1 || block.iter().any(|r| r.len() != m as usize - w + 1) {
                        return Err(format!(
                            "type table block {w} must be {} x {}",
                            w + 1,
                            m as usize - w + 1
                        ));
                    }
                }
            }
        }
        Ok(Model { m, u, v, values })
    }

    /// Bits per token.
    pub fn m(&self) -> u32 {
        self.m
    }
    /// Feature rank `r` (columns of `U` and `V`).
    pub fn rank(&self) -> usize {
        self.u.cols()
    }
    /// Query features.
    pub fn u(&self) -> &SparseMatrix {
        &self.u
    }
    /// Key features.
    pub fn v(&self) -> &SparseMatrix {
        &self.v
    }
    /// The value table.
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// `K(q, z)` computed directly from the definition.
    pub fn kernel(&self, q: Token, z: Token) -> Q {
        let mut s = Q::zero();
        for (c, uc) in self.u.row(q as usize) {
            let vz = self.v.get(z as usize, *c);
            if !vz.is_zero() {
                s += uc * vz;
            }
        }
        s
    }
}
