//! Hand-built programs driven through `ReconvergenceStack`, with the exact
//! schedule and counts known by construction.

use simt::{lock_groups, Dense, Efficiency, LaneMask, ReconvergenceStack, StackEntry, StackError};

/// Instructions of the tiny test ISA. Conditions are functions of the lane
/// and of how many times the lane executed that instruction before.
#[derive(Clone, Copy)]
enum Ins {
    Op,
    Jmp(u32),
    /// Taken lanes go to `target`, others fall through.
    Br {
        target: u32,
        cond: fn(u32, u32) -> bool,
        reconverge: Option<u32>,
    },
    /// Lanes for which `cond` holds exit; others fall through.
    ExitIf(fn(u32, u32) -> bool),
    Exit,
}

struct Run {
    trace: Vec<(u32, LaneMask)>,
    per_pc: Dense<Efficiency>,
    total: Efficiency,
    max_depth: usize,
}

fn run(program: &[Ins], width: u32) -> Run {
    let mut stack = ReconvergenceStack::new(0u32, LaneMask::full(width));
    let mut visits = vec![vec![0u32; 64]; program.len()];
    let mut out = Run { trace: Vec::new(), per_pc: Dense::new(), total: Efficiency::new(), max_depth: stack.depth() };
    while let Some((pc, active)) = stack.top() {
        assert!(out.trace.len() < 100_000, "runaway");
        out.trace.push((pc, active));
        out.per_pc.record(pc as usize, active.count());
        out.total.record(active.count());
        let counts = &mut visits[pc as usize];
        let holds = |cond: fn(u32, u32) -> bool, counts: &[u32]| -> LaneMask {
            active.iter().filter(|&l| cond(l, counts[l as usize])).collect()
        };
        match program[pc as usize] {
            Ins::Op => stack.set_pc(pc + 1),
            Ins::Jmp(t) => stack.set_pc(t),
            Ins::Br { target, cond, reconverge } => {
                let taken = holds(cond, counts);
                stack.branch(target, taken, pc + 1, reconverge).unwrap();
            }
            Ins::ExitIf(cond) => {
                let leaving = holds(cond, counts);
                if !stack.exit_lanes(leaving).is_empty() {
                    stack.set_pc(pc + 1);
                }
            }
            Ins::Exit => {
                assert!(stack.exit_lanes(active).is_empty());
            }
        }
        for lane in active {
            counts[lane as usize] += 1;
        }
        out.max_depth = out.max_depth.max(stack.depth());
        check_invariants(stack.entries());
    }
    out
}

fn check_invariants(entries: &[StackEntry<u32>]) {
    for (i, lower) in entries.iter().enumerate() {
        assert!(!lower.mask.is_empty());
        for upper in &entries[i + 1..] {
            assert!(upper.mask.is_subset_of(lower.mask) || !upper.mask.intersects(lower.mask), "{entries:?}");
        }
    }
}

fn m(bits: u64) -> LaneMask {
    LaneMask(bits)
}

#[test]
fn if_else_on_parity() {
    let program = [
        Ins::Op,
        Ins::Br { target: 4, cond: |lane, _| lane % 2 == 1, reconverge: Some(6) },
        Ins::Op, // even lanes
        Ins::Jmp(6),
        Ins::Op, // odd lanes
        Ins::Op,
        Ins::Op, // reconverged
        Ins::Exit,
    ];
    let r = run(&program, 32);
    let all = LaneMask::full(32);
    let odd = m(0xaaaa_aaaa);
    let even = m(0x5555_5555);
    assert_eq!(r.trace, [(0, all), (1, all), (4, odd), (5, odd), (2, even), (3, even), (6, all), (7, all)]);
    for pc in [2, 3, 4, 5] {
        assert_eq!(r.per_pc.get(pc).unwrap().ratio(32), Some(0.5), "pc {pc}");
    }
    for pc in [0, 1, 6, 7] {
        assert_eq!(r.per_pc.get(pc).unwrap().ratio(32), Some(1.0), "pc {pc}");
    }
    assert_eq!(r.total.thread_instructions, 6 * 32);
    assert_eq!(r.total.warp_instructions, 8);
    assert_eq!(r.max_depth, 3);
}

