//! Parses PTX files and reports diagnostics; with `--print`, prints the canonical form; with `--roundtrip`,
//! checks that printing and re-parsing gives the same module.
//!
//! `cargo run --release -p ptx --example ptxcheck -- [--print] [--roundtrip] FILE...`

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut print = false;
    let mut roundtrip = false;
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--print" => print = true,
            "--roundtrip" => roundtrip = true,
            path => {
                let bytes = match std::fs::read(path) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("{path}: {e}");
                        failed = true;
                        continue;
                    }
                };
                let parsed = ptx::parse_bytes(&bytes);
                match parsed {
                    Ok(m) => {
                        let text = m.to_string();
                        if print {
                            print!("{text}");
                        }
                        if roundtrip {
                            let reparsed = ptx::parse(&text);
                            match reparsed {
                                Ok(m2) if ptx::normalize::equivalent(&m, &m2) && m2.to_string() == text => {}
                                Ok(_) => {
                                    eprintln!("{path}: round trip changed the module");
                                    failed = true;
                                }
                                Err(d) => {
                                    eprint!(
                                        "{path}: printed text does not parse:\n{}",
                                        ptx::diagnostic::render_all(&d, "<printed>", text.as_bytes())
                                    );
                                    failed = true;
                                }
                            };
                        }
                    }
                    Err(diags) => {
                        eprint!("{}", ptx::diagnostic::render_all(&diags, path, &bytes));
                        failed = true;
                    }
                };
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
