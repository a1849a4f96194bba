//! `CallStack`: per-function reconvergence, divergent calls, exits inside
//! callees, recursion guard.

use simt::{CallStack, Efficiency, EfficiencyBy, LaneMask, StackError};

fn m(bits: u64) -> LaneMask {
    LaneMask(bits)
}

/// Instructions of a tiny ISA with calls.
#[derive(Clone, Copy)]
enum Ins {
    Op,
    /// Lanes go to `target` when `cond(lane)`, otherwise fall through.
    Br {
        target: u32,
        cond: fn(u32) -> bool,
        reconverge: Option<u32>,
    },
    /// Each lane calls `callee(lane)`; returns to the next pc.
    Call(fn(u32) -> u32),
    Ret,
    /// Lanes with `cond(lane)` exit the program; the others fall through.
    ExitIf(fn(u32) -> bool),
    Exit,
}

struct Run {
    trace: Vec<(u32, LaneMask)>,
    per_function: EfficiencyBy<u32>,
    total: Efficiency,
}

fn run(program: &[(u32, Ins)], width: u32) -> Run {
    let at = |pc: u32| program.iter().find(|(p, _)| *p == pc).unwrap_or_else(|| panic!("no instruction at {pc}")).1;
    let mut stack = CallStack::new(0u32, LaneMask::full(width));
    let mut out = Run { trace: Vec::new(), per_function: EfficiencyBy::new(), total: Efficiency::new() };
    while let Some((pc, active)) = stack.top() {
        assert!(out.trace.len() < 10_000, "runaway");
        out.trace.push((pc, active));
        out.total.record(active.count());
        out.per_function.record(stack.current_function().unwrap(), active.count());
        match at(pc) {
            Ins::Op => stack.set_pc(pc + 1),
            Ins::Br { target, cond, reconverge } => {
                let taken = active.iter().filter(|&l| cond(l)).collect();
                stack.branch(target, taken, pc + 1, reconverge).unwrap();
            }
            Ins::Call(callee) => {
                // Lanes whose callee is that of the first active lane enter
                // it now; the rest re-run this call afterwards.
                let first = callee(active.first().unwrap());
                let group = active.iter().filter(|&l| callee(l) == first).collect();
                stack.call(first, group, pc + 1).unwrap();
            }
            Ins::Ret => {
                assert!(stack.ret(active).is_empty());
            }
            Ins::ExitIf(cond) => {
                let leaving = active.iter().filter(|&l| cond(l)).collect();
                if !stack.exit_lanes(leaving).is_empty() {
                    stack.set_pc(pc + 1);
                }
            }
            Ins::Exit => {
                stack.exit_lanes(active);
            }
        }
        assert!(stack.depth() <= 16);
    }
    out
}

#[test]
fn same_function_reconverges_at_its_return() {
    let program = [
        (0, Ins::Call(|_| 10)),
        (1, Ins::Op),
        (2, Ins::Exit),
        // f: odd lanes return early, even lanes do one more instruction.
        (10, Ins::Br { target: 13, cond: |l| l % 2 == 1, reconverge: None }),
        (11, Ins::Op),
        (12, Ins::Ret),
        (13, Ins::Ret),
    ];
    let r = run(&program, 4);
    let all = m(0xf);
    assert_eq!(
        r.trace,
        [
            (0, all),
            (10, all),
            (13, m(0b1010)), // odd lanes return and wait
            (11, m(0b0101)),
            (12, m(0b0101)),
            (1, all), // reconverged at the return
            (2, all),
        ]
    );
    assert_eq!(
        *r.per_function.get(&10).unwrap(),
        Efficiency { thread_instructions: 4 + 2 + 2 + 2, warp_instructions: 4 }
    );
    assert_eq!(*r.per_function.get(&0).unwrap(), Efficiency { thread_instructions: 12, warp_instructions: 3 });
}