#[test]
fn nested_divergence() {
    let program = [
        // 0: outer if (lane < 4) { 1..=5 } else { 6..=9 }, join at 10
        Ins::Br { target: 6, cond: |lane, _| lane >= 4, reconverge: Some(10) },
        // 1: inner if/else on parity inside the low half, join at 5
        Ins::Br { target: 4, cond: |lane, _| lane % 2 == 1, reconverge: Some(5) },
        Ins::Op,
        Ins::Jmp(5),
        Ins::Op,
        Ins::Jmp(10),
        // 6: high half
        Ins::Op,
        // 7: if (lane != 7) { 8 }, join at 9
        Ins::Br { target: 9, cond: |lane, _| lane == 7, reconverge: Some(9) },
        Ins::Op,
        Ins::Jmp(10),
        Ins::Op,
        Ins::Exit,
    ];
    let r = run(&program, 8);
    assert_eq!(
        r.trace,
        [
            (0, m(0xff)),
            (6, m(0xf0)), // taken path first
            (7, m(0xf0)),
            (8, m(0x70)), // lane 7 skipped the block: not pushed
            (9, m(0xf0)),
            (1, m(0x0f)),
            (4, m(0x0a)),
            (2, m(0x05)),
            (3, m(0x05)),
            (5, m(0x0f)),
            (10, m(0xff)),
            (11, m(0xff)),
        ]
    );
    // The high half runs first, so by the time the low half splits the
    // outer reconvergence entry is below it: [join 10, lows parked at 5,
    // evens, odds].
    assert_eq!(r.max_depth, 4);
    assert_eq!(r.total.warp_instructions, 12);
    assert_eq!(r.total.thread_instructions, 8 + 4 + 4 + 3 + 4 + 4 + 2 + 2 + 2 + 4 + 8 + 8);
}

#[test]
fn loop_with_lane_dependent_trip_count() {
    // 0: body; 1: loop back while the lane has done fewer than lane+1 trips;
    // 2: exit. The branch reconverges at the loop exit.
    let program = [
        Ins::Op,
        Ins::Br { target: 0, cond: |lane, done_before| done_before + 1 < lane % 32 + 1, reconverge: Some(2) },
        Ins::Exit,
    ];
    let r = run(&program, 32);
    // Iteration k (1-based) runs with the 33 - k lanes that need >= k trips.
    let body = *r.per_pc.get(0).unwrap();
    assert_eq!(body.warp_instructions, 32);
    assert_eq!(body.thread_instructions, (1..=32).sum::<u64>());
    assert_eq!(body.thread_instructions, 528);
    assert_eq!(body.ratio(32), Some(528.0 / 1024.0));
    assert_eq!(*r.per_pc.get(1).unwrap(), body);
    assert_eq!(*r.per_pc.get(2).unwrap(), Efficiency { thread_instructions: 32, warp_instructions: 1 });
    for (k, &(pc, mask)) in r.trace.iter().step_by(2).take(32).enumerate() {
        assert_eq!(pc, 0);
        assert_eq!(mask, LaneMask::full(32) - LaneMask::full(k as u32));
    }
    // Lanes leaving the loop are never pushed; the looping entry is
    // replaced, not nested, on every divergent back edge.
    assert_eq!(r.max_depth, 2);
}

#[test]
fn loop_with_uniform_trip_count_stays_flat() {
    let program =
        [Ins::Op, Ins::Br { target: 0, cond: |_, done_before| done_before < 9, reconverge: Some(2) }, Ins::Exit];
    let r = run(&program, 16);
    assert_eq!(r.max_depth, 1);
    assert_eq!(r.total.warp_instructions, 21);
    assert_eq!(r.total.ratio(16), Some(1.0));
}

#[test]
fn early_exit_of_some_lanes() {
    let program = [
        // 0: if (lane < 3) exit; join at 2 (lanes >= 3 jump there)
        Ins::Br { target: 2, cond: |lane, _| lane >= 3, reconverge: Some(2) },
        Ins::Exit,
        Ins::Op,
        // 3: predicated exit of lane 7, the others go on
        Ins::ExitIf(|lane, _| lane == 7),
        Ins::Op,
        Ins::Exit,
    ];
    let r = run(&program, 8);
    assert_eq!(r.trace, [(0, m(0xff)), (1, m(0x07)), (2, m(0xf8)), (3, m(0xf8)), (4, m(0x78)), (5, m(0x78))]);
}

#[test]
fn exit_of_waiting_lanes_and_finish() {
    let mut s = ReconvergenceStack::new(0u32, LaneMask::full(4));
    s.branch(10, m(0b0011), 1, 20).unwrap();
    assert_eq!(s.top(), Some((10, m(0b0011))));
    assert_eq!(s.depth(), 3);
    // Lanes 2 and 3 wait at 1; retire them from outside (trace ended).
    assert_eq!(s.exit_lanes(m(0b1100)), m(0b0011));
    assert_eq!(s.depth(), 2);
    assert_eq!(s.live_lanes(), m(0b0011));
    s.set_pc(20);
    assert_eq!(s.top(), Some((20, m(0b0011))));
    assert_eq!(s.exit_lanes(m(0b0011)), LaneMask::EMPTY);
    assert!(s.is_finished());
    assert_eq!(s.top(), None);
}

