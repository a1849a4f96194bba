//! The replay on synthetic traces whose schedules can be worked out by hand (no QEMU needed).

mod common;

use common::*;
use fuser::{Batch, Config};
use trace::{Event, LockKind};

fn blk(tb: u32) -> Event {
    Event::Block { tb }
}

fn mem(insn: u16, store: bool, size: u8, addr: u64) -> Event {
    Event::Mem { insn, store, size_log2: size.trailing_zeros() as u8, addr }
}

#[test]
fn lanes_calling_different_functions_run_one_callee_after_the_other() {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let g = s.symbol("g", 0x2000, 0x100);
    let h = s.symbol("h", 0x3000, 0x100);
    let b0 = s.block(0x1000, vec![nop(), nop(), call()]);
    let b1 = s.block(s.end(b0), vec![nop(), ret()]);
    let g0 = s.block(0x2000, vec![nop(), ret()]);
    let h0 = s.block(0x3000, vec![nop(), nop(), ret()]);
    for k in 0..4 {
        let (callee, body) = if k < 2 { (g, g0) } else { (h, h0) };
        s.lane(k, 0, Some(f), vec![blk(b0), Event::Call { callee }, blk(body), Event::Return { frames: 1 }, blk(b1)]);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("calls.trace");
    s.write(&p);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!((r.thread_instructions, r.warp_instructions), (12 + 4 + 6 + 8, 3 + 2 + 3 + 2));
    assert_eq!(r.simt_efficiency, Some(0.75));
    let ff = function(&r, "f");
    assert_eq!((ff.thread_instructions, ff.warp_instructions), (20, 5));
    assert_eq!(function(&r, "g").simt_efficiency, Some(0.5));
    assert_eq!(function(&r, "h").simt_efficiency, Some(0.5));
    assert_eq!(r.resyncs, 0);
    // Per-function numbers exclude callees; they add up to the program's.
    let sum: u64 = r.functions.iter().map(|f| f.warp_instructions).sum();
    assert_eq!(sum, r.warp_instructions);
}

#[test]
fn divergent_branch_reconverges_at_the_immediate_post_dominator() {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let b0 = s.block(0x1000, vec![nop(), jne()]);
    let b1 = s.block(s.end(b0), vec![nop(), nop(), nop(), jmp()]);
    let b2 = s.block(s.end(b1), vec![nop()]);
    let b3 = s.block(s.end(b2), vec![nop(), ret()]);
    for k in 0..4 {
        let side = if k % 2 == 0 { b1 } else { b2 };
        s.lane(k, 0, Some(f), vec![blk(b0), blk(side), blk(b3)]);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("diamond.trace");
    s.write(&p);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // b0 and b3 with 4 lanes; b1 and b2 with 2 each, one after the other.
    assert_eq!((r.thread_instructions, r.warp_instructions), (8 + 8 + 2 + 8, 2 + 4 + 1 + 2));
    let join = r.blocks.iter().find(|b| b.address == format!("{:#x}", s.end(b2))).unwrap();
    assert_eq!((join.thread_instructions, join.warp_instructions), (8, 2), "reconverged");
}

/// f: b0 calls lock; b1 (the return site) calls unlock; b2 returns. Lane k acquires `locks[k]`.
fn lock_trace(locks: [u64; 4]) -> (tempfile::TempDir, std::path::PathBuf, u64) {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let lock = s.symbol("pthread_mutex_lock", 0x2000, 0x100);
    let unlock = s.symbol("pthread_mutex_unlock", 0x3000, 0x100);
    let b0 = s.block(0x1000, vec![nop(), call()]);
    let b1 = s.block(s.end(b0), vec![nop(), nop(), call()]);
    let b2 = s.block(s.end(b1), vec![nop(), ret()]);
    let l0 = s.block(0x2000, vec![nop(), ret()]);
    let u0 = s.block(0x3000, vec![nop(), ret()]);
    for (k, &addr) in locks.iter().enumerate() {
        s.lane(
            k as u32,
            0,
            Some(f),
            vec![
                blk(b0),
                Event::Call { callee: lock },
                blk(l0),
                Event::Return { frames: 1 },
                Event::Lock { kind: LockKind::Mutex, release: false, addr },
                blk(b1),
                Event::Call { callee: unlock },
                blk(u0),
                Event::Return { frames: 1 },
                Event::Lock { kind: LockKind::Mutex, release: true, addr },
                blk(b2),
            ],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("locks.trace");
    s.write(&p);
    let site = s.end(b0);
    (dir, p, site)
}

#[test]
fn lanes_on_the_same_lock_are_serialized_up_to_the_release() {
    // Lanes 0, 1 on lock A, lanes 2, 3 on lock B: two groups {0, 2} and {1, 3}.
    let (_d, p, site) = lock_trace([0xa000, 0xa000, 0xb000, 0xb000]);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    // b0 (2) + lock (2) + 2 x [b1 (3) + unlock (2)] + b2 (2), all reconverged at b2.
    assert_eq!((r.thread_instructions, r.warp_instructions), (8 + 8 + 20 + 8, 2 + 2 + 2 * 5 + 2));
    assert_eq!(r.locks.len(), 1);
    let l = &r.locks[0];
    assert_eq!(l.function, "f");
    assert_eq!(l.site, format!("{site:#x}"));
    assert_eq!((l.locks, l.acquisitions, l.contended, l.max_serialized_lanes), (2, 4, 1, 2));
    assert_eq!((l.serialized_warp_instructions, l.critical_warp_instructions), (5, 10));
    assert_eq!(r.lock_releases, 4);

    // All four on one lock: four groups.
    let (_d, p, _) = lock_trace([0xa000; 4]);
    let r = analyze(&p, 4);
    assert_eq!(r.warp_instructions, 2 + 2 + 4 * 5 + 2);
    assert_eq!((r.locks[0].max_serialized_lanes, r.locks[0].serialized_warp_instructions), (4, 15));

    // Four different locks: no serialization at all.
    let (_d, p, _) = lock_trace([0xa000, 0xb000, 0xc000, 0xd000]);
    let r = analyze(&p, 4);
    assert_eq!(r.warp_instructions, 2 + 2 + 5 + 2);
    assert_eq!(r.simt_efficiency, Some(1.0));
    assert_eq!((r.locks[0].contended, r.locks[0].serialized_warp_instructions), (0, 0));
}

#[test]
fn memory_segments_and_coalescing() {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let b0 = s.block(0x1000, vec![load(), store(), push(), load_static(), add_mem(), ret()]);
    let heap = 0x5555_0000u64;
    for k in 0..4u64 {
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
                mem(5, false, 8, stack),
            ],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mem.trace");
    s.write(&p);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let m = &r.memory;
    // Heap: a 16-byte contiguous load (1 sector), a 64-byte-strided store (4), a read-modify-write (1 + 1).
    assert_eq!((m.heap.warp_accesses, m.heap.transactions), (4, 7));
    assert_eq!((m.heap.loads.warp_accesses, m.heap.stores.warp_accesses), (2, 2));
    // Stack: push and ret on four different stacks: 4 sectors each; as local memory: 1 each.
    assert_eq!((m.stack.warp_accesses, m.stack.transactions), (2, 8));
    assert_eq!((m.stack_local.warp_accesses, m.stack_local.transactions), (2, 2));
    // Static: every lane reads the same word.
    assert_eq!((m.static_data.warp_accesses, m.static_data.transactions), (1, 1));
    assert_eq!(m.total.warp_accesses, 7);
    // 128-byte transactions: the strided store fits 2.
    let r = analyze_with(&p, Config { warp_size: 4, transaction_bytes: 128, ..Config::default() });
    assert_eq!((r.memory.heap.warp_accesses, r.memory.heap.transactions), (4, 1 + 2 + 1 + 1));
}

#[test]
fn batching_policies() {
    // Eight SIMT threads on two OS threads; those of OS thread 0 take one path, those of 1 the other.
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let b0 = s.block(0x1000, vec![nop(), jne()]);
    let b1 = s.block(s.end(b0), vec![nop(), nop(), nop(), jmp()]);
    let b2 = s.block(s.end(b1), vec![nop()]);
    let b3 = s.block(s.end(b2), vec![nop(), ret()]);
    for os in 0..2 {
        for index in 0..4 {
            let side = if os == 0 { b1 } else { b2 };
            s.lane(os, index, Some(f), vec![blk(b0), blk(side), blk(b3)]);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("batch.trace");
    s.write(&p);
    let t = trace::Trace::open(&p).unwrap();
    let prog = fuser::Program::new(&t);
    assert_eq!(fuser::form_warps(&prog, Batch::Consecutive, 4), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
    assert_eq!(fuser::form_warps(&prog, Batch::RoundRobin, 4), vec![vec![0, 4, 1, 5], vec![2, 6, 3, 7]]);
    let c = analyze_with(&p, Config { warp_size: 4, batch: Batch::Consecutive, ..Config::default() });
    assert_eq!(c.simt_efficiency, Some(1.0));
    let rr = analyze_with(&p, Config { warp_size: 4, batch: Batch::RoundRobin, ..Config::default() });
    assert_eq!(rr.simt_efficiency, Some((8.0 + 8.0 + 2.0 + 8.0) / (9.0 * 4.0)));
    assert_eq!(rr.per_warp.len(), 2);
    assert!(rr.per_warp.iter().all(|w| w.lanes == 4));
}

#[test]
fn function_batching_keeps_entry_functions_apart() {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let g = s.symbol("g", 0x2000, 0x100);
    let fb = s.block(0x1000, vec![nop(), nop(), ret()]);
    let gb = s.block(0x2000, vec![nop(), ret()]);
    for os in 0..8 {
        let (func, b) = if os % 2 == 0 { (f, fb) } else { (g, gb) };
        s.lane(os, 0, Some(func), vec![blk(b)]);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fn.trace");
    s.write(&p);
    let t = trace::Trace::open(&p).unwrap();
    let prog = fuser::Program::new(&t);
    assert_eq!(fuser::form_warps(&prog, Batch::Function, 4), vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
    let c = analyze_with(&p, Config { warp_size: 4, batch: Batch::Consecutive, ..Config::default() });
    assert_eq!(c.simt_efficiency, Some(0.5), "f and g one after the other in every warp");
    let fr = analyze_with(&p, Config { warp_size: 4, batch: Batch::Function, ..Config::default() });
    assert_eq!(fr.simt_efficiency, Some(1.0));
}

#[test]
fn tail_calls_skips_and_unexpected_returns() {
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let g = s.symbol("g", 0x2000, 0x100);
    let h = s.symbol("h", 0x3000, 0x100);
    // f calls h, h tail-calls g, g returns (to f); f then returns.
    let b0 = s.block(0x1000, vec![nop(), call()]);
    let b1 = s.block(s.end(b0), vec![nop(), ret()]);
    let other = s.block(0x1080, vec![nop(), nop(), ret()]);
    let h0 = s.block(0x3000, vec![nop(), jmp()]);
    let g0 = s.block(0x2000, vec![nop(), ret()]);
    for k in 0..4 {
        let mut ev = vec![
            blk(b0),
            Event::Call { callee: h },
            blk(h0),
            Event::TailCall { callee: g },
            blk(g0),
            Event::Skip { kind: trace::SkipKind::Syscall, insns: 10, arg: 1 },
            Event::Return { frames: 1 },
        ];
        // Lane 3 comes back somewhere else than the return site (as after a longjmp).
        ev.push(blk(if k == 3 { other } else { b1 }));
        s.lane(k, 0, Some(f), ev);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tail.trace");
    s.write(&p);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!((r.skipped.syscall, r.skipped.syscall_regions), (40, 4));
    assert_eq!(function(&r, "g").skipped_instructions, 40);
    assert_eq!(function(&r, "h").simt_efficiency, Some(1.0));
    assert_eq!(function(&r, "g").simt_efficiency, Some(1.0));
    assert_eq!(r.resyncs, 1);
    assert_eq!(r.thread_instructions, 4 * (2 + 2 + 2) + 3 * 2 + 3);
    let fr = function(&r, "f");
    assert_eq!((fr.thread_instructions, fr.warp_instructions), (8 + 6 + 3, 2 + 2 + 3));
}

#[test]
fn report_serializes_with_the_documented_fields() {
    let (_d, p, _) = lock_trace([0xa000, 0xa000, 0xb000, 0xb000]);
    let r = analyze(&p, 4);
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    for k in [
        "warp_size",
        "simt_threads",
        "warps",
        "thread_instructions",
        "warp_instructions",
        "simt_efficiency",
        "functions",
        "memory",
        "locks",
    ] {
        assert!(v.get(k).is_some(), "{k} missing");
    }
    for seg in ["stack", "heap", "static"] {
        assert!(v["memory"][seg]["warp_accesses"].is_u64(), "{seg}");
        assert!(v["memory"][seg]["transactions"].is_u64(), "{seg}");
    }
    let f = &v["functions"][0];
    for k in ["name", "thread_instructions", "warp_instructions", "simt_efficiency"] {
        assert!(f.get(k).is_some(), "function {k} missing");
    }
}

#[test]
fn lock_spinning_leaves_the_frames_entered_before_it() {
    // f calls lock, which calls wait; the tracer then skips the spinning, including wait's return, and records
    // only lock's return (one frame). The lane must leave wait and lock there.
    let mut s = Synth::new();
    let f = s.symbol("f", 0x1000, 0x100);
    let lock = s.symbol("pthread_mutex_lock", 0x2000, 0x100);
    let wait = s.symbol("lll_lock_wait", 0x3000, 0x100);
    let b0 = s.block(0x1000, vec![nop(), call()]);
    let b1 = s.block(s.end(b0), vec![nop(), nop(), ret()]);
    let l0 = s.block(0x2000, vec![nop(), call()]);
    let w0 = s.block(0x3000, vec![nop(), nop()]);
    for k in 0..4 {
        let mut ev = vec![blk(b0), Event::Call { callee: lock }, blk(l0)];
        if k % 2 == 1 {
            ev.extend([
                Event::Call { callee: wait },
                blk(w0),
                Event::Skip { kind: trace::SkipKind::LockSpin, insns: 7, arg: u64::from(lock) },
            ]);
        }
        ev.extend([
            Event::Return { frames: 1 },
            Event::Lock { kind: LockKind::Mutex, release: false, addr: 0xa000 + u64::from(k) },
            blk(b1),
        ]);
        s.lane(k, 0, Some(f), ev);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spin.trace");
    s.write(&p);
    let r = analyze(&p, 4);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.resyncs, 0);
    assert_eq!(r.skipped.lock_spin, 14);
    let ff = function(&r, "f");
    assert_eq!((ff.thread_instructions, ff.warp_instructions), (4 * 2 + 4 * 3, 2 + 3), "b1 runs in f, reconverged");
    assert_eq!(function(&r, "lll_lock_wait").simt_efficiency, Some(0.5));
}
