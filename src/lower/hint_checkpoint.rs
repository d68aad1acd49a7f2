//! The saved state of the backward pass of `hints_from_rup` (`sat.rs`), so that an interrupted
//! pass resumes where it was instead of starting over (solver side; nothing here is trusted:
//! the hints it carries go into a certificate that the checker replays).
//!
//! The state is saved where the pass rebuilds its watch lists. There, everything the rest of
//! the pass reads is a function of what the file holds and of what the forward pass rebuilds
//! from the same formula and proof: the level-0 trail is the forward pass's, unset back to the
//! lemma's time; the watch lists are rebuilt from the clauses' current literal order (saved);
//! the core marks and the hints already found are saved. So a resumed pass writes the same
//! hints, byte for byte, as one that was never interrupted (a unit test interrupts it at every
//! save in turn). A file whose fingerprint (a hash of the formula and of every proof line the
//! forward pass read, by the standard library's hasher, so that a build of another Rust
//! release may not recognise it) or sizes do not match the present pass is not used.
//!
//! The file, little-endian: the magic `NKHINTS1`; then as `u64` the fingerprint, the lemma
//! index `j` at which the pass resumes, the low end `low` of its watch lists, the number of
//! lemmas checked; the literal codes (`u64` count, then `u32` each); the core marks (`u64`
//! count, one byte each); the hints found (`u64` count of lemmas, then per lemma its index,
//! the number of hints and the hints, all `u64`).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// Where the backward pass keeps its state, and how often it saves it.
#[derive(Clone, Copy, Debug)]
pub struct HintCheckpoint<'a> {
    /// The file, written atomically and removed when the pass has succeeded.
    pub path: &'a Path,
    /// The least time between two saves (each writes the literals of every clause).
    pub every: Duration,
}

/// How often the command line's passes save: a save writes about as many bytes as the clauses
/// take in memory (368 MB, in 0.4 s, for the first round of `r*(7, 3) >= 5`,
/// `docs/CASE_TREES.md` section 12), so not more often than every five minutes.
pub const SAVE_EVERY: Duration = Duration::from_secs(300);

const MAGIC: &[u8; 8] = b"NKHINTS1";

/// Where the backward pass stands when it is saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// The needed lemma (index among the proof's lemmas) at which the pass resumes: the watch
    /// lists are rebuilt there, before it is checked.
    pub j: usize,
    /// The low end of the watch lists rebuilt at `j`.
    pub low: u32,
    /// Needed lemmas checked before `j` (for the progress bar).
    pub checked: usize,
}

/// A saved state of the backward pass, as read back.
#[derive(Debug, PartialEq, Eq)]
pub struct Saved {
    /// Where the pass resumes.
    pub at: Position,
    /// Every clause's literal codes, in their order at `at.j`.
    pub lits: Vec<u32>,
    /// The core marks at `j`.
    pub core: Vec<bool>,
    /// The hints of the lemmas checked so far (all after `j`): lemma index, clause indices.
    pub hints: Vec<(usize, Vec<usize>)>,
}

/// What the present pass expects of a saved state: its fingerprint and sizes.
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    /// Hash of the formula and of every proof line the forward pass read.
    pub fingerprint: u64,
    /// Literal codes stored for all clauses.
    pub lits: usize,
    /// Clauses (formula and lemmas).
    pub clauses: usize,
    /// Lemmas of the proof.
    pub lemmas: usize,
    /// Literal codes are below this (twice the variables).
    pub codes: u32,
}

/// Writes the state of the pass at `at` with its fingerprint to `path`, atomically: every
/// clause's literal codes `lits`, the core marks `core`, and per lemma its hints if it was
/// checked (`hints`).
pub fn save(
    path: &Path,
    fingerprint: u64,
    at: Position,
    lits: &[u32],
    core: &[bool],
    hints: &[Option<Vec<usize>>],
) -> Result<(), String> {
    fn put(w: &mut dyn Write, x: u64) -> std::io::Result<()> {
        w.write_all(&x.to_le_bytes())
    }
    crate::cert::io::write_atomic_with(path, |w| {
        w.write_all(MAGIC)?;
        put(w, fingerprint)?;
        put(w, at.j as u64)?;
        put(w, u64::from(at.low))?;
        put(w, at.checked as u64)?;
        put(w, lits.len() as u64)?;
        for &c in lits {
            w.write_all(&c.to_le_bytes())?;
        }
        put(w, core.len() as u64)?;
        let marks: Vec<u8> = core.iter().map(|&b| u8::from(b)).collect();
        w.write_all(&marks)?;
        put(w, hints.iter().filter(|h| h.is_some()).count() as u64)?;
        for (i, hints) in hints.iter().enumerate() {
            if let Some(hints) = hints {
                put(w, i as u64)?;
                put(w, hints.len() as u64)?;
                for &h in hints {
                    put(w, h as u64)?;
                }
            }
        }
        Ok(())
    })
}

