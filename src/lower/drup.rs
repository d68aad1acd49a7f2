//! Reading another solver's DRUP proof, line by line: the text form (`1 -2 0`, `d 1 -2 0`)
//! and the binary form that CaDiCaL and Kissat write by default (`a` or `d`, then each literal
//! `l` as the unsigned number `2 |l| + (l < 0)` in seven-bit groups, low group first, the high
//! bit of a byte set when another group follows, and a zero byte after the clause). Nothing
//! read here is trusted: the hint pass derives every lemma again and the checker replays it.

use super::sat::DrupLine;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The lines of the proof at `path`, in order: binary when it starts with `a` or one of its
/// first 4,096 bytes is none that text has (every binary clause ends in a zero byte), else
/// text (comments `c ...` skipped). A line that is not a clause ending in 0 is an error item
/// naming its line, or in a binary proof its byte.
pub fn read_drup(
    path: &Path,
) -> Result<Box<dyn Iterator<Item = Result<DrupLine, String>>>, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let first = reader
        .fill_buf()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let text_byte = |b: &u8| b.is_ascii_graphic() || b.is_ascii_whitespace();
    if first.first() == Some(&b'a') || !first.iter().take(1 << 12).all(text_byte) {
        return Ok(Box::new(BinaryDrup {
            bytes: reader.bytes(),
            offset: 0,
            failed: false,
        }));
    }
    Ok(Box::new(reader.lines().enumerate().filter_map(
        move |(i, line)| {
            let parsed = line.map_err(|e| e.to_string()).and_then(|l| text_line(&l));
            parsed
                .map_err(|e| format!("line {}: {e}", i + 1))
                .transpose()
        },
    )))
}

/// One line of a text proof: `None` for a comment or a blank line.
fn text_line(line: &str) -> Result<Option<DrupLine>, String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('c') {
        return Ok(None);
    }
    let (delete, t) = match t.strip_prefix('d') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let mut lits: Vec<i32> = (t.split_whitespace())
        .map(|w| {
            w.parse::<i32>()
                .map_err(|_| format!("{w:?} is not a literal"))
        })
        .collect::<Result<_, _>>()?;
    if lits.pop() != Some(0) || lits.contains(&0) {
        return Err("a clause ends in 0, and only there".into());
    }
    Ok(Some(if delete {
        DrupLine::Delete(lits)
    } else {
        DrupLine::Add(lits)
    }))
}

/// The clauses of a binary proof; after the first error, nothing more.
struct BinaryDrup<R: Read> {
    bytes: std::io::Bytes<R>,
    /// Bytes read so far.
    offset: u64,
    failed: bool,
}

impl<R: Read> BinaryDrup<R> {
    fn byte(&mut self) -> Result<Option<u8>, String> {
        let b = self.bytes.next().transpose().map_err(|e| e.to_string())?;
        self.offset += u64::from(b.is_some());
        Ok(b)
    }

    /// The clause that starts at the current byte, `None` at the end of the proof.
    fn clause(&mut self) -> Result<Option<DrupLine>, String> {
        let start = self.offset;
        let delete = match self.byte()? {
            None => return Ok(None),
            Some(b'a') => false,
            Some(b'd') => true,
            Some(b) => {
                return Err(format!(
                    "byte {start}: a binary clause starts with `a` or `d`, found {b:#04x}"
                ))
            }
        };
        let mut lits = Vec::new();
        loop {
            let mut code: u64 = 0;
            for group in 0.. {
                let at = self.offset;
                let b = self.byte()?.ok_or_else(|| {
                    format!("byte {start}: the proof ends inside a binary clause")
                })?;
                code |= u64::from(b & 0x7f) << (7 * group);
                if b & 0x80 == 0 {
                    break;
                }
                if group == 4 {
                    return Err(format!("byte {at}: a literal longer than five bytes"));
                }
            }
            if code == 0 {
                break;
            }
            let var = i32::try_from(code >> 1)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("byte {start}: literal code {code} names no variable"))?;
            lits.push(if code & 1 == 1 { -var } else { var });
        }
        Ok(Some(if delete {
            DrupLine::Delete(lits)
        } else {
            DrupLine::Add(lits)
        }))
    }
}

impl<R: Read> Iterator for BinaryDrup<R> {
    type Item = Result<DrupLine, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.clause().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// The binary spelling of `lines`, as CaDiCaL and Kissat write it (module documentation): what
/// [`read_drup`] reads back as the same lines.
pub fn binary_drup(lines: &[DrupLine]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        let (tag, lits) = match line {
            DrupLine::Add(l) => (b'a', l),
            DrupLine::Delete(l) => (b'd', l),
        };
        out.push(tag);
        for &l in lits {
            let mut code = 2 * u64::from(l.unsigned_abs()) + u64::from(l < 0);
            while code >= 0x80 {
                out.push((code & 0x7f) as u8 | 0x80);
                code >>= 7;
            }
            out.push(code as u8);
        }
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Vec<Result<DrupLine, String>> {
        let dir = std::env::temp_dir().join(format!("nkrank-drup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("p{}.drup", bytes.len()));
        std::fs::write(&path, bytes).unwrap();
        let lines = read_drup(&path).unwrap().collect();
        std::fs::remove_file(&path).unwrap();
        lines
    }

    #[test]
    fn the_two_spellings_give_the_same_lines() {
        let lines = vec![
            DrupLine::Delete(vec![1, -2, 64]),
            DrupLine::Add(vec![-63, 8191, -8192, 1 << 20, i32::MAX]),
            DrupLine::Add(vec![]),
        ];
        let text = "d 1 -2 64 0\nc a comment\n-63 8191 -8192 1048576 2147483647 0\n\n0\n";
        let from_text: Vec<_> = read(text.as_bytes())
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let from_binary: Vec<_> = read(&binary_drup(&lines))
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(from_text, lines);
        assert_eq!(from_binary, lines);
    }

    #[test]
    fn a_damaged_binary_proof_is_an_error_naming_its_byte() {
        let whole = binary_drup(&[DrupLine::Add(vec![3, -4]), DrupLine::Delete(vec![5])]);
        // Cut inside the second clause: the first is read, then the error, then nothing.
        let lines = read(&whole[..whole.len() - 1]);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], Ok(DrupLine::Add(vec![3, -4])));
        assert_eq!(
            lines[1],
            Err("byte 4: the proof ends inside a binary clause".into())
        );
        let mut wrong_tag = whole.clone();
        wrong_tag[4] = b'x';
        assert_eq!(
            read(&wrong_tag)[1],
            Err("byte 4: a binary clause starts with `a` or `d`, found 0x78".into())
        );
        // Six groups, and a variable beyond the 32-bit literals.
        let long = [b'a', 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0];
        assert_eq!(
            read(&long)[0],
            Err("byte 5: a literal longer than five bytes".into())
        );
        let big = [b'a', 0x80, 0x80, 0x80, 0x80, 0x10, 0];
        assert_eq!(
            read(&big)[0],
            Err("byte 0: literal code 4294967296 names no variable".into())
        );
        // Literal code 1 is "-0".
        assert_eq!(
            read(&[b'a', 1, 0])[0],
            Err("byte 0: literal code 1 names no variable".into())
        );
    }
}
