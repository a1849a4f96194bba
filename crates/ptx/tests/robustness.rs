//! Generated hostile inputs: parsing must return (a module, or at least one diagnostic pointing inside the
//! file) without panicking, overflowing the stack or taking more than linear time.

mod common;

use common::Rng;

/// Parses `input` and checks the result's shape; returns whether it parsed.
fn check(name: &str, input: &[u8]) -> bool {
    match ptx::parse_bytes(input) {
        Ok(_) => true,
        Err(diags) => {
            assert!(!diags.is_empty(), "{name}: Err without diagnostics");
            assert!(diags.len() <= ptx::diagnostic::MAX_DIAGNOSTICS, "{name}: {} diagnostics", diags.len());
            let index = ptx::LineIndex::new(input);
            let lines = index.lines();
            for d in &diags {
                assert!(
                    d.span.start <= d.span.end && d.span.end as usize <= input.len(),
                    "{name}: bad span {:?}",
                    d.span
                );
                let (line, _) = index.line_col(input, d.span.start);
                assert!((1..=lines).contains(&line), "{name}: line {line} outside the file");
            }
            // Rendering must not panic either (the first few suffice).
            let _ = ptx::diagnostic::render_all(&diags[..diags.len().min(3)], name, input);
            false
        }
    }
}

const HEADER: &str = ".version 8.5\n.target sm_80\n.address_size 64\n";

#[test]
fn five_megabyte_single_line() {
    // One line of 5 MB: a valid kernel whose body is a long run of instructions, then the same run with
    // every separator removed.
    let mut body = String::from(HEADER);
    body.push_str(".visible .entry k() { .reg .b32 %r<3>; ");
    while body.len() < 5 << 20 {
        body.push_str("add.s32 %r1, %r2, 1; ");
    }
    body.push_str("ret; }");
    assert!(body[HEADER.len()..].find('\n').is_none());
    assert!(check("long_line", body.as_bytes()));
    let glued: String = body.replace([' ', ';'], "");
    assert!(!check("glued", glued.as_bytes()));
}

#[test]
fn deep_blocks() {
    let mut s = String::from(HEADER);
    s.push_str(".visible .entry k() ");
    s.push_str(&"{".repeat(100_000));
    assert!(!check("deep_open_blocks", s.as_bytes()));
    s.push_str(&"}".repeat(100_000));
    assert!(!check("deep_balanced_blocks", s.as_bytes()));
}

#[test]
fn deep_initializer_braces() {
    let mut s = String::from(HEADER);
    s.push_str(".global .u32 x[1] = ");
    s.push_str(&"{".repeat(100_000));
    s.push('1');
    assert!(!check("deep_open_init", s.as_bytes()));
    s.push_str(&"}".repeat(100_000));
    s.push(';');
    assert!(!check("deep_init", s.as_bytes()));
}

#[test]
fn deep_expressions() {
    let mut s = String::from(HEADER);
    s.push_str(".global .u32 x = ");
    s.push_str(&"(".repeat(100_000));
    s.push('1');
    s.push_str(&")".repeat(100_000));
    s.push_str(";\n.global .u32 y = 1");
    s.push_str(&"+1".repeat(100_000));
    s.push_str(";\n.global .u32 z = ");
    s.push_str(&"-~!".repeat(100_000));
    s.push_str("1;\n");
    assert!(!check("deep_expr", s.as_bytes()));
}

#[test]
fn many_errors_and_wide_lists() {
    // Many errors stop at the cap; a huge flat initializer and a huge operand vector are fine.
    let mut s = String::from(HEADER);
    s.push_str(".visible .entry k() {\n");
    s.push_str(&"bogus %r1;\n".repeat(10_000));
    s.push('}');
    assert!(!check("many_errors", s.as_bytes()));
    let mut s = String::from(HEADER);
    s.push_str(".global .u8 x[200000] = {");
    s.push_str(&"1, ".repeat(199_999));
    s.push_str("1};\n.visible .entry k() { mov.b32 {");
    s.push_str(&"%r1, ".repeat(50_000));
    s.push_str("%r1}, %r2; ret; }\n");
    assert!(check("wide", s.as_bytes()));
}

