//! A checker for Accel-Sim text traces that enforces every rule of the project's notes on the format (as
//! Accel-Sim's trace parser reads it): the kernel list, the header lines and their `sscanf` shapes, the
//! `#traces format` line, the thread-block / warp / `insts` structure, the instruction lines (PC in 32 bits,
//! 8-digit mask, at most one destination, known opcodes, at most four sources, memory width and address
//! modes with the right number of addresses, access sizes from the opcode modifiers, local accesses as small
//! aligned offsets, trailing immediate) and one `EXIT` per lane as its last instruction.

use std::collections::BTreeSet;
use std::path::Path;

/// Opcodes of Accel-Sim's Ampere table that the notes list.
pub const KNOWN: &[&str] = &[
    "IADD3", "IMAD", "LOP3", "SHF", "ISETP", "IMNMX", "POPC", "LEA", "FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "DADD",
    "DMUL", "DFMA", "DSETP", "MUFU", "MOV", "SEL", "F2I", "I2F", "F2F", "NOP", "S2R", "LDG", "LDL", "LDS", "LD", "STG",
    "STL", "STS", "ST", "ATOM", "ATOMG", "RED", "MEMBAR", "BAR", "EXIT", "BRA", "CALL", "RET", "JMP", "BSSY", "BSYNC",
];
const MEMORY: &[&str] = &["LDG", "LDL", "LDS", "LD", "STG", "STL", "STS", "ST", "ATOM", "ATOMG", "RED"];
/// Local offsets must be small per-thread offsets.
pub const MAX_LOCAL: u64 = 1 << 24;

/// What a checked kernel contains.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub blocks: usize,
    pub warps: usize,
    pub lines: usize,
    pub opcodes: BTreeSet<String>,
    pub loads_global: usize,
    pub loads_local: usize,
    pub stores_global: usize,
    pub stores_local: usize,
    pub exits: usize,
    /// Lanes executing a non-EXIT line, summed over lines.
    pub lane_instructions: u64,
}

fn hex(s: &str) -> Result<u64, String> {
    let t = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(t, 16).map_err(|_| format!("`{s}` is not hex"))
}

/// `-key = value` with the key exactly as Accel-Sim's sscanf patterns spell it.
fn header_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.strip_prefix(&format!("-{key} = "))
}

fn triple(v: &str) -> Result<(u64, u64, u64), String> {
    let inner = v.strip_prefix('(').and_then(|x| x.strip_suffix(')')).ok_or(format!("`{v}` is not (x,y,z)"))?;
    let p: Vec<&str> = inner.split(',').collect();
    if p.len() != 3 {
        return Err(format!("`{v}` is not (x,y,z)"));
    }
    let n = |s: &str| s.parse::<u64>().map_err(|_| format!("`{s}` in `{v}`"));
    Ok((n(p[0])?, n(p[1])?, n(p[2])?))
}

/// Access size from the opcode modifiers: `.64` → 8, `.128` → 16, `.U8`/`.U16` → 1/2, default 4.
pub fn access_size(op: &str) -> u64 {
    for t in op.split('.').skip(1) {
        if let Ok(bits) = t.parse::<u64>() {
            return bits / 8;
        }
        if let Some(bits) = t.strip_prefix('U').and_then(|b| b.parse::<u64>().ok()) {
            return bits / 8;
        }
    }
    4
}

