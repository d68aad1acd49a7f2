//! Exact rationals as they appear in certificates: the strings `"p"` or `"p/q"`.
//!
//! Parsing is strict (no whitespace, no `+`, no zero denominator, bounded length) so that a
//! hostile file cannot make the checker allocate without bound or accept two spellings of one
//! number. Printing is canonical (lowest terms, positive denominator), which is what makes
//! certificates byte-for-byte deterministic.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The exact number type used wherever a decision is made.
pub type Q = BigRational;

/// Longest accepted rational string. Real certificates stay far below; the cap keeps a
/// hostile file from forcing gigantic bignum arithmetic.
pub const MAX_RATIONAL_CHARS: usize = 4096;

/// Parses `"p"` or `"p/q"` (decimal, optional leading `-` on `p`, `q > 0`).
pub fn parse_q(s: &str) -> Result<Q, String> {
    if s.is_empty() {
        return Err("empty string where a rational was expected".into());
    }
    if s.len() > MAX_RATIONAL_CHARS {
        return Err(format!(
            "rational with {} characters exceeds the limit of {MAX_RATIONAL_CHARS}",
            s.len()
        ));
    }
    let (num, den) = match s.split_once('/') {
        Some((p, q)) => (p, Some(q)),
        None => (s, None),
    };
    let p = parse_int(num, true).ok_or_else(|| format!("malformed rational {}", clip(s)))?;
    let q = match den {
        Some(d) => parse_int(d, false).ok_or_else(|| format!("malformed rational {}", clip(s)))?,
        None => BigInt::one(),
    };
    if q.is_zero() {
        return Err(format!("zero denominator in {}", clip(s)));
    }
    let x = Q::new(p, q);
    // One number, one spelling: reject "6/2", "-0", "007", "0/5" and the like.
    let canonical = format_q(&x);
    if canonical != s {
        return Err(format!(
            "non-canonical rational {}; write it as {}",
            clip(s),
            clip(&canonical)
        ));
    }
    Ok(x)
}

/// The string quoted for an error message, shortened if long (hostile input can be huge).
fn clip(s: &str) -> String {
    if s.len() <= 60 {
        format!("{s:?}")
    } else {
        // Cut by characters, never by byte index: the text may hold multi-byte characters.
        let head: String = s.chars().take(40).collect();
        format!("{head:?}... ({} characters)", s.chars().count())
    }
}

fn parse_int(s: &str, allow_minus: bool) -> Option<BigInt> {
    let digits = match s.strip_prefix('-') {
        Some(rest) if allow_minus => rest,
        Some(_) => return None,
        None => s,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Canonical text of a rational: `"p"` when integral, else `"p/q"` in lowest terms.
pub fn format_q(x: &Q) -> String {
    if x.denom().is_one() {
        x.numer().to_string()
    } else {
        format!("{}/{}", x.numer(), x.denom())
    }
}

/// [`format_q`] for messages: a long number (hostile input can make one huge) is shortened to
/// its first digits and its length, so that every message stays one short line.
pub fn format_q_short(x: &Q) -> String {
    let s = format_q(x);
    if s.len() <= 60 {
        s
    } else {
        let head: String = s.chars().take(30).collect();
        format!("{head}... ({} characters)", s.len())
    }
}

/// Shorthand for the rational `p / q` from machine integers.
pub fn q(p: i64, d: i64) -> Q {
    Q::new(BigInt::from(p), BigInt::from(d))
}

/// The rational one half, the error threshold of the task.
pub fn half() -> Q {
    q(1, 2)
}

/// A small count in its one spelling (decimal, 1 to `max_digits` digits, no sign, no leading
/// zero), as orbit labels write it.
pub fn parse_count(s: &str, max_digits: usize) -> Option<u32> {
    let canonical = !s.is_empty()
        && s.len() <= max_digits
        && s.bytes().all(|c| c.is_ascii_digit())
        && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}
