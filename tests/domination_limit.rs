//! The limit of the premise of Theorem K (`docs/CASE_TREES.md` section 9.2): the domination
//! kernels in `docs/domination/` (nonnegative `U`, `V` of rank `m - 2` whose kernel gives a
//! token two or more levels above another less weight, in every row) are checked here in exact
//! integers, by the level minima and maxima that `scripts/domination-relaxation.py check` uses
//! and, for a few rows, by the definition itself over every pair of tokens. Without their last
//! feature they must fail, since Theorem K's argument refutes every domination kernel of rank
//! `m - 3`.

use flate2::read::GzDecoder;
use serde_json::Value;
use std::path::PathBuf;

struct Kernel {
    m: u32,
    rank: usize,
    u: Vec<Vec<u128>>,
    v: Vec<Vec<u128>>,
}

fn read(name: &str) -> Kernel {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/domination")
        .join(name);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_reader(GzDecoder::new(file)).unwrap();
    let matrix = |key: &str| -> Vec<Vec<u128>> {
        (doc[key].as_array().unwrap().iter())
            .map(|row| {
                (row.as_array().unwrap().iter())
                    .map(|x| u128::from(x.as_u64().unwrap()))
                    .collect()
            })
            .collect()
    };
    assert_eq!(doc["ratios"], Value::Bool(false));
    let kernel = Kernel {
        m: doc["m"].as_u64().unwrap() as u32,
        rank: doc["rank"].as_u64().unwrap() as usize,
        u: matrix("U"),
        v: matrix("V"),
    };
    let n = 1usize << kernel.m;
    assert_eq!((kernel.u.len(), kernel.v.len()), (n, n));
    // The script scales U to at most 2^30 and V to at most 2^62: with a rank below 16 every
    // kernel entry stays below 2^96, far inside u128.
    assert!(kernel.rank < 16);
    for (rows, cap) in [(&kernel.u, 1u128 << 30), (&kernel.v, 1u128 << 62)] {
        for row in rows {
            assert_eq!(row.len(), kernel.rank);
            assert!(row.iter().all(|&x| x <= cap));
        }
    }
    kernel
}

impl Kernel {
    fn entry(&self, q: usize, z: usize, features: usize) -> u128 {
        (0..features).map(|k| self.u[q][k] * self.v[z][k]).sum()
    }

    /// The first row `q` and levels `(alpha, beta)`, `beta >= alpha + 2`, where some key at
    /// level `beta` does not get less than some key at level `alpha`, using the first
    /// `features` features.
    fn first_violation(&self, features: usize) -> Option<(usize, u32, u32)> {
        let m = self.m;
        for q in 0..1usize << m {
            let mut lo = vec![u128::MAX; m as usize + 1];
            let mut hi = vec![None; m as usize + 1];
            for z in 0..1usize << m {
                let level = (q & z).count_ones() as usize;
                let k = self.entry(q, z, features);
                lo[level] = lo[level].min(k);
                hi[level] = hi[level].max(Some(k));
            }
            for alpha in 0..=m {
                for beta in alpha + 2..=m {
                    if let Some(h) = hi[beta as usize] {
                        if h >= lo[alpha as usize] {
                            return Some((q, alpha, beta));
                        }
                    }
                }
            }
        }
        None
    }
}

fn kernel_of_rank_m_minus_2(name: &str, m: u32) {
    let kernel = read(name);
    assert_eq!((kernel.m, kernel.rank), (m, m as usize - 2));
    assert_eq!(kernel.first_violation(kernel.rank), None, "{name}");
    // The definition itself, every pair of tokens, in the row of the first query of each
    // weight (the full query among them): the level minima and maxima above must agree with it.
    let n = 1usize << m;
    for q in (0..=m).map(|w| (1usize << w) - 1) {
        let row: Vec<u128> = (0..n).map(|z| kernel.entry(q, z, kernel.rank)).collect();
        for a in 0..n {
            for b in 0..n {
                if (q & b).count_ones() >= (q & a).count_ones() + 2 {
                    let (ka, kb) = (row[a], row[b]);
                    assert!(kb < ka, "{name}: K({q}, {b}) = {kb} >= K({q}, {a}) = {ka}");
                }
            }
        }
    }
    // Theorem K: no domination kernel of rank m - 3; without its last feature this one fails.
    assert!(kernel.first_violation(kernel.rank - 1).is_some(), "{name}");
}

#[test]
fn signs_alone_admit_rank_7_at_m_9() {
    kernel_of_rank_m_minus_2("m09-r7.json.gz", 9);
}

#[test]
fn signs_alone_admit_rank_8_at_m_10() {
    kernel_of_rank_m_minus_2("m10-r8.json.gz", 10);
}
