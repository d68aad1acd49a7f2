//! Sparse nonnegative-rational matrices, stored by rows with strictly increasing column indices.

use crate::rational::Q;
use num_traits::Zero;

/// A sparse matrix of exact rationals. Absent entries are zero; stored entries are nonzero.
#[derive(Clone, Debug)]
pub struct SparseMatrix {
    rows: usize,
    cols: usize,
    data: Vec<Vec<(usize, Q)>>,
}

impl SparseMatrix {
    /// The `rows x cols` zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        SparseMatrix {
            rows,
            cols,
            data: vec![Vec::new(); rows],
        }
    }

    /// Builds from `(row, col, value)` triplets, which must be in strictly increasing
    /// row-major order, in range, and nonzero (the canonical form certificates use).
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        triplets: Vec<(usize, usize, Q)>,
    ) -> Result<Self, String> {
        let mut m = SparseMatrix::zeros(rows, cols);
        let mut last: Option<(usize, usize)> = None;
        for (i, j, x) in triplets {
            if i >= rows || j >= cols {
                return Err(format!("entry ({i}, {j}) outside a {rows} x {cols} matrix"));
            }
            if let Some(prev) = last {
                if (i, j) <= prev {
                    return Err(format!(
                        "entry ({i}, {j}) out of order or repeated after {prev:?}"
                    ));
                }
            }
            if x.is_zero() {
                return Err(format!(
                    "entry ({i}, {j}) is an explicit zero; omit zero entries"
                ));
            }
            last = Some((i, j));
            m.data[i].push((j, x));
        }
        Ok(m)
    }

    /// Sets entry `(i, j)` (zero removes it); an index out of range is an error and leaves the
    /// matrix unchanged.
    pub fn set(&mut self, i: usize, j: usize, x: Q) -> Result<(), String> {
        let (rows, cols) = (self.rows, self.cols);
        let row = match self.data.get_mut(i) {
            Some(row) if j < cols => row,
            _ => return Err(format!("entry ({i}, {j}) outside a {rows} x {cols} matrix")),
        };
        match row.binary_search_by_key(&j, |e| e.0) {
            Ok(p) if x.is_zero() => {
                row.remove(p);
            }
            Ok(p) => row[p].1 = x,
            Err(_) if x.is_zero() => {}
            Err(p) => row.insert(p, (j, x)),
        }
        Ok(())
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// The nonzero entries of row `i`, by increasing column.
    pub fn row(&self, i: usize) -> &[(usize, Q)] {
        &self.data[i]
    }
    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> Q {
        match self.data[i].binary_search_by_key(&j, |e| e.0) {
            Ok(p) => self.data[i][p].1.clone(),
            Err(_) => Q::zero(),
        }
    }
    /// All nonzero entries in row-major order.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, &Q)> + '_ {
        self.data
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.iter().map(move |(j, x)| (i, *j, x)))
    }
    /// The transpose.
    pub fn transpose(&self) -> SparseMatrix {
        let mut t = SparseMatrix::zeros(self.cols, self.rows);
        for (i, j, x) in self.entries() {
            t.data[j].push((i, x.clone()));
        }
        t
    }
}