/// Reads the state saved in `path`: `Ok(None)` if there is no file, `Err` (why) if it is not
/// one that the present pass can use.
pub fn load(path: &Path, expected: &Expected) -> Result<Option<Saved>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let mut r = std::io::BufReader::new(file);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(|_| "too short")?;
    if &magic != MAGIC {
        return Err("not a saved backward pass".into());
    }
    let get = |r: &mut std::io::BufReader<std::fs::File>| -> Result<u64, String> {
        let mut b = [0u8; 8];
        r.read_exact(&mut b).map_err(|_| "cut short".to_string())?;
        Ok(u64::from_le_bytes(b))
    };
    if get(&mut r)? != expected.fingerprint {
        return Err("saved for another formula or proof".into());
    }
    // Every count is checked against the present pass before anything is allocated for it.
    let within = |x: u64, bound: usize, what: &str| -> Result<usize, String> {
        usize::try_from(x)
            .ok()
            .filter(|&x| x <= bound)
            .ok_or_else(|| format!("{what} {x} out of range"))
    };
    let j = within(get(&mut r)?, expected.lemmas.saturating_sub(1), "lemma")?;
    let low = u32::try_from(get(&mut r)?).map_err(|_| "low end out of range")?;
    let checked = within(get(&mut r)?, expected.lemmas, "count of lemmas checked")?;
    let n_lits = get(&mut r)?;
    if n_lits != expected.lits as u64 {
        return Err(format!("{n_lits} literals, not {}", expected.lits));
    }
    // Read in pieces, so that the literals are not held twice (they are most of the file).
    let mut lits: Vec<u32> = Vec::with_capacity(expected.lits);
    let mut piece = vec![0u8; 1 << 16];
    while lits.len() < expected.lits {
        let take = (4 * (expected.lits - lits.len())).min(piece.len());
        r.read_exact(&mut piece[..take]).map_err(|_| "cut short")?;
        for b in piece[..take].chunks_exact(4) {
            let c = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if c >= expected.codes {
                return Err(format!("literal code {c} out of range"));
            }
            lits.push(c);
        }
    }
    let n_core = get(&mut r)?;
    if n_core != expected.clauses as u64 {
        return Err(format!("{n_core} core marks, not {}", expected.clauses));
    }
    let mut marks = vec![0u8; expected.clauses];
    r.read_exact(&mut marks).map_err(|_| "cut short")?;
    if marks.iter().any(|&b| b > 1) {
        return Err("a core mark neither 0 nor 1".into());
    }
    let core = marks.into_iter().map(|b| b == 1).collect();
    let found = within(get(&mut r)?, expected.lemmas, "count of lemmas with hints")?;
    let mut hints = Vec::with_capacity(found);
    for _ in 0..found {
        let i = within(get(&mut r)?, expected.lemmas.saturating_sub(1), "lemma")?;
        if i <= j {
            return Err(format!("hints for lemma {i}, not after {j}"));
        }
        let len = within(get(&mut r)?, expected.clauses, "count of hints")?;
        let mut these = Vec::with_capacity(len);
        for _ in 0..len {
            these.push(within(
                get(&mut r)?,
                expected.clauses.saturating_sub(1),
                "hint",
            )?);
        }
        hints.push((i, these));
    }
    if r.read(&mut [0u8; 1]).map_err(|e| e.to_string())? != 0 {
        return Err("bytes after the end".into());
    }
    Ok(Some(Saved {
        at: Position { j, low, checked },
        lits,
        core,
        hints,
    }))
}
