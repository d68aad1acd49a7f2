//! Exact rationals as they appear in certificates: the strings `"p"` or `"p/q"`.
//!
//! Parsing is strict (no whitespace, no `+`, no zero denominator, bounded length) so that a
//! hostile file cannot make the checker allocate without bound or accept two spellings of one
//! number. Printing is canonical (lowest terms, positive denominator), which is what makes
//! certificates byte-for-byte deterministic.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

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
    let (negative, digits) = match num.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, num),
    };
    let decimal = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !decimal(digits) || !den.is_none_or(decimal) {
        return Err(format!("malformed rational {}", clip(s)));
    }
    let p = integer(digits, negative);
    let q = den.map_or_else(BigInt::one, |d| integer(d, false));
    if q.is_zero() {
        return Err(format!("zero denominator in {}", clip(s)));
    }
    // One number, one spelling: reject "6/2", "-0", "007", "0/5", "3/1" and the like. The
    // spelling is canonical (what `format_q` prints) exactly when no part has a leading zero,
    // a `-` stands only before a nonzero numerator, and a denominator, if written, is not 1
    // and is coprime to a nonzero numerator: then `p/q` is in lowest terms with `q > 1`.
    let unpadded = |d: &str| d == "0" || !d.starts_with('0');
    let canonical = unpadded(digits)
        && !(negative && p.is_zero())
        && den.is_none_or(|d| unpadded(d) && !q.is_one() && !p.is_zero() && coprime(&p, &q));
    if !canonical {
        return Err(format!(
            "non-canonical rational {}; write it as {}",
            clip(s),
            clip(&format_q(&Q::new(p, q)))
        ));
    }
    Ok(Q::new_raw(p, q))
}

/// Decimal digits (already checked) as an integer, negated if `negative`; read in a machine
/// word when it fits, which saves most of the time of reading a model.
fn integer(digits: &str, negative: bool) -> BigInt {
    let x = match digits.parse::<u64>() {
        Ok(v) => BigInt::from(v),
        Err(_) => digits.parse().unwrap_or_default(),
    };
    if negative {
        -x
    } else {
        x
    }
}

/// Whether `p` and `q > 0` are coprime, in machine words when both fit.
fn coprime(p: &BigInt, q: &BigInt) -> bool {
    match (p.magnitude().to_u64(), q.magnitude().to_u64()) {
        (Some(a), Some(b)) => num_integer::gcd(a, b) == 1,
        _ => num_integer::Integer::gcd(p, q).is_one(),
    }
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

/// `a` against `b`, by cross-multiplication (denominators are positive). The checker compares
/// rationals only through this and [`eq_q`]: num-rational's own `Ord` and `PartialEq` walk the
/// continued fractions of both numbers by recursion, one stack frame per term, and two numbers
/// of a few thousand digits that share a long prefix of terms overflow a thread's stack (a
/// row-ratio file of 4 KB whose `rho` and witness differed only after 9,500 terms aborted the
/// checker). For the same reason no type of this crate that holds a rational derives
/// `PartialEq`: a comparison of two models, values or proven claims would run that recursion
/// on numbers a file chose.
pub fn cmp_q(a: &Q, b: &Q) -> std::cmp::Ordering {
    (a.numer() * b.denom()).cmp(&(b.numer() * a.denom()))
}

/// `a == b` without recursion (see [`cmp_q`]): rationals are kept in lowest terms with a
/// positive denominator, so equal numbers have equal numerators and denominators.
pub fn eq_q(a: &Q, b: &Q) -> bool {
    a.numer() == b.numer() && a.denom() == b.denom()
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
