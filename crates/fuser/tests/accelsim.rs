//! Accel-Sim traces of synthetic traces, checked against every rule of the format notes.

mod common;

use common::accelsim_check::{check_dir, check_line, Summary};
use common::*;
use trace::Event;

fn blk(tb: u32) -> Event {
    Event::Block { tb }
}

fn mem(insn: u16, store: bool, size: u8, addr: u64) -> Event {
    Event::Mem { insn, store, size_log2: size.trailing_zeros() as u8, addr }
}

#[test]
fn checker_rejects_what_the_parser_would_misread() {
    let mut s = Summary::default();
    assert!(check_line("0010 0000000f 1 R1 LDG.E.64 1 R2 8 1 0x1000 8 0", &mut s).is_ok());
    assert!(check_line("0010 00000005 1 R1 LDG.E.64 1 R2 8 0 0x1000 0x1010 0", &mut s).is_ok());
    for bad in [
        "0010 f 1 R1 MOV 0 0 0",                    // short mask
        "100000000 ffffffff 0 MOV 0 0 0",           // PC over 32 bits
        "0010 ffffffff 0 FOO 0 0 0",                // unknown opcode
        "0010 ffffffff 2 R1 R2 MOV 0 0 0",          // two destinations
        "0010 ffffffff 0 MOV 5 R1 R2 R3 R4 R5 0 0", // five sources
        "0010 00000003 0 LDG.E 0 4 0 0x1 0",        // one address for two lanes
        "0010 00000005 0 LDG.E 0 4 1 0x1 4 0",      // base-stride with a gap in the mask
        "0010 00000001 0 LDL 0 4 0 0x3 0",          // unaligned local offset
        "0010 00000001 0 LDL 0 4 0 0x7fff0000 0",   // not a small local offset
        "0010 00000001 0 MOV 0 4 0 0x3 0",          // memory width on an ALU op
        "0010 00000001 0 LDG.E 0 0 0",              // a load without addresses
        "0010 00000001 0 LDG.E.24 0 4 0 0x4 0",     // unsupported access size
        "0010 00000001 0 MOV 0 0",                  // no immediate
        "0010 00000001 0 MOV 0 0 0 7",              // a field after the immediate
        "0010  00000001 0 MOV 0 0 0",               // double space
    ] {
        assert!(check_line(bad, &mut s).is_err(), "accepted `{bad}`");
    }
}

/// Five lanes (one padded warp of 32) run a block of loads, stores, a push, a static load, a read-modify-write
/// and an atomic, then call a function and return.
fn memory_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let g = s.symbol("g", 0x2000, 0x100);
    let b0 = s.block(
        0x1000,
        vec![load(), store(), push(), load_static(), add_mem(), atomic_add(), movsd_load(), addsd(), cmp(), call()],
    );
    let b1 = s.block(s.end(b0), vec![nop(), ret()]);
    let g0 = s.block(0x2000, vec![add(), ret()]);
    let heap = 0x5555_0000u64;
    for k in 0..5u64 {
        let stack = 0x7fff_0000 - k * 0x10_0000;
        s.lane(
            k as u32,
            0,
            Some(f),
            vec![
                blk(b0),
                mem(0, false, 4, heap + 4 * k),
                mem(1, true, 4, heap + 0x1000 + 64 * k),
                mem(2, true, 8, stack - 8),
                mem(3, false, 4, 0x1200),
                mem(4, false, 4, heap + 4 * k),
                mem(4, true, 4, heap + 4 * k),
                mem(5, false, 4, heap + 0x2000),
                mem(5, true, 4, heap + 0x2000),
                mem(6, false, 8, heap + 0x3000 + 8 * k),
                mem(9, true, 8, stack - 16),
                Event::Call { callee: g },
                blk(g0),
                mem(1, false, 8, stack - 16),
                Event::Return { frames: 1 },
                blk(b1),
            ],
        );
    }
    let p = dir.join("mem.trace");
    s.write(&p);
    p
}

