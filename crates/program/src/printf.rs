//! Device `printf` (`vprintf(format, args)`): C99 formatting of the argument buffer nvcc builds, where each
//! argument sits at its natural alignment (4 bytes for `int`-sized ones, 8 for doubles, pointers and the
//! `l`/`ll`/`z`/`j`/`t` lengths; floats arrive promoted to double, chars and shorts to int).
//!
//! The output is what the C library's `printf` gives for the same format and values (flags `-+ #0`, width
//! and precision, `*` read from the arguments, `hh`/`h` truncation, `%g`'s choice between fixed and
//! exponent form and its trailing-zero removal, `%a`), checked against glibc in the tests.

/// Formats one lane's `printf`. `load(address, size)` reads generic memory.
pub fn format<E>(
    fmt_addr: u64,
    args_addr: u64,
    load: &mut dyn FnMut(u64, u32) -> Result<u64, E>,
) -> Result<Vec<u8>, E> {
    let mut fmt = Vec::new();
    for i in 0..4096u64 {
        let b = load(fmt_addr + i, 1)? as u8;
        if b == 0 {
            break;
        }
        fmt.push(b);
    }
    let mut offset = 0u64;
    let mut next = |size: u64, load: &mut dyn FnMut(u64, u32) -> Result<u64, E>| -> Result<u64, E> {
        offset = offset.div_ceil(size) * size;
        let v = load(args_addr + offset, size as u32)?;
        offset += size;
        Ok(v)
    };
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            let w = next(4, load)? as u32 as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = w.unsigned_abs() as usize;
        } else {
            spec.width = digits(&fmt, &mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = if fmt.get(i) == Some(&b'*') {
                i += 1;
                let p = next(4, load)? as u32 as i32;
                (p >= 0).then_some(p as usize)
            } else {
                Some(digits(&fmt, &mut i))
            };
        }
        let mut length = Length::Int;
        while let Some(&l) = fmt.get(i) {
            length = match (l, length) {
                (b'h', Length::Short) => Length::Char,
                (b'h', _) => Length::Short,
                (b'l' | b'q' | b'j' | b'z' | b't' | b'L', _) => Length::Long,
                _ => break,
            };
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        let size = if length == Length::Long { 8 } else { 4 };
        match conv {
            b'%' => out.push(b'%'),
            b'd' | b'i' => {
                let raw = next(size, load)?;
                let v = match length {
                    Length::Long => raw as i64,
                    Length::Int => raw as u32 as i32 as i64,
                    Length::Short => raw as u16 as i16 as i64,
                    Length::Char => raw as u8 as i8 as i64,
                };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                spec.integer(&mut out, sign, "", v.unsigned_abs().to_string());
            }
            b'u' | b'o' | b'x' | b'X' => {
                let raw = next(size, load)?;
                let v = match length {
                    Length::Long => raw,
                    Length::Int => raw & 0xFFFF_FFFF,
                    Length::Short => raw & 0xFFFF,
                    Length::Char => raw & 0xFF,
                };
                let (digits, prefix) = match conv {
                    b'u' => (v.to_string(), ""),
                    b'o' => (format!("{v:o}"), ""),
                    b'x' => (format!("{v:x}"), if spec.alt && v != 0 { "0x" } else { "" }),
                    _ => (format!("{v:X}"), if spec.alt && v != 0 { "0X" } else { "" }),
                };
                // `%#o` makes the first digit a zero (raising the precision if it must).
                // `%#o` makes the first digit a zero.
                let prefix = if conv == b'o' && spec.alt { "0" } else { prefix };
                spec.integer(&mut out, "", prefix, digits);
            }
            b'c' => {
                let c = next(4, load)? as u8;
                spec.pad(&mut out, &[c], false);
            }
            b's' => {
                let ptr = next(8, load)?;
                let mut s = Vec::new();
                if ptr == 0 {
                    s.extend_from_slice(b"(null)");
                } else {
                    for k in 0..65536u64 {
                        if spec.precision.is_some_and(|p| s.len() >= p) {
                            break;
                        }
                        let b = load(ptr + k, 1)? as u8;
                        if b == 0 {
                            break;
                        }
                        s.push(b);
                    }
                }
                if let Some(p) = spec.precision {
                    s.truncate(p);
                }
                spec.pad(&mut out, &s, false);
            }
            b'p' => {
                let p = next(8, load)?;
                let text = if p == 0 { "(nil)".to_string() } else { format!("0x{p:x}") };
                spec.pad(&mut out, text.as_bytes(), false);
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let x = f64::from_bits(next(8, load)?);
                spec.float(&mut out, conv, x);
            }
            b'n' => {
                // Writes through a pointer in C; device printf ignores it.
                next(8, load)?;
            }
            _ => out.extend_from_slice(&fmt[start..i]),
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Length {
    Char,
    Short,
    Int,
    Long,
}

#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

fn digits(fmt: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = fmt.get(*i).filter(|c| c.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(usize::from(d - b'0')).min(1 << 20);
        *i += 1;
    }
    n
}

impl Spec {
    /// Pads `body` (already signed and prefixed) to the width: left, right, or with zeros after the sign
    /// and prefix (`zero_after` bytes of `body`).
    fn pad(&self, out: &mut Vec<u8>, body: &[u8], zero_pad: bool) {
        self.pad_split(out, &[], body, zero_pad);
    }

    fn pad_split(&self, out: &mut Vec<u8>, head: &[u8], body: &[u8], zero_pad: bool) {
        let len = head.len() + body.len();
        let fill = self.width.saturating_sub(len);
        if self.left {
            out.extend_from_slice(head);
            out.extend_from_slice(body);
            out.extend(std::iter::repeat_n(b' ', fill));
        } else if zero_pad {
            out.extend_from_slice(head);
            out.extend(std::iter::repeat_n(b'0', fill));
            out.extend_from_slice(body);
        } else {
            out.extend(std::iter::repeat_n(b' ', fill));
            out.extend_from_slice(head);
            out.extend_from_slice(body);
        }
    }

    /// An integer conversion: `digits` of the magnitude, raised to the precision's minimum digit count
    /// (a zero precision prints nothing for zero), after the sign and prefix.
    /// `prefix` "0" is `%#o`'s: a zero added only where the digits do not already start with one.
    fn integer(&self, out: &mut Vec<u8>, sign: &str, prefix: &str, digits: String) {
        let mut digits = if self.precision == Some(0) && digits == "0" { String::new() } else { digits };
        if let Some(p) = self.precision {
            if digits.len() < p {
                digits = "0".repeat(p - digits.len()) + &digits;
            }
        }
        let prefix = if prefix == "0" && digits.starts_with('0') { "" } else { prefix };
        let head = format!("{sign}{prefix}");
        // `0` is ignored with a precision or with `-`.
        let zero = self.zero && !self.left && self.precision.is_none();
        self.pad_split(out, head.as_bytes(), digits.as_bytes(), zero);
    }

    fn float(&self, out: &mut Vec<u8>, conv: u8, x: f64) {
        let upper = conv.is_ascii_uppercase();
        let sign = if x.is_sign_negative() {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        };
        if !x.is_finite() {
            let word = match (x.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            self.pad_split(out, sign.as_bytes(), word.as_bytes(), false);
            return;
        }
        let a = x.abs();
        let (prefix, body) = match conv.to_ascii_lowercase() {
            b'f' => ("", fixed(a, self.precision.unwrap_or(6), self.alt)),
            b'e' => ("", exponent(a, self.precision.unwrap_or(6), self.alt, upper)),
            b'g' => ("", general(a, self.precision.unwrap_or(6), self.alt, upper)),
            _ => (if upper { "0X" } else { "0x" }, hex_float(a, self.precision, self.alt, upper)),
        };
        let head = format!("{sign}{prefix}");
        self.pad_split(out, head.as_bytes(), body.as_bytes(), self.zero && !self.left);
    }
}

/// `%f` of a non-negative finite value.
fn fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `%e` of a non-negative finite value: `d.ddde±XX`, at least two exponent digits.
fn exponent(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if alt && precision == 0 { "." } else { "" };
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{dot}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

/// `%g`: `%e` or `%f` by the exponent the value has at `precision` significant digits, trailing zeros
/// removed unless `#`.
fn general(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let p = precision.max(1);
    let x = if a == 0.0 {
        0
    } else {
        let s = format!("{a:.*e}", p - 1);
        s.split_once('e').and_then(|(_, e)| e.parse::<i64>().ok()).unwrap_or(0)
    };
    let mut s = if (p as i64) > x && x >= -4 {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    } else {
        exponent(a, p - 1, alt, upper)
    };
    if !alt {
        let (num, exp) = match s.find(['e', 'E']) {
            Some(k) => (s[..k].to_string(), s[k..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = if num.contains('.') { num.trim_end_matches('0').trim_end_matches('.').to_string() } else { num };
        s = num + &exp;
    }
    s
}

/// `%a` digits and exponent (after the `0x`) of a non-negative finite value: `h.hhhp±d`.
fn hex_float(a: f64, precision: Option<usize>, alt: bool, upper: bool) -> String {
    let bits = a.to_bits();
    let (mut lead, mut mantissa, exp) = match ((bits >> 52) & 0x7ff) as i64 {
        0 if bits & ((1 << 52) - 1) == 0 => (0u64, 0u64, 0i64),
        0 => (0, bits & ((1 << 52) - 1), -1022),
        e => (1, bits & ((1 << 52) - 1), e - 1023),
    };
    let mut digits = 13usize;
    if let Some(p) = precision.filter(|&p| p < 13) {
        // Round the 52-bit fraction to `p` hex digits, half to even.
        let drop = 4 * (13 - p) as u32;
        let rest = mantissa & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        mantissa >>= drop;
        let odd = if p == 0 { lead & 1 == 1 } else { mantissa & 1 == 1 };
        if rest > half || (rest == half && odd) {
            mantissa += 1;
            if mantissa >> (4 * p) != 0 {
                mantissa &= (1u64 << (4 * p)) - 1;
                lead += 1;
            }
        }
        digits = p;
    }
    let mut frac = if digits == 0 { String::new() } else { format!("{mantissa:0digits$x}") };
    if precision.is_none() {
        frac = frac.trim_end_matches('0').to_string();
    } else if let Some(p) = precision.filter(|&p| p > 13) {
        frac.push_str(&"0".repeat(p - 13));
    }
    let dot = if !frac.is_empty() || alt { "." } else { "" };
    let s = format!("{lead}{dot}{frac}p{}{}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    if upper {
        s.to_ascii_uppercase()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One argument as nvcc places it in the buffer.
    #[derive(Clone, Copy, Debug)]
    enum A {
        I(i32),
        L(i64),
        D(f64),
    }

    /// Formats `fmt` with `args` through [`format`], from a fake memory holding both.
    fn ours(fmt: &str, args: &[A]) -> String {
        let mut mem = vec![0u8; 4096];
        mem[..fmt.len()].copy_from_slice(fmt.as_bytes());
        let base = 1024usize;
        let mut off = 0usize;
        for a in args {
            let (bytes, size): (Vec<u8>, usize) = match *a {
                A::I(v) => (v.to_le_bytes().to_vec(), 4),
                A::L(v) => (v.to_le_bytes().to_vec(), 8),
                A::D(v) => (v.to_le_bytes().to_vec(), 8),
            };
            off = off.div_ceil(size) * size;
            mem[base + off..base + off + size].copy_from_slice(&bytes);
            off += size;
        }
        let out = format::<()>(0, base as u64, &mut |addr, size| {
            let a = addr as usize;
            let mut v = 0u64;
            for k in 0..size as usize {
                v |= u64::from(*mem.get(a + k).ok_or(())?) << (8 * k);
            }
            Ok(v)
        })
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    /// What glibc's snprintf gives for a format with one or two arguments.
    fn theirs(fmt: &str, args: &[A]) -> String {
        let cfmt = std::ffi::CString::new(fmt).unwrap();
        let mut buf = vec![0u8; 512];
        let p = buf.as_mut_ptr() as *mut libc::c_char;
        // SAFETY: the format's conversions match the argument types (the tests pair them).
        let n = unsafe {
            match args {
                [] => libc::snprintf(p, 512, cfmt.as_ptr()),
                [A::I(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *a),
                [A::L(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *a),
                [A::D(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *a),
                [A::I(w), A::D(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *w, *a),
                [A::I(w), A::I(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *w, *a),
                [A::I(w), A::I(pr), A::D(a)] => libc::snprintf(p, 512, cfmt.as_ptr(), *w, *pr, *a),
                other => panic!("no oracle for {other:?}"),
            }
        };
        String::from_utf8_lossy(&buf[..n.clamp(0, 511) as usize]).into_owned()
    }

    #[test]
    fn integers_match_glibc() {
        let values = [0, 1, -1, 42, -42, 255, 123456, i32::MAX, i32::MIN, 0xbeef];
        let flags = ["", "-", "+", " ", "#", "0", "-0", "+ ", "#0", "-#"];
        let widths = ["", "1", "5", "12"];
        let precisions = ["", ".", ".0", ".3", ".8"];
        let lengths = ["", "h", "hh"];
        for conv in ["d", "i", "u", "x", "X", "o"] {
            for f in flags {
                for w in widths {
                    for p in precisions {
                        for l in lengths {
                            let fmt = format!("[%{f}{w}{p}{l}{conv}]");
                            for v in values {
                                assert_eq!(ours(&fmt, &[A::I(v)]), theirs(&fmt, &[A::I(v)]), "{fmt} of {v}");
                            }
                        }
                    }
                }
            }
        }
        for fmt in ["%ld", "%lld", "%llu", "%llx", "%+lld", "%20lld", "%-#20llx", "%zu", "%jd"] {
            for v in [0i64, -5, 1 << 40, i64::MIN, i64::MAX, -1] {
                assert_eq!(ours(fmt, &[A::L(v)]), theirs(fmt, &[A::L(v)]), "{fmt} of {v}");
            }
        }
    }

    #[test]
    fn floats_match_glibc() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e-5,
            1e-4,
            123.456,
            100000.0,
            1234567.0,
            std::f64::consts::PI,
            2.5,
            0.5,
            1e300,
            1e-300,
            5e-324,
            6.02e23,
            -0.000123,
            999999.5,
            9.9999999,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let flags = ["", "-", "+", " ", "#", "0", "+0", "-#"];
        let widths = ["", "8", "15"];
        let precisions = ["", ".0", ".1", ".3", ".10"];
        for conv in ["f", "F", "e", "E", "g", "G", "a", "A"] {
            for f in flags {
                for w in widths {
                    for p in precisions {
                        let fmt = format!("[%{f}{w}{p}{conv}]");
                        for v in values {
                            // glibc prints `%#g` of a value that rounds up to the next power of ten with
                            // one significant digit ("1.e+06"); C99 asks for all six ("1.00000e+06").
                            if f.contains('#') && conv.eq_ignore_ascii_case("g") && v == 999999.5 {
                                continue;
                            }
                            assert_eq!(ours(&fmt, &[A::D(v)]), theirs(&fmt, &[A::D(v)]), "{fmt} of {v:e}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn stars_chars_and_literals_match_glibc() {
        assert_eq!(ours("[%*d]", &[A::I(6), A::I(42)]), theirs("[%*d]", &[A::I(6), A::I(42)]));
        assert_eq!(ours("[%*d]", &[A::I(-6), A::I(42)]), theirs("[%*d]", &[A::I(-6), A::I(42)]));
        assert_eq!(ours("[%.*f]", &[A::I(2), A::D(1.23456)]), theirs("[%.*f]", &[A::I(2), A::D(1.23456)]));
        let three = [A::I(10), A::I(3), A::D(2.0 / 3.0)];
        assert_eq!(ours("[%*.*e]", &three), theirs("[%*.*e]", &three));
        for fmt in ["[%c]", "[%5c]", "[%-5c]"] {
            assert_eq!(ours(fmt, &[A::I(65)]), theirs(fmt, &[A::I(65)]));
        }
        assert_eq!(ours("100%% done", &[]), theirs("100%% done", &[]));
        assert_eq!(ours("%%d", &[]), "%d");
    }

    #[test]
    fn strings_read_memory() {
        // "%s|%.2s|%5s|%-5s|" with the string "abc" at 256.
        let mut mem = vec![0u8; 2048];
        let fmt = b"%s|%.2s|%5s|%-5s|%s|";
        mem[..fmt.len()].copy_from_slice(fmt);
        mem[256..259].copy_from_slice(b"abc");
        for k in 0..4 {
            mem[1024 + 8 * k..1024 + 8 * k + 8].copy_from_slice(&256u64.to_le_bytes());
        }
        let out = format::<()>(0, 1024, &mut |a, s| {
            let mut v = 0u64;
            for k in 0..s as usize {
                v |= u64::from(mem[a as usize + k]) << (8 * k);
            }
            Ok(v)
        })
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "abc|ab|  abc|abc  |(null)|");
    }
}
