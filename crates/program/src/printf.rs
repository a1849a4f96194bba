//! Device `printf` (`vprintf(format, args)`): C-style formatting of the argument buffer nvcc builds, where
//! each argument sits at its natural alignment (doubles for `%f`, 8 bytes for pointers and `%ll`).

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
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut offset = 0u64;
    let mut next = |size: u64, load: &mut dyn FnMut(u64, u32) -> Result<u64, E>| -> Result<u64, E> {
        offset = offset.div_ceil(size) * size;
        let v = load(args_addr + offset, size as u32)?;
        offset += size;
        Ok(v)
    };
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        // %[flags][width][.precision][length]conversion
        let start = i;
        i += 1;
        while i < fmt.len() && b"-+ #0".contains(&fmt[i]) {
            i += 1;
        }
        while i < fmt.len() && (fmt[i].is_ascii_digit() || fmt[i] == b'.' || fmt[i] == b'*') {
            i += 1;
        }
        let len_start = i;
        while i < fmt.len() && b"hlLqjzt".contains(&fmt[i]) {
            i += 1;
        }
        let long = fmt[len_start..i].iter().filter(|&&b| b == b'l').count() >= 2 || fmt[len_start..i].contains(&b'z');
        let Some(&conv) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        let spec = std::str::from_utf8(&fmt[start + 1..len_start]).unwrap_or("");
        let (left, zero, plus, width, precision) = parse_spec(spec);
        let text = match conv {
            b'%' => "%".to_string(),
            b'd' | b'i' => {
                let v = if long { next(8, load)? as i64 } else { next(4, load)? as u32 as i32 as i64 };
                let s = v.abs().to_string();
                sign(v < 0, plus) + &s
            }
            b'u' => (if long { next(8, load)? } else { next(4, load)? & 0xFFFF_FFFF }).to_string(),
            b'x' => format!("{:x}", if long { next(8, load)? } else { next(4, load)? & 0xFFFF_FFFF }),
            b'X' => format!("{:X}", if long { next(8, load)? } else { next(4, load)? & 0xFFFF_FFFF }),
            b'o' => format!("{:o}", if long { next(8, load)? } else { next(4, load)? & 0xFFFF_FFFF }),
            b'c' => ((next(4, load)? as u8) as char).to_string(),
            b'p' => format!("0x{:x}", next(8, load)?),
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let x = f64::from_bits(next(8, load)?);
                let p = precision.unwrap_or(6);
                let body = match conv {
                    b'f' | b'F' => format!("{:.*}", p, x.abs()),
                    b'e' => c_exp(x.abs(), p, false),
                    b'E' => c_exp(x.abs(), p, true),
                    _ => format!("{}", x.abs()),
                };
                let body = if x.is_nan() {
                    "nan".to_string()
                } else if x.is_infinite() {
                    "inf".to_string()
                } else {
                    body
                };
                sign(x.is_sign_negative() && !x.is_nan(), plus) + &body
            }
            b's' => {
                let ptr = next(8, load)?;
                let mut s = Vec::new();
                for k in 0..4096u64 {
                    let b = load(ptr + k, 1)? as u8;
                    if b == 0 {
                        break;
                    }
                    s.push(b);
                }
                let mut s = String::from_utf8_lossy(&s).into_owned();
                if let Some(p) = precision {
                    s.truncate(p);
                }
                s
            }
            other => format!("%{}", other as char),
        };
        let pad = width.saturating_sub(text.chars().count());
        if left {
            out.extend_from_slice(text.as_bytes());
            out.extend(std::iter::repeat_n(b' ', pad));
        } else if zero && conv != b's' && conv != b'c' {
            let (sign_part, digits) = if text.starts_with(['-', '+']) { text.split_at(1) } else { ("", text.as_str()) };
            out.extend_from_slice(sign_part.as_bytes());
            out.extend(std::iter::repeat_n(b'0', pad));
            out.extend_from_slice(digits.as_bytes());
        } else {
            out.extend(std::iter::repeat_n(b' ', pad));
            out.extend_from_slice(text.as_bytes());
        }
    }
    Ok(out)
}

fn sign(negative: bool, plus: bool) -> String {
    if negative {
        "-".into()
    } else if plus {
        "+".into()
    } else {
        String::new()
    }
}

fn parse_spec(spec: &str) -> (bool, bool, bool, usize, Option<usize>) {
    let flags_end = spec.find(|c: char| !"-+ #0".contains(c)).unwrap_or(spec.len());
    let flags = &spec[..flags_end];
    let rest = &spec[flags_end..];
    let (w, p) = match rest.split_once('.') {
        Some((w, p)) => (w, Some(p.parse().unwrap_or(0))),
        None => (rest, None),
    };
    (flags.contains('-'), flags.contains('0'), flags.contains('+'), w.parse().unwrap_or(0), p)
}

fn c_exp(x: f64, precision: usize, upper: bool) -> String {
    let s = format!("{:.*e}", precision, x);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}
