//! The float model that training moves: positive features through their logarithms, free
//! values, and the starts it is built from (random, gap features, blocks, a certificate, a
//! model of one rank more or of `m - 1` bits).

use super::*;
use crate::search::upper::rationalize::to_f64;
use rand::Rng;

/// The neutral start of the values, `G(q, z) = <q, z>` (the target when `z` attains the
/// minimum), row-major `n x n`.
fn level_values(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|i| overlap((i / n) as Token, (i % n) as Token) as f64)
        .collect()
}

/// A float model with positive features: `U = exp(a)`, `V = exp(b)`, values `g`.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatModel {
    /// Bits per token.
    pub m: u32,
    /// Feature rank.
    pub r: usize,
    /// Log query features, row-major `n x r`.
    pub a: Vec<f64>,
    /// Log key features, row-major `n x r`.
    pub b: Vec<f64>,
    /// Values `G(q, z)`, row-major `n x n`.
    pub g: Vec<f64>,
}

impl FloatModel {
    /// A random start: log-features uniform in `[-spread, spread]`, values `G(q, z) = <q, z>`
    /// (the target when `z` attains the minimum, a neutral start).
    pub fn random(m: u32, r: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let n = num_tokens(m);
        let mut draw = || {
            (0..n * r)
                .map(|_| rng.gen_range(-spread..=spread))
                .collect::<Vec<f64>>()
        };
        let a = draw();
        let b = draw();
        let g = level_values(n);
        FloatModel { m, r, a, b, g }
    }

    /// The gap start (`--start gap`): feature 0 is constant (`U = V = 1`), and feature `k >= 1`
    /// belongs to one coordinate `i`, with `U(q, k) = [i in q]` and `V(z, k) = [i not in z]`
    /// (an absent entry is `e^-4` rather than 0), so that `K(q, z)` is about
    /// `1 + |(q \ z) & S|`, the coordinates of `q` that `z` misses, counted on a set `S` of
    /// `r - 1` coordinates. With `r <= m + 1` the other `m - r + 1` coordinates form a block that no
    /// feature singles out; with `r > m + 1` the features beyond `m + 1` are random as in
    /// [`FloatModel::random`]. Every log-feature then gets a uniform jitter in `[-0.1, 0.1]`
    /// from `rng`, which makes restarts differ. The values start at `G(q, z) = <q, z>`.
    ///
    /// Why this start: the committed trained models of rank `m - 2` look like it (at
    /// `m = 6, 7` the query row of almost every one-coordinate token outside a block of three
    /// coordinates sits on one feature, and at `m = 6, 7, 8` swapping two coordinates of the
    /// block hardly changes the rows), and from it targeted training finds those ranks in 3 to
    /// 25 s where random starts took up to minutes (`docs/BENCHMARKS.md`).
    pub fn gap(m: u32, r: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let block = (m as usize + 1).saturating_sub(r);
        let singles: Vec<usize> = (block..m as usize).take(r.saturating_sub(1)).collect();
        FloatModel::with_gaps(m, r, 1, &singles, spread, rng)
    }

    /// The start of `--start gap --gap-features K`: features `0..K` are the gap features of
    /// the last `K` coordinates (as in [`FloatModel::gap`]), with no constant feature, and the
    /// other `r - K` features are random as in [`FloatModel::random`]; the same jitter.
    ///
    /// Why this start: the trained models of `m = 9` and `10` are not of the shape of
    /// [`FloatModel::gap`]; they have no constant feature, and almost every coordinate has a
    /// gap feature of its own (`nkrank explain`, "The shape of the features"): 8 of the 9
    /// coordinates and nothing else in the rank-8 certificate of `m = 9`, all 10 and two weak
    /// features in the rank-12 certificate of `m = 10`. The rank-11 starts of `m = 10` that
    /// ended nearer 1/2 had more of them (9 coordinates for 0.5021, 6 or 7 for 0.506 to
    /// 0.512). This start fixes that number instead of leaving it to the seed
    /// (`docs/UPPER_BOUNDS.md`, "What the models look like").
    pub fn gaps(m: u32, r: usize, k: usize, spread: f64, rng: &mut ChaCha8Rng) -> FloatModel {
        let k = k.min(r).min(m as usize);
        let singles: Vec<usize> = (m as usize - k..m as usize).collect();
        FloatModel::with_gaps(m, r, 0, &singles, spread, rng)
    }

    /// The start of `--start gap --blocks SPEC`: feature `c` belongs to group `c` of `blocks`
    /// (a group of one coordinate gives its gap feature, as in [`FloatModel::gaps`]; a larger
    /// group a block feature, see [`Blocks`]), no feature is constant, and the features beyond
    /// the groups are random as in [`FloatModel::random`]; groups beyond the rank are left
    /// out. The same jitter.
    pub fn blocks(m: u32, r: usize, blocks: &Blocks, spread: f64, rng: &mut ChaCha8Rng) -> Self {
        FloatModel::with_groups(m, r, 0, blocks.masks(), spread, rng)
    }