#[test]
fn reconverge_at_function_exit() {
    // `None` reconvergence (the IPDOM is the exit): both paths end by
    // exiting, nothing waits for them.
    let mut s = ReconvergenceStack::new(0u32, LaneMask::full(4));
    s.branch(1, m(0b0011), 3, None).unwrap();
    assert_eq!(s.depth(), 2);
    assert_eq!(s.top(), Some((1, m(0b0011))));
    s.set_pc(2);
    s.exit_lanes(m(0b0011));
    assert_eq!(s.top(), Some((3, m(0b1100))));
    s.exit_lanes(m(0b1100));
    assert!(s.is_finished());
}

#[test]
fn uniform_branches_push_nothing() {
    let mut s = ReconvergenceStack::new(0u32, LaneMask::full(8));
    s.branch(5, LaneMask::full(8), 1, 9).unwrap();
    assert_eq!(s.top(), Some((5, LaneMask::full(8))));
    s.branch(7, LaneMask::EMPTY, 6, 9).unwrap();
    assert_eq!(s.top(), Some((6, LaneMask::full(8))));
    // Bits outside the active mask are ignored.
    s.branch(7, m(0xff00), 8, 9).unwrap();
    assert_eq!(s.top(), Some((8, LaneMask::full(8))));
    assert_eq!(s.depth(), 1);
}

#[test]
fn depth_guard() {
    let mut s = ReconvergenceStack::with_max_depth(0u32, LaneMask::full(4), 2);
    let before = s.entries().to_vec();
    assert_eq!(s.branch(1, m(0b0001), 2, 3), Err(StackError::Overflow { max_depth: 2 }));
    assert_eq!(s.entries(), &before[..]);
    // Only one path is pushed when the other is already at the join.
    s.branch(3, m(0b0001), 2, 3).unwrap();
    assert_eq!(s.depth(), 2);
    assert_eq!(s.top(), Some((2, m(0b1110))));
}

#[test]
fn invalid_paths() {
    let mut s = ReconvergenceStack::new(0u32, LaneMask::full(4));
    let e = Err(StackError::InvalidPaths);
    assert_eq!(s.diverge(&[(1, m(0b0011)), (2, m(0b0110))], 9), e);
    assert_eq!(s.diverge(&[(1, m(0b0011))], 9), e);
    assert_eq!(s.diverge(&[(1, m(0b0011)), (2, m(0b11100))], 9), e);
    assert_eq!(s.depth(), 1);
    s.diverge(&[(1, m(0b0001)), (2, m(0b0010)), (3, m(0b1100))], 9).unwrap();
    let pcs: Vec<_> = s.iter().map(|e| (e.pc, e.mask)).collect();
    assert_eq!(pcs, [(9, m(0xf)), (3, m(0b1100)), (2, m(0b0010)), (1, m(0b0001))]);
}

#[test]
fn lock_serialization() {
    // 4 lanes reach a critical section at pc 1 (lock), 2 (body), 3 (unlock);
    // lanes 0,1 take lock A, lanes 2,3 lock B: two groups of two.
    let active = LaneMask::full(4);
    let groups = lock_groups(active, [(0, 0xA0), (1, 0xA0), (2, 0xB0), (3, 0xB0)]);
    assert_eq!(groups, [m(0b0101), m(0b1010)]);
    let mut s = ReconvergenceStack::new(1u32, active);
    s.serialize(&groups, 4).unwrap();
    let mut trace = Vec::new();
    while let Some((pc, mask)) = s.top() {
        trace.push((pc, mask));
        if pc == 4 {
            s.exit_lanes(mask);
        } else {
            s.set_pc(pc + 1);
        }
    }
    assert_eq!(
        trace,
        [
            (1, m(0b0101)),
            (2, m(0b0101)),
            (3, m(0b0101)),
            (1, m(0b1010)),
            (2, m(0b1010)),
            (3, m(0b1010)),
            (4, m(0b1111))
        ]
    );
}

#[test]
fn sixty_four_lanes() {
    let mut s = ReconvergenceStack::new(0u64, LaneMask::full(64));
    s.branch(100, m(1 << 63), 1, 200).unwrap();
    assert_eq!(s.top(), Some((100, m(1 << 63))));
    s.set_pc(200);
    assert_eq!(s.top(), Some((1, LaneMask::full(63))));
    s.set_pc(200);
    assert_eq!(s.top(), Some((200, LaneMask::full(64))));
    assert_eq!(s.depth(), 1);
}