#[test]
fn random_bytes() {
    let mut rng = Rng::new(7);
    for i in 0..200 {
        let len = rng.below(2000);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check(&format!("random_{i}"), &bytes);
        // Random printable PTX-ish tokens.
        const PIECES: &[&str] = &[
            ".reg",
            ".b32",
            "%r1",
            "{",
            "}",
            "[",
            "]",
            "(",
            ")",
            ",",
            ";",
            "add",
            ".s32",
            "@",
            "!",
            "|",
            "-",
            "+",
            "0x1F",
            "0f3F800000",
            "1.5e3",
            "\"s\"",
            ".entry",
            "k",
            ".visible",
            "/*",
            "*/",
            "//",
            "\n",
            "=",
            "<",
            ">",
            ".global",
            ".section",
            ".b8",
            ":",
            "$L1",
            "_",
            "generic",
            ".loc",
            ".file",
            ".version",
            "8.5",
        ];
        let text: String = (0..rng.below(400)).map(|_| PIECES[rng.below(PIECES.len())]).collect::<Vec<_>>().join(" ");
        check(&format!("tokens_{i}"), text.as_bytes());
    }
}

#[test]
fn corpus_mutations() {
    // Byte flips, insertions, deletions and truncations of every corpus file. Each mutation is applied to a
    // window of the file (its start, or a random slice) so the cost per parse is bounded; the number of
    // mutations per file comes from a total byte budget (kept small in debug builds), between 4 and 300.
    const WINDOW: usize = 16 << 10;
    let files = common::corpus_files();
    let budget: usize = if cfg!(debug_assertions) { 24 << 20 } else { 400 << 20 };
    let rounds = (budget / files.len().max(1) / WINDOW).clamp(4, 300);
    for (fi, path) in files.iter().enumerate() {
        let original = std::fs::read(path).expect("readable corpus file");
        if original.is_empty() {
            continue;
        }
        let name = path.display().to_string();
        let mut rng = Rng::new(fi as u64 + 1);
        for round in 0..rounds {
            let start = if round % 2 == 0 { 0 } else { rng.below(original.len()) };
            let end = (start + WINDOW).min(original.len());
            let mut m = original[start..end].to_vec();
            match round % 4 {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let at = rng.below(m.len());
                        m[at] = rng.next() as u8;
                    }
                }
                1 => {
                    let at = rng.below(m.len());
                    m.truncate(at);
                }
                2 => {
                    let at = rng.below(m.len());
                    let b = b"{}[]();,.%@!|\"/*0x-"[rng.below(19)];
                    m.insert(at, b);
                }
                _ => {
                    let at = rng.below(m.len());
                    let n = rng.below(64).min(m.len() - at);
                    m.drain(at..at + n);
                }
            }
            check(&format!("{name} mutation {round}"), &m);
        }
    }
}

#[test]
fn many_items_on_one_line() {
    // Per-item work that looks ahead (capacity guesses, line scans) must not turn quadratic when everything
    // is on one line.
    let mut s = String::from(HEADER);
    s.push_str(&".visible .entry f() { { ret; } ret; } ".repeat(50_000));
    assert!(check("functions_one_line", s.as_bytes()));
    let mut s = String::from(HEADER);
    s.push_str(".section .debug_info { ");
    s.push_str(&".b8 1, 2, 3 ".repeat(200_000));
    s.push('}');
    assert!(check("section_one_line", s.as_bytes()));
    let mut s = String::from(HEADER);
    s.push_str(&"{ ".repeat(20_000));
    s.push_str(&".entry g() { ".repeat(20_000));
    assert!(!check("unclosed_everything", s.as_bytes()));
}