    /// Features `0..first` constant, then one gap feature per coordinate of `singles`, then
    /// random ones; every log-feature jittered (the two gap starts above).
    fn with_gaps(
        m: u32,
        r: usize,
        first: usize,
        singles: &[usize],
        spread: f64,
        rng: &mut ChaCha8Rng,
    ) -> FloatModel {
        let masks: Vec<u16> = singles.iter().map(|&i| 1 << i).collect();
        FloatModel::with_groups(m, r, first, &masks, spread, rng)
    }

    /// Features `0..first` constant, then one feature per group of coordinates (a bit mask):
    /// with `k` of the group's `s` coordinates in the token, `ln U = step (k - s)` and
    /// `ln V = -step k`, the step [`GAP_STEP`] for one coordinate (a gap feature) and
    /// [`BLOCK_STEP`] for more; then random features; every log-feature jittered.
    fn with_groups(
        m: u32,
        r: usize,
        first: usize,
        groups: &[u16],
        spread: f64,
        rng: &mut ChaCha8Rng,
    ) -> FloatModel {
        const JITTER: f64 = 0.1;
        let n = num_tokens(m);
        let mut a = vec![0.0; n * r];
        let mut b = vec![0.0; n * r];
        for z in 0..n {
            for c in first..r {
                let (x, y) = match groups.get(c - first) {
                    Some(&mask) => {
                        let step = if mask.count_ones() == 1 {
                            GAP_STEP
                        } else {
                            BLOCK_STEP
                        };
                        group_logs(u64::from(mask), step, z)
                    }
                    None => (
                        rng.gen_range(-spread..=spread),
                        rng.gen_range(-spread..=spread),
                    ),
                };
                a[z * r + c] = x;
                b[z * r + c] = y;
            }
        }
        for x in a.iter_mut().chain(b.iter_mut()) {
            *x += rng.gen_range(-JITTER..=JITTER);
        }
        let g = level_values(n);
        FloatModel { m, r, a, b, g }
    }

    /// The model in a small binary form (`NKFM1`, then `m` and `r`, then `a`, `b`, `g` as
    /// little-endian `f64`): exact, unlike a decimal text of the floats.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = b"NKFM1\n".to_vec();
        bytes.extend_from_slice(&self.m.to_le_bytes());
        bytes.extend_from_slice(&(self.r as u64).to_le_bytes());
        for x in self.a.iter().chain(&self.b).chain(&self.g) {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes
    }

    /// Reads [`FloatModel::to_bytes`]; anything malformed (or with bytes after it) is none.
    pub fn from_bytes(bytes: &[u8]) -> Option<FloatModel> {
        let rest = bytes.strip_prefix(b"NKFM1\n")?;
        let m = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
        let r = usize::try_from(u64::from_le_bytes(rest.get(4..12)?.try_into().ok()?)).ok()?;
        if !(1..=12).contains(&m) || r == 0 || r > 1 << 12 {
            return None;
        }
        let n = num_tokens(m);
        let floats: Vec<f64> = rest
            .get(12..)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if floats.len() != 2 * n * r + n * n || rest.len() != 12 + 8 * floats.len() {
            return None;
        }
        let (a, tail) = floats.split_at(n * r);
        let (b, g) = tail.split_at(n * r);
        Some(FloatModel {
            m,
            r,
            a: a.to_vec(),
            b: b.to_vec(),
            g: g.to_vec(),
        })
    }