fn lines_of(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("kernel-1.traceg")).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn lowering_of_memory_operations() {
    let dir = tempfile::tempdir().unwrap();
    let p = memory_trace(dir.path());
    let t = trace::Trace::open(&p).unwrap();
    let a = fuser::Analysis::new(&t);
    let out_dir = dir.path().join("accelsim");
    let out = fuser::accelsim::write(&a, &out_dir, fuser::Batch::Consecutive).unwrap();
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!((out.warps, out.thread_blocks), (1, 1));
    let s = check_dir(&out_dir).unwrap();
    assert_eq!(s.len(), 1);
    let s = &s[0];
    assert_eq!((s.blocks, s.warps), (1, 4), "one real warp and three padding warps");
    let lines = lines_of(&out_dir);
    let with = |op: &str| lines.iter().filter(|l| l.split(' ').any(|t| t == op)).cloned().collect::<Vec<_>>();
    // The heap load: five contiguous lanes, stride 4.
    let ldg = with("LDG.E");
    assert!(ldg.iter().any(|l| l.contains(" 0000001f ") && l.ends_with(" 4 1 0x55550000 4 0")), "{ldg:#?}");
    // The 64-byte-strided store.
    assert!(with("STG.E").iter().any(|l| l.ends_with(" 4 1 0x55551000 64 0")), "{:#?}", with("STG.E"));
    // The push: a local store at the same offset in every lane.
    assert!(with("STL.64").iter().any(|l| l.ends_with(" 8 1 0xff8 0 0")), "{:#?}", with("STL.64"));
    // The read-modify-write: load, add, store; the lock-prefixed one: a single atomic.
    let iadd = with("IADD3");
    assert!(!iadd.is_empty());
    assert_eq!(with("ATOMG.E.ADD").len(), 1);
    // The 8-byte floating-point load and the double add.
    assert_eq!(with("LDG.E.64").len(), 1);
    assert_eq!(with("DADD").len(), 1);
    assert_eq!(with("ISETP").len(), 1);
    // call / ret: a local store then CALL; a local load then RET.
    assert_eq!(with("CALL").len(), 1);
    assert_eq!(with("RET").len(), 2);
    assert!(!with("LDL.64").is_empty());
    // 5 lanes exit when their threads end; 27 padding lanes at once; 3 padding warps of 32.
    assert_eq!(s.exits, 2 + 3);
    // push and call store to the stack, g's ret loads from it.
    assert_eq!((s.stores_local, s.loads_local), (2, 1));
}

#[test]
fn locks_divergence_and_many_warps() {
    // 70 lanes (3 warps: 32, 32, 6), half of them on a side path, all on one lock.
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let lock = s.symbol("pthread_mutex_lock", 0x2000, 0x100);
    let b0 = s.block(0x1000, vec![cmp(), jne()]);
    let b1 = s.block(s.end(b0), vec![add(), add(), jmp()]);
    let b2 = s.block(s.end(b1), vec![nop(), call()]);
    let b3 = s.block(s.end(b2), vec![store(), ret()]);
    let l0 = s.block(0x2000, vec![atomic_add(), ret()]);
    for k in 0..70u32 {
        let mut ev = vec![blk(b0)];
        if k % 2 == 0 {
            ev.push(blk(b1));
        }
        ev.extend([
            blk(b2),
            Event::Call { callee: lock },
            blk(l0),
            mem(0, false, 4, 0x6000_0000),
            mem(0, true, 4, 0x6000_0000),
            Event::Return { frames: 1 },
            Event::Lock { kind: trace::LockKind::Mutex, release: false, addr: 0x6000_0000 },
            blk(b3),
            mem(0, true, 4, 0x6000_1000 + 4 * u64::from(k)),
        ]);
        s.lane(k, 0, Some(f), ev);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("locks.trace");
    s.write(&p);
    let t = trace::Trace::open(&p).unwrap();
    let a = fuser::Analysis::new(&t);
    let out_dir = dir.path().join("out");
    let out = fuser::accelsim::write(&a, &out_dir, fuser::Batch::Consecutive).unwrap();
    assert_eq!((out.warps, out.thread_blocks), (3, 1));
    let s = &check_dir(&out_dir).unwrap()[0];
    assert_eq!(s.warps, 4);
    // Lanes run b0, half of them b1, all b2, the lock function and b3 (each serialized on the lock).
    let lines = lines_of(&out_dir);
    let serialized: Vec<&String> = lines.iter().filter(|l| l.contains(" STG.E ")).collect();
    assert_eq!(serialized.len(), 32 + 32 + 6, "every lane stores alone after the lock");
    assert!(s.opcodes.contains("ATOMG") && s.opcodes.contains("BRA"));
}