/// Checks one instruction line; returns (mask, opcode, is EXIT).
pub fn check_line(line: &str, s: &mut Summary) -> Result<(u32, String), String> {
    let tok: Vec<&str> = line.split(' ').collect();
    if tok.iter().any(|t| t.is_empty()) {
        return Err("empty field (double or trailing space)".into());
    }
    let mut it = tok.iter().copied();
    let mut next = |what: &str| it.next().ok_or(format!("missing {what}"));
    let pc = hex(next("PC")?)?;
    if pc > u64::from(u32::MAX) {
        return Err(format!("PC {pc:#x} does not fit in 32 bits"));
    }
    let mask_s = next("mask")?;
    if mask_s.len() != 8 {
        return Err(format!("mask `{mask_s}` is not 8 hex digits"));
    }
    let mask = hex(mask_s)? as u32;
    let ndst: usize = next("dest count")?.parse().map_err(|_| "dest count")?;
    if ndst > 1 {
        return Err(format!("{ndst} destinations (at most 1)"));
    }
    for _ in 0..ndst {
        let r = next("dest register")?;
        r.strip_prefix('R').and_then(|n| n.parse::<u32>().ok()).ok_or(format!("dest `{r}` is not R<n>"))?;
    }
    let op = next("opcode")?.to_string();
    let first = op.split('.').next().unwrap_or("");
    if !KNOWN.contains(&first) {
        return Err(format!("opcode `{op}` is not in the simulator's table"));
    }
    let nsrc: usize = next("source count")?.parse().map_err(|_| "source count")?;
    if nsrc > 4 {
        return Err(format!("{nsrc} sources (at most 4)"));
    }
    for _ in 0..nsrc {
        let r = next("source register")?;
        r.strip_prefix('R').and_then(|n| n.parse::<u32>().ok()).ok_or(format!("source `{r}` is not R<n>"))?;
    }
    let width: u64 = next("mem width")?.parse().map_err(|_| "mem width")?;
    let is_mem = MEMORY.contains(&first);
    if is_mem != (width > 0) {
        return Err(format!("opcode `{op}` with memory width {width}"));
    }
    let active = mask.count_ones() as usize;
    if width > 0 {
        let size = access_size(&op);
        if ![1, 2, 4, 8, 16].contains(&size) {
            return Err(format!("access size {size} of `{op}`"));
        }
        let mode: u32 = next("address mode")?.parse().map_err(|_| "address mode")?;
        let addrs: Vec<u64> = match mode {
            0 => (0..active).map(|_| next("address").and_then(hex)).collect::<Result<_, _>>()?,
            1 => {
                let base = hex(next("base")?)?;
                let stride: i64 = next("stride")?.parse().map_err(|_| "stride")?;
                // base_stride decompresses only contiguous active lanes.
                let low = mask.trailing_zeros();
                if mask >> low != ((1u64 << active) - 1) as u32 {
                    return Err(format!("base-stride addresses with non-contiguous mask {mask:08x}"));
                }
                (0..active as i64).map(|k| base.wrapping_add((k * stride) as u64)).collect()
            }
            m => return Err(format!("address mode {m} (the writer uses 0 and 1)")),
        };
        if active == 0 {
            return Err("memory instruction with no active lane".into());
        }
        let local = first == "LDL" || first == "STL";
        if local {
            for a in &addrs {
                if *a >= MAX_LOCAL || a % 4 != 0 {
                    return Err(format!("local address {a:#x} is not a small 4-byte aligned offset"));
                }
            }
        }
        match (first, local) {
            ("LDG" | "LD", _) => s.loads_global += 1,
            ("LDL", _) => s.loads_local += 1,
            ("STG" | "ST", _) => s.stores_global += 1,
            ("STL", _) => s.stores_local += 1,
            _ => {}
        }
    }
    let imm = next("immediate")?;
    imm.parse::<i64>().map_err(|_| format!("immediate `{imm}` is not decimal"))?;
    if it.next().is_some() {
        return Err("fields after the immediate".into());
    }
    s.opcodes.insert(first.to_string());
    Ok((mask, first.to_string()))
}

