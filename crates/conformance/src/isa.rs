//! The PTX ISA coverage table (`lockstep ptx isa`): for every instruction of the PTX ISA 9.x reference,
//! sample lines (`corpus/isa/samples.tsv`) compiled in a small kernel, and what lockstep does with them:
//! runs them on both engines, on the emulator only, or refuses them (with the reason the engines give at
//! load time). Nothing here is written by hand: each status is what the front end, the decoder
//! (`program::decode_all`, the emulator's check) and the JIT's compiler say about the sample, so the table
//! cannot drift from the code (`tests/isa_coverage.rs` compares it with the committed `docs/ptx-isa.md`).

use std::fmt::Write as _;

use device::{Backend, DeviceMemory, ErrorKind, LoadedModule};

/// The samples, one instruction variant per row.
pub const SAMPLES: &str = include_str!("../../../corpus/isa/samples.tsv");

/// One row of the sample file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    pub section: String,
    pub instruction: String,
    pub ptx: String,
}

/// What lockstep does with a sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Both engines run it.
    Both,
    /// The emulator runs it; the JIT refuses it (reason).
    EmulatorOnly(String),
    /// Neither engine runs it (reason).
    Refused(String),
    /// The front end rejects it (message): not valid PTX as lockstep reads it.
    NotParsed(String),
}

impl Status {
    pub fn label(&self) -> &'static str {
        match self {
            Status::Both => "both engines",
            Status::EmulatorOnly(_) => "emulator only",
            Status::Refused(_) => "refused",
            Status::NotParsed(_) => "not parsed",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Status::Both => "",
            Status::EmulatorOnly(r) | Status::Refused(r) | Status::NotParsed(r) => r,
        }
    }
}

/// The samples of `text` (the format of `corpus/isa/samples.tsv`).
pub fn parse_samples(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut f = line.splitn(3, '\t');
        match (f.next(), f.next(), f.next()) {
            (Some(s), Some(i), Some(p)) if !p.trim().is_empty() => {
                out.push(Sample { section: s.trim().into(), instruction: i.trim().into(), ptx: p.trim().into() })
            }
            _ => return Err(format!("samples line {}: expected section<TAB>instruction<TAB>ptx", n + 1)),
        }
    }
    Ok(out)
}

/// The kernel a sample runs in: the registers, variables, device function and label the sample file's
/// header promises.
pub fn kernel_text(sample: &Sample) -> String {
    let body = format!("    {}\n", sample.ptx.trim());
    format!(
        ".version 9.0\n.target sm_90a\n.address_size 64\n\
         .global .align 16 .b8 gl[4096];\n.const .align 16 .b8 cn[256];\n\
         .func (.param .b32 ret0) callee(.param .b32 arg0)\n{{\n    .reg .b32 %t<2>;\n    ld.param.b32 %t0, [arg0];\n    \
         st.param.b32 [ret0], %t0;\n    ret;\n}}\n\
         .visible .entry k(.param .u64 p0)\n{{\n    .reg .pred %p<8>;\n    .reg .b16 %h<16>;\n    .reg .b32 %r<32>;\n    \
         .reg .b64 %rd<16>;\n    .reg .f32 %f<32>;\n    .reg .f64 %fd<16>;\n    .shared .align 16 .b8 sh[4096];\n    \
         .local .align 16 .b8 lc[256];\n{body}L0:\n    ret;\n}}\n"
    )
}

/// The reason in an engine's list of unsupported instructions ("PTX line N in `k`: `...` (reason)").
fn reasons(kind: &ErrorKind, fallback: String) -> String {
    let ErrorKind::Unsupported(list) = kind else { return fallback };
    let mut out: Vec<String> = Vec::new();
    for item in list {
        // "... `instruction` (reason)": the reason follows the quoted instruction.
        let reason =
            item.find("` (").map_or(item.as_str(), |at| item[at + 3..].strip_suffix(')').unwrap_or(&item[at + 3..]));
        if !out.iter().any(|r| r == reason) {
            out.push(reason.to_string());
        }
    }
    out.join("; ")
}