    /// Writes the model atomically ([`FloatModel::to_bytes`]): the descent start that a
    /// resumed run reloads.
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        crate::cert::io::write_atomic(path, &self.to_bytes())
    }

    /// Reads a model written by [`FloatModel::save`]; anything malformed counts as none.
    pub fn load(path: &std::path::Path) -> Option<FloatModel> {
        FloatModel::from_bytes(&std::fs::read(path).ok()?)
    }

    /// The float form of an exact model (a start for training or rank descent): `a = ln U`,
    /// `b = ln V` (a zero entry becomes [`LOG_ZERO`], a feature too small to matter), `g = G`.
    pub fn from_model(model: &Model) -> FloatModel {
        let (m, r) = (model.m(), model.rank());
        let n = num_tokens(m);
        let logs = |mat: &crate::model::SparseMatrix| -> Vec<f64> {
            let mut out = vec![LOG_ZERO; n * r];
            for (i, c, x) in mat.entries() {
                let v = to_f64(x);
                if v > 0.0 {
                    out[i * r + c] = v.ln().max(LOG_ZERO);
                }
            }
            out
        };
        let g = (0..n * n)
            .map(|i| to_f64(&model.values().get((i / n) as Token, (i % n) as Token)))
            .collect();
        FloatModel {
            m,
            r,
            a: logs(model.u()),
            b: logs(model.v()),
            g,
        }
    }

    /// `U` as rows of floats.
    pub fn u_rows(&self) -> Vec<Vec<f64>> {
        self.a
            .chunks(self.r)
            .map(|row| row.iter().map(|x| x.exp()).collect())
            .collect()
    }

    /// `V` as rows of floats.
    pub fn v_rows(&self) -> Vec<Vec<f64>> {
        self.b
            .chunks(self.r)
            .map(|row| row.iter().map(|x| x.exp()).collect())
            .collect()
    }

    /// The model whose features are the given ones of this model, in that order.
    fn with_columns(&self, columns: &[usize]) -> FloatModel {
        let pick = |x: &[f64]| -> Vec<f64> {
            x.chunks(self.r)
                .flat_map(|row| columns.iter().map(|&j| row[j]))
                .collect()
        };
        FloatModel {
            m: self.m,
            r: columns.len(),
            a: pick(&self.a),
            b: pick(&self.b),
            g: self.g.clone(),
        }
    }

    /// The same model with feature `c` moved to the last column (the others keep their order).
    pub fn with_feature_last(&self, c: usize) -> FloatModel {
        let order: Vec<usize> = (0..self.r).filter(|&j| j != c).chain([c]).collect();
        self.with_columns(&order)
    }

    /// The model without feature `c` (rank descent).
    pub fn without_feature(&self, c: usize) -> FloatModel {
        let kept: Vec<usize> = (0..self.r).filter(|&j| j != c).collect();
        self.with_columns(&kept)
    }

    /// The model with features `c < d` merged into one (`u_c v_c + u_d v_d` replaced by the
    /// product of the averaged columns; a start for rank descent, not an identity).
    pub fn with_features_merged(&self, c: usize, d: usize) -> FloatModel {
        let merge = |x: &[f64]| -> Vec<f64> {
            x.chunks(self.r)
                .flat_map(|row| {
                    let mut out: Vec<f64> = row
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != d)
                        .map(|(_, v)| *v)
                        .collect();
                    out[c] = ((row[c].exp() + row[d].exp()) * 0.5).ln();
                    out
                })
                .collect()
        };
        FloatModel {
            m: self.m,
            r: self.r - 1,
            a: merge(&self.a),
            b: merge(&self.b),
            g: self.g.clone(),
        }
    }

    /// The model lifted to `m + 1` bits with one feature more (a start for `m + 1`, not an
    /// identity). The new coordinate is the top bit. Features `0..r` read the other bits as
    /// before; the new feature is a gap feature of the new coordinate: `V(z, r)` is 1 when the
    /// key lacks it (`e^-6` otherwise), and `U(q, r)` is the geometric mean of the row's old
    /// kernel when the query has it (`e^-6` of that otherwise). So a query with the new bit
    /// weighs a key that misses it more, one level lower, and the old rows are unchanged. The
    /// values shift by the new coordinate's overlap: `G(q, z) = G'(q', z') + [both have it]`,
    /// with `G'` clamped to `[-1, m + 1]`.
    pub fn lifted(&self) -> FloatModel {
        let (n, r) = (num_tokens(self.m), self.r);
        let (m, big_n, big_r) = (self.m + 1, 2 * n, r + 1);
        let log_means = self.log_kernel_means();
        let mut a = vec![0.0; big_n * big_r];
        let mut b = vec![0.0; big_n * big_r];
        for x in 0..big_n {
            let low = x % n;
            a[x * big_r..x * big_r + r].copy_from_slice(&self.a[low * r..(low + 1) * r]);
            b[x * big_r..x * big_r + r].copy_from_slice(&self.b[low * r..(low + 1) * r]);
            let (du, dv) = group_logs(1 << self.m, PAD_GAP_STEP, x);
            a[x * big_r + r] = log_means[low] + du;
            b[x * big_r + r] = dv;
        }
        // Values far outside the targets' range only matter where the old kernel nearly
        // vanishes; the new feature changes that, so they are kept in `[-1, m + 1]`.
        let top = f64::from(m) + 1.0;
        let g = (0..big_n * big_n)
            .map(|i| {
                let (q, z) = (i / big_n, i % big_n);
                let old = self.g[(q % n) * n + z % n].clamp(-1.0, top);
                old + f64::from(u8::from(q >= n && z >= n))
            })
            .collect();
        FloatModel {
            m,
            r: big_r,
            a,
            b,
            g,
        }
    }

    /// `ln` of the geometric mean of each row of the kernel `U V^T`: the scale at which a new
    /// feature enters a row ([`FloatModel::lifted`], [`FloatModel::padded`]).
    fn log_kernel_means(&self) -> Vec<f64> {
        let n = num_tokens(self.m);
        let vr = self.v_rows();
        (0..n)
            .map(|q| {
                row_kernel(self, &vr, q)
                    .iter()
                    .map(|k| k.max(f64::MIN_POSITIVE).ln())
                    .sum::<f64>()
                    / n as f64
            })
            .collect()
    }

    /// The model with `r - self.r` features more, for a start of rank `r` (not an identity):
    /// first a gap feature of each coordinate that has none (as `nkrank explain` reads the
    /// features, [`crate::explain::features::FeatureShape::gap_of`]), in increasing order;
    /// then, while features are missing, weak blocks of two coordinates, the coordinates
    /// whose strongest gap feature is weakest first. A new feature of a group of `s`
    /// coordinates, `k` of which the token holds, has `ln U(q) = mu_q + step (k - s)` and
    /// `ln V(z) = -step k`, with `mu_q` the log of the geometric mean of row `q` of the kernel
    /// (so it enters each row at that row's scale, as the new feature of
    /// [`FloatModel::lifted`]) and the step [`PAD_GAP_STEP`] for a gap feature, [`PAD_WEAK_STEP`]
    /// for a weak block. The values are kept. A rank not above the model's is the model itself.
    ///
    /// Why: the lift of the rank-8 certificate of `m = 9` to `m = 10` has the 8 bent gap
    /// features of that model and the gap feature of the new coordinate, but none for the
    /// coordinate the model of `m = 9` leaves without one; the rank-12 certificate of `m = 10`
    /// has ten gap features and two weak features of two coordinates each
    /// (`docs/UPPER_BOUNDS.md`, "What the models look like").
    pub fn padded(&self, r: usize) -> FloatModel {
        if r <= self.r {
            return self.clone();
        }
        let (m, n, old_r) = (self.m, num_tokens(self.m), self.r);
        let rows = |x: &[f64]| -> Vec<Vec<f64>> { x.chunks(old_r).map(<[f64]>::to_vec).collect() };
        let shapes = crate::explain::features::shapes_from_logs(m, &rows(&self.a), &rows(&self.b));
        // The strength of each coordinate's strongest gap feature (0 without one).
        let mut strength = vec![0.0f64; m as usize];
        for shape in &shapes {
            if let (Some(i), Some(d)) = (shape.gap_of(), shape.gap_effects.as_ref()) {
                strength[i] = strength[i].max(d[i]);
            }
        }
        let mut groups: Vec<(u64, f64)> = (0..m as usize)
            .filter(|&i| strength[i] == 0.0)
            .map(|i| (1u64 << i, PAD_GAP_STEP))
            .collect();
        let mut weakest: Vec<usize> = (0..m as usize).collect();
        weakest.sort_by(|&i, &j| strength[i].total_cmp(&strength[j]).then(i.cmp(&j)));
        let pairs = weakest.chunks_exact(2).cycle();
        groups.extend(
            pairs
                .map(|p| ((1u64 << p[0]) | (1u64 << p[1]), PAD_WEAK_STEP))
                .take(r - old_r),
        );
        groups.truncate(r - old_r);
        let log_means = self.log_kernel_means();
        let mut a = vec![0.0; n * r];
        let mut b = vec![0.0; n * r];
        for x in 0..n {
            a[x * r..x * r + old_r].copy_from_slice(&self.a[x * old_r..(x + 1) * old_r]);
            b[x * r..x * r + old_r].copy_from_slice(&self.b[x * old_r..(x + 1) * old_r]);
            for (c, &(mask, step)) in groups.iter().enumerate() {
                let (du, dv) = group_logs(mask, step, x);
                a[x * r + old_r + c] = log_means[x] + du;
                b[x * r + old_r + c] = dv;
            }
        }
        FloatModel {
            m,
            r,
            a,
            b,
            g: self.g.clone(),
        }
    }

    /// How much each feature contributes to the kernel: `sum_q U[q, c] * sum_z V[z, c]`,
    /// relative to the row totals (the least useful feature is the one to prune).
    pub fn feature_weights(&self) -> Vec<f64> {
        let n = num_tokens(self.m);
        let (u, v) = (self.u_rows(), self.v_rows());
        let mut out = vec![0.0; self.r];
        let col_sums: Vec<f64> = (0..self.r)
            .map(|c| (0..n).map(|z| v[z][c]).sum::<f64>())
            .collect();
        for uq in &u {
            let k: Vec<f64> = uq.iter().zip(&col_sums).map(|(x, s)| x * s).collect();
            let tot: f64 = k.iter().sum();
            for (o, kc) in out.iter_mut().zip(&k) {
                *o += kc / tot;
            }
        }
        out
    }
}