/// Checks `dir/kernelslist.g` and every kernel it names.
pub fn check_dir(dir: &Path) -> Result<Vec<Summary>, String> {
    let list = std::fs::read_to_string(dir.join("kernelslist.g")).map_err(|e| format!("kernelslist.g: {e}"))?;
    let mut out = Vec::new();
    for line in list.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("MemcpyHtoD,") {
            let p: Vec<&str> = rest.split(',').collect();
            if p.len() != 2 || hex(p[0]).is_err() || p[1].parse::<u64>().is_err() {
                return Err(format!("bad memcpy line `{line}`"));
            }
            continue;
        }
        if !(line.starts_with("kernel-") && line.ends_with(".traceg")) {
            return Err(format!("kernelslist.g line `{line}` is neither a memcpy nor kernel-N.traceg"));
        }
        let text = std::fs::read_to_string(dir.join(line)).map_err(|e| format!("{line}: {e}"))?;
        out.push(check_kernel(&text).map_err(|e| format!("{line}: {e}"))?);
    }
    Ok(out)
}

/// Checks one `.traceg` text.
pub fn check_kernel(text: &str) -> Result<Summary, String> {
    if !text.ends_with('\n') {
        return Err("the file does not end with a newline".into());
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    let mut grid = None;
    let mut block = None;
    let mut version = None;
    let mut seen = BTreeSet::new();
    // Header: `-` lines up to the first `#` line.
    while i < lines.len() {
        let l = lines[i];
        i += 1;
        if l.is_empty() {
            continue;
        }
        if l.starts_with('#') {
            if !l.starts_with("#traces format = ") {
                return Err(format!("the first # line is `{l}`, not the #traces format line"));
            }
            break;
        }
        let Some(_) = l.strip_prefix('-') else { return Err(format!("header line `{l}` does not start with -")) };
        let num = |k: &str| -> Result<Option<u64>, String> {
            match header_value(l, k) {
                Some(v) => v.parse::<u64>().map(Some).map_err(|_| format!("`{l}`: not a number")),
                None => Ok(None),
            }
        };
        if header_value(l, "kernel name").is_some() {
            seen.insert("kernel name");
        } else if num("kernel id")?.is_some() {
            seen.insert("kernel id");
        } else if let Some(v) = header_value(l, "grid dim") {
            grid = Some(triple(v)?);
            seen.insert("grid dim");
        } else if let Some(v) = header_value(l, "block dim") {
            block = Some(triple(v)?);
            seen.insert("block dim");
        } else if num("shmem")?.is_some() {
            seen.insert("shmem");
        } else if num("nregs")?.is_some() {
            seen.insert("nregs");
        } else if let Some(v) = num("binary version")? {
            if ![35, 60, 61, 70, 75, 80, 86].contains(&v) {
                return Err(format!("binary version {v}"));
            }
            seen.insert("binary version");
        } else if num("cuda stream id")?.is_some() {
            seen.insert("cuda stream id");
        } else if let Some(v) = header_value(l, "shmem base_addr") {
            hex(v)?;
            seen.insert("shmem base_addr");
        } else if let Some(v) = header_value(l, "local mem base_addr") {
            hex(v)?;
            seen.insert("local mem base_addr");
        } else if header_value(l, "nvbit version").is_some() {
            seen.insert("nvbit version");
        } else if let Some(v) = num("accelsim tracer version")? {
            version = Some(v);
            seen.insert("accelsim tracer version");
        } else if let Some(v) = num("enable lineinfo")? {
            if v != 0 {
                return Err("line info is enabled but lines carry no line numbers".into());
            }
            seen.insert("enable lineinfo");
        } else {
            return Err(format!("unknown header line `{l}`"));
        }
    }
    for k in [
        "kernel name",
        "kernel id",
        "grid dim",
        "block dim",
        "shmem",
        "nregs",
        "binary version",
        "cuda stream id",
        "shmem base_addr",
        "local mem base_addr",
        "nvbit version",
        "accelsim tracer version",
        "enable lineinfo",
    ] {
        if !seen.contains(k) {
            return Err(format!("header line -{k} missing"));
        }
    }
    if version.unwrap_or(0) < 3 {
        return Err("accelsim tracer version below 3".into());
    }
    let (gx, gy, gz) = grid.unwrap();
    let (bx, by, bz) = block.unwrap();
    let threads = bx * by * bz;
    let warps_per_block = threads.div_ceil(32) as usize;
    let mut s = Summary::default();
    let mut blocks_seen = BTreeSet::new();
    // Body.
    while i < lines.len() {
        let l = lines[i];
        i += 1;
        if l.is_empty() {
            continue;
        }
        if l != "#BEGIN_TB" {
            return Err(format!("expected #BEGIN_TB, found `{l}`"));
        }
        let mut tb = None;
        let mut warps = vec![false; warps_per_block];
        loop {
            let l = *lines.get(i).ok_or("a thread block is not closed by #END_TB")?;
            i += 1;
            if l.is_empty() {
                continue;
            }
            if l == "#END_TB" {
                break;
            }
            if let Some(v) = l.strip_prefix("thread block = ") {
                let p: Vec<u64> =
                    v.split(',').map(|x| x.parse().map_err(|_| format!("`{l}`"))).collect::<Result<_, _>>()?;
                if p.len() != 3 || p[0] >= gx || p[1] >= gy || p[2] >= gz {
                    return Err(format!("`{l}` is outside the grid"));
                }
                if !blocks_seen.insert((p[0], p[1], p[2])) {
                    return Err(format!("`{l}` appears twice"));
                }
                tb = Some(());
                continue;
            }
            let Some(w) = l.strip_prefix("warp = ") else { return Err(format!("expected `warp = N`, found `{l}`")) };
            if tb.is_none() {
                return Err("a warp before `thread block =`".into());
            }
            let w: usize = w.parse().map_err(|_| format!("`{l}`"))?;
            if w >= warps_per_block || warps[w] {
                return Err(format!("warp {w} out of range or repeated ({warps_per_block} per block)"));
            }
            warps[w] = true;
            let n = lines.get(i).and_then(|x| x.strip_prefix("insts = ")).ok_or(format!("warp {w}: no insts line"))?;
            let n: usize = n.parse().map_err(|_| "insts")?;
            i += 1;
            if n == 0 {
                return Err(format!("warp {w} has no instruction"));
            }
            // Lanes active at launch: the block's threads in this warp.
            let launch: u32 = {
                let first = w as u64 * 32;
                let k = threads.saturating_sub(first).min(32);
                if k == 32 {
                    u32::MAX
                } else {
                    ((1u64 << k) - 1) as u32
                }
            };
            let mut exited = 0u32;
            for k in 0..n {
                let l = *lines.get(i).ok_or(format!("warp {w}: {n} instructions announced, file ends"))?;
                i += 1;
                let (mask, op) = check_line(l, &mut s).map_err(|e| format!("warp {w} line {k} `{l}`: {e}"))?;
                if mask & !launch != 0 {
                    return Err(format!("warp {w} line `{l}`: lanes not active at launch"));
                }
                if mask & exited != 0 {
                    return Err(format!("warp {w} line `{l}`: a lane runs after its EXIT"));
                }
                if op == "EXIT" {
                    exited |= mask;
                    s.exits += 1;
                } else {
                    s.lane_instructions += u64::from(mask.count_ones());
                }
                s.lines += 1;
            }
            if exited != launch {
                return Err(format!("warp {w}: lanes {:08x} never execute EXIT", launch & !exited));
            }
            s.warps += 1;
            if let Some(next) = lines.get(i) {
                if !next.is_empty() && !next.starts_with("warp = ") && *next != "#END_TB" {
                    return Err(format!("warp {w}: more lines than its insts = {n}: `{next}`"));
                }
            }
        }
        if warps.iter().any(|w| !w) {
            return Err(format!("a thread block lacks warps: {warps:?}"));
        }
        s.blocks += 1;
    }
    if blocks_seen.len() as u64 != gx * gy * gz {
        return Err(format!("{} thread blocks for a grid of {}", blocks_seen.len(), gx * gy * gz));
    }
    Ok(s)
}