#[test]
fn different_functions_are_serialized() {
    let program = [
        (0, Ins::Call(|l| if l < 2 { 10 } else { 20 })),
        (1, Ins::Op),
        (2, Ins::Exit),
        (10, Ins::Op),
        (11, Ins::Ret),
        (20, Ins::Op),
        (21, Ins::Op),
        (22, Ins::Ret),
    ];
    let r = run(&program, 4);
    let (lo, hi, all) = (m(0b0011), m(0b1100), m(0b1111));
    assert_eq!(
        r.trace,
        [
            (0, all),
            (10, lo),
            (11, lo),
            (0, hi), // the call site again, for the parked lanes
            (20, hi),
            (21, hi),
            (22, hi),
            (1, all),
            (2, all),
        ]
    );
    assert_eq!(r.total.warp_instructions, 9);
    assert_eq!(r.per_function.get(&10).unwrap().ratio(4), Some(0.5));
    assert_eq!(r.per_function.get(&20).unwrap().ratio(4), Some(0.5));
}

#[test]
fn three_callees_and_nested_calls() {
    // Lane l calls function 10 * (l % 3 + 1); function 30 calls 40.
    let program = [
        (0, Ins::Call(|l| 10 * (l % 3 + 1))),
        (1, Ins::Exit),
        (10, Ins::Ret),
        (20, Ins::Ret),
        (30, Ins::Call(|_| 40)),
        (31, Ins::Ret),
        (40, Ins::Op),
        (41, Ins::Ret),
    ];
    let r = run(&program, 6);
    let (a, b, c, all) = (m(0b001001), m(0b010010), m(0b100100), m(0x3f));
    assert_eq!(
        r.trace,
        [(0, all), (10, a), (0, b | c), (20, b), (0, c), (30, c), (40, c), (41, c), (31, c), (1, all),]
    );
}

#[test]
fn exit_inside_callee() {
    let program = [(0, Ins::Call(|_| 10)), (1, Ins::Op), (2, Ins::Exit), (10, Ins::ExitIf(|l| l < 2)), (11, Ins::Ret)];
    let r = run(&program, 4);
    assert_eq!(r.trace, [(0, m(0xf)), (10, m(0xf)), (11, m(0xc)), (1, m(0xc)), (2, m(0xc))]);
}

#[test]
fn returned_lanes_wait_while_others_exit() {
    let mut s = CallStack::new(0u32, LaneMask::full(4));
    s.call(10, LaneMask::full(4), 1).unwrap();
    assert_eq!(s.call_depth(), 2);
    s.branch(11, m(0b0011), 12, None).unwrap();
    assert_eq!(s.top(), Some((11, m(0b0011))));
    assert!(s.ret(m(0b0011)).is_empty());
    assert_eq!(s.top(), Some((12, m(0b1100))));
    assert_eq!(s.frames()[1].lanes, LaneMask::full(4));
    // The lanes still in the function exit the program: the frame is gone
    // and the caller resumes with the lanes that had returned.
    assert!(s.exit_lanes(m(0b1100)).is_empty());
    assert_eq!(s.call_depth(), 1);
    assert_eq!(s.top(), Some((1, m(0b0011))));
    assert_eq!(s.current_function(), Some(0));
}

#[test]
fn return_in_outermost_frame_is_exit() {
    let mut s = CallStack::new(0u32, LaneMask::full(2));
    assert_eq!(s.ret(m(0b01)), m(0b10));
    assert_eq!(s.top(), Some((0, m(0b10))));
    assert!(s.ret(m(0b10)).is_empty());
    assert!(s.is_finished());
    assert_eq!(s.current_function(), None);
}

