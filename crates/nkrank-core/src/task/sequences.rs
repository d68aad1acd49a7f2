//! Enumeration of all `n^N` sequences `X in ({0,1}^m)^N`, in lexicographic order.

use super::{num_tokens, Token};

/// Iterator over every sequence of `length` tokens of `m` bits (an odometer).
pub struct Sequences {
    n: u32,
    current: Vec<Token>,
    done: bool,
}

impl Sequences {
    /// All sequences of `length` tokens from `{0,1}^m`. `length = 0` yields the empty sequence
    /// once.
    pub fn new(m: u32, length: usize) -> Self {
        Sequences {
            n: num_tokens(m) as u32,
            current: vec![0; length],
            done: false,
        }
    }
}

impl Iterator for Sequences {
    type Item = Vec<Token>;

    fn next(&mut self) -> Option<Vec<Token>> {
        if self.done {
            return None;
        }
        let out = self.current.clone();
        // Advance the odometer; when every digit wraps, the enumeration is over.
        self.done = true;
        for digit in self.current.iter_mut().rev() {
            *digit += 1;
            if *digit < self.n {
                self.done = false;
                break;
            }
            *digit = 0;
        }
        Some(out)
    }
}