/// What lockstep does with each sample.
pub fn coverage(samples: &[Sample]) -> Vec<(Sample, Status)> {
    let emu = emu::Emulator::new();
    let jit = jit::Jit::new(jit::Options { threads: 1, cache_dir: None, ..jit::Options::default() });
    samples
        .iter()
        .map(|s| {
            let text = kernel_text(s);
            let status = match ir::compile(&text) {
                Err(diags) => {
                    let first = diags.first().map_or_else(|| "does not parse".to_string(), |d| d.message.clone());
                    Status::NotParsed(first)
                }
                Ok(module) => {
                    let kernel = module.function("k").expect("the sample kernel");
                    let mut memory = DeviceMemory::new();
                    match LoadedModule::load(module, &mut memory) {
                        Err(e) => Status::Refused(e),
                        Ok(loaded) => match emu.check_supported(&loaded, kernel) {
                            Err(e) => Status::Refused(reasons(&e.kind, e.to_string())),
                            Ok(()) => match jit.check_supported(&loaded, kernel) {
                                Err(e) => Status::EmulatorOnly(reasons(&e.kind, e.to_string())),
                                Ok(()) => Status::Both,
                            },
                        },
                    }
                }
            };
            (s.clone(), status)
        })
        .collect()
}

/// The table as Markdown (`docs/ptx-isa.md`).
pub fn markdown(rows: &[(Sample, Status)]) -> String {
    let mut out = String::new();
    let count = |f: fn(&Status) -> bool| rows.iter().filter(|(_, s)| f(s)).count();
    let _ = writeln!(out, "# PTX ISA coverage\n");
    let _ = writeln!(
        out,
        "Generated by `lockstep ptx isa --markdown` from `corpus/isa/samples.tsv`: each instruction variant of the PTX \
         ISA 9.x reference, compiled in a small kernel, with what lockstep's engines do with it. `both engines`: the \
         emulator and the JIT run it; `emulator only`: the JIT refuses it at load; `refused`: both refuse it at load, \
         with the reason; `not parsed`: the front end rejects it. Nothing accepted is silently ignored: an \
         instruction or modifier the engines do not honour is refused before anything runs, naming its PTX line. A \
         test (`crates/conformance/tests/isa_coverage.rs`) keeps this file equal to what the code does.\n"
    );
    let _ = writeln!(
        out,
        "{} variants: {} on both engines, {} on the emulator only, {} refused, {} not parsed.\n",
        rows.len(),
        count(|s| *s == Status::Both),
        count(|s| matches!(s, Status::EmulatorOnly(_))),
        count(|s| matches!(s, Status::Refused(_))),
        count(|s| matches!(s, Status::NotParsed(_)))
    );
    let mut section = "";
    for (s, status) in rows {
        if s.section != section {
            section = &s.section;
            let _ = writeln!(out, "\n## {section}\n\n| instruction | status | reason |\n| --- | --- | --- |");
        }
        let reason = status.reason().replace('|', "\\|").replace('\n', " ");
        let _ = writeln!(out, "| `{}` | {} | {} |", s.instruction.replace('|', "\\|"), status.label(), reason);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_parse_and_statuses_come_from_the_engines() {
        let samples = parse_samples(
            "# comment\nint\tadd.s32\tadd.s32 %r1, %r2, %r3;\nint\tbogus\tfrobnicate.u32 %r1;\n\
             data\tmultimem\tmultimem.st.relaxed.gpu.global.b32 [%rd1], %r1;\n",
        )
        .unwrap();
        let rows = coverage(&samples);
        assert_eq!(rows[0].1, Status::Both);
        assert!(matches!(rows[1].1, Status::NotParsed(_)), "{:?}", rows[1].1);
        assert!(matches!(&rows[2].1, Status::Refused(r) if r.contains("multimem")), "{:?}", rows[2].1);
        assert!(parse_samples("x\ty").is_err());
    }
}