#[test]
fn call_errors_leave_the_stack_unchanged() {
    let mut s = CallStack::with_max_depth(0u32, LaneMask::full(4), 3);
    assert_eq!(s.call(10, LaneMask::EMPTY, 1), Err(StackError::NoActiveLanes));
    assert_eq!(s.call(10, m(0b0001), 0), Err(StackError::InvalidPaths));
    // A split call needs 3 entries for the caller plus one for the callee.
    assert_eq!(s.call(10, m(0b0001), 1), Err(StackError::Overflow { max_depth: 3 }));
    assert_eq!(s.depth(), 1);
    assert_eq!(s.call_depth(), 1);
    s.call(10, LaneMask::full(4), 1).unwrap();
    assert_eq!(s.frame_entries(1).len(), 1);
}

#[test]
fn recursion_is_bounded() {
    let mut s = CallStack::with_max_depth(0u32, LaneMask::full(8), 100);
    let mut calls = 0;
    loop {
        match s.call(0, LaneMask::full(8), 1) {
            Ok(()) => calls += 1,
            Err(e) => {
                assert_eq!(e, StackError::Overflow { max_depth: 100 });
                break;
            }
        }
    }
    assert_eq!(calls, 99);
    assert_eq!(s.call_depth(), 100);
    for _ in 0..99 {
        assert!(s.ret(LaneMask::full(8)).is_empty());
    }
    assert_eq!(s.top(), Some((1, LaneMask::full(8))));
    assert_eq!(s.call_depth(), 1);
}

/// A path blocked on lanes of a sibling path lets it run: the siblings take turns, each resumes where it
/// stopped, and all reconverge where they would have.
#[test]
fn deferred_paths_take_turns_and_reconverge() {
    let mut s = CallStack::new(0u32, LaneMask::full(4));
    // Lane 0 goes to 1, lanes 1..3 to 10; both reconverge at 20.
    s.branch(10, m(0b1110), 1, 20).unwrap();
    // Inside, lane 1 goes on at 11, lanes 2 and 3 wait at 15 (its reconvergence point).
    s.branch(11, m(0b0010), 15, 15).unwrap();
    assert_eq!(s.top(), Some((11, m(0b0010))));
    // The lowest waiting path (lane 0) runs; the reconvergence entry at 15 is not a path.
    assert!(s.defer_active_path());
    assert_eq!(s.top(), Some((1, m(0b0001))));
    // Deferred in turn: lane 1 again, then lane 0.
    assert!(s.defer_active_path());
    assert_eq!(s.top(), Some((11, m(0b0010))));
    assert!(s.defer_active_path());
    assert_eq!(s.top(), Some((1, m(0b0001))));
    s.set_pc(20);
    assert_eq!(s.top(), Some((11, m(0b0010))));
    s.set_pc(15);
    assert_eq!(s.top(), Some((15, m(0b1110))));
    // The only path: nothing else to run.
    assert!(!s.defer_active_path());
    assert_eq!(s.top(), Some((15, m(0b1110))));
    s.set_pc(20);
    assert_eq!(s.top(), Some((20, m(0b1111))));
    assert_eq!(s.depth(), 1);
}

/// Three sibling paths all deferred run round robin.
#[test]
fn deferral_is_round_robin() {
    let mut s = CallStack::new(0u32, LaneMask::full(3));
    s.diverge(&[(10, m(0b001)), (20, m(0b010)), (30, m(0b100))], 40).unwrap();
    let mut order = vec![s.pc().unwrap()];
    for _ in 0..6 {
        assert!(s.defer_active_path());
        order.push(s.pc().unwrap());
    }
    // The path lowest on the stack, which has waited longest, goes next.
    assert_eq!(order, [10, 30, 20, 10, 30, 20, 10]);
}

/// Only paths of the current function are candidates: lanes parked in the caller wait for the return.
#[test]
fn deferral_stays_in_the_current_frame() {
    let mut s = CallStack::new(0u32, LaneMask::full(2));
    s.branch(10, m(0b01), 1, 20).unwrap();
    s.call(100, m(0b01), 11).unwrap();
    assert!(!s.defer_active_path());
    assert_eq!(s.top(), Some((100, m(0b01))));
}
