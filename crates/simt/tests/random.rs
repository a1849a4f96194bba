//! Randomized differential tests of the stacks.
//!
//! Random structured programs (if/else, loops with break/continue, n-way
//! switches, early exits and returns, calls between functions) are compiled
//! to a tiny ISA whose control-flow graph is reducible. Reconvergence points
//! are the immediate post-dominators of each branch, computed here on the
//! per-function graph with a virtual exit (ThreadFuser's construction).
//!
//! Each lane makes its own random decisions from its own seeded generator.
//! The program is run twice: once per lane on its own (MIMD reference), and
//! once as a warp driven through the stack. Every lane must execute exactly
//! the same instruction sequence in both runs, and the stack invariants must
//! hold after every warp instruction:
//!
//! * no entry is empty;
//! * any two entries are nested or disjoint;
//! * the union of all entries is the set of live lanes;
//! * (call stack) every frame's lanes equal the caller's parked top entry
//!   and contain the frame's entries.

use simt::{CallStack, LaneMask, ReconvergenceStack, StackEntry, StackError};

#[derive(Clone, Debug)]
enum Stmt {
    Op,
    If(Vec<Stmt>, Vec<Stmt>),
    Loop(Vec<Stmt>),
    Switch(Vec<Vec<Stmt>>),
    Break,
    Continue,
    Exit,
    Ret,
    /// Calls one of these functions (each lane picks one).
    Call(Vec<usize>),
}

#[derive(Clone, Debug)]
enum Ins {
    Op,
    /// Lanes that decide "else" go to `else_pc`, the others fall through.
    If {
        else_pc: usize,
    },
    /// Loop back edge: lanes that continue go to `head`.
    Latch {
        head: usize,
    },
    Jmp(usize),
    Switch(Vec<usize>),
    Exit,
    Ret,
    Call(Vec<usize>),
}

struct Program {
    code: Vec<Ins>,
    /// Entry pc of each function.
    entry: Vec<usize>,
    /// Reconvergence pc of each branch instruction (`None`: function exit).
    reconverge: Vec<Option<usize>>,
}

// ---------------------------------------------------------------- generate

struct Gen {
    rng: fastrand::Rng,
    functions: usize,
    calls: bool,
    /// Only `Op`, `If`, `Loop` and `Switch`.
    structured: bool,
}

impl Gen {
    fn block(&mut self, depth: u32, in_loop: bool, function: usize) -> Vec<Stmt> {
        let n = self.rng.usize(1..=4);
        (0..n).map(|_| self.stmt(depth, in_loop, function)).collect()
    }

    fn maybe_block(&mut self, depth: u32, in_loop: bool, function: usize) -> Vec<Stmt> {
        if self.rng.u32(0..4) == 0 {
            Vec::new()
        } else {
            self.block(depth, in_loop, function)
        }
    }

    fn stmt(&mut self, depth: u32, in_loop: bool, function: usize) -> Stmt {
        loop {
            match self.rng.u32(0..100) {
                0..=34 => return Stmt::Op,
                35..=54 if depth < 4 => {
                    return Stmt::If(
                        self.maybe_block(depth + 1, in_loop, function),
                        self.maybe_block(depth + 1, in_loop, function),
                    )
                }
                55..=66 if depth < 3 => return Stmt::Loop(self.block(depth + 1, true, function)),
                67..=72 if depth < 3 => {
                    let n = self.rng.usize(2..=4);
                    return Stmt::Switch((0..n).map(|_| self.maybe_block(depth + 1, in_loop, function)).collect());
                }
                _ if self.structured => continue,
                73..=77 if in_loop => return Stmt::Break,
                78..=81 if in_loop => return Stmt::Continue,
                82..=83 => return Stmt::Exit,
                84..=87 => return Stmt::Ret,
                88..=99 if self.calls && function + 1 < self.functions => {
                    let n = self.rng.usize(1..=3);
                    return Stmt::Call((0..n).map(|_| self.rng.usize(function + 1..self.functions)).collect());
                }
                _ => continue,
            }
        }
    }
}

// ----------------------------------------------------------------- compile

#[derive(Default)]
struct LoopFixups {
    breaks: Vec<usize>,
    continues: Vec<usize>,
}

fn compile_block(stmts: &[Stmt], code: &mut Vec<Ins>, loops: &mut Vec<LoopFixups>) {
    for stmt in stmts {
        match stmt {
            Stmt::Op => code.push(Ins::Op),
            Stmt::If(then, other) => {
                let branch = code.len();
                code.push(Ins::If { else_pc: 0 });
                compile_block(then, code, loops);
                let jump = code.len();
                code.push(Ins::Jmp(0));
                let else_pc = code.len();
                compile_block(other, code, loops);
                let end = code.len();
                code[branch] = Ins::If { else_pc };
                code[jump] = Ins::Jmp(end);
            }
            Stmt::Loop(body) => {
                let head = code.len();
                loops.push(LoopFixups::default());
                compile_block(body, code, loops);
                let latch = code.len();
                code.push(Ins::Latch { head });
                let exit = code.len();
                let fix = loops.pop().unwrap();
                for b in fix.breaks {
                    code[b] = Ins::Jmp(exit);
                }
                for c in fix.continues {
                    code[c] = Ins::Jmp(latch);
                }
            }
            Stmt::Switch(cases) => {
                let switch = code.len();
                code.push(Ins::Switch(Vec::new()));
                let mut starts = Vec::new();
                let mut jumps = Vec::new();
                for case in cases {
                    starts.push(code.len());
                    compile_block(case, code, loops);
                    jumps.push(code.len());
                    code.push(Ins::Jmp(0));
                }
                let end = code.len();
                code[switch] = Ins::Switch(starts);
                for j in jumps {
                    code[j] = Ins::Jmp(end);
                }
            }
            Stmt::Break => {
                loops.last_mut().unwrap().breaks.push(code.len());
                code.push(Ins::Jmp(usize::MAX));
            }
            Stmt::Continue => {
                loops.last_mut().unwrap().continues.push(code.len());
                code.push(Ins::Jmp(usize::MAX));
            }
            Stmt::Exit => code.push(Ins::Exit),
            Stmt::Ret => code.push(Ins::Ret),
            Stmt::Call(callees) => code.push(Ins::Call(callees.clone())),
        }
    }
}

/// Successors inside the function; `None` is the virtual exit.
fn successors(code: &[Ins], pc: usize) -> Vec<Option<usize>> {
    match &code[pc] {
        Ins::Op | Ins::Call(_) => vec![Some(pc + 1)],
        Ins::If { else_pc } => vec![Some(pc + 1), Some(*else_pc)],
        Ins::Latch { head } => vec![Some(*head), Some(pc + 1)],
        Ins::Jmp(t) => vec![Some(*t)],
        Ins::Switch(ts) => ts.iter().map(|&t| Some(t)).collect(),
        Ins::Exit | Ins::Ret => vec![None],
    }
}

/// Immediate post-dominators of `start..end` (a function) by the iterative
/// set algorithm on a graph with a virtual exit.
fn ipdoms(code: &[Ins], start: usize, end: usize) -> Vec<Option<usize>> {
    let n = end - start;
    let exit = n;
    let words = (n + 1).div_ceil(64);
    let full = vec![u64::MAX; words];
    let mut pdom = vec![full; n + 1];
    pdom[exit] = vec![0; words];
    pdom[exit][exit / 64] |= 1 << (exit % 64);
    let index = |s: Option<usize>| s.map_or(exit, |pc| pc - start);
    let mut changed = true;
    while changed {
        changed = false;
        for v in (0..n).rev() {
            let mut set = vec![u64::MAX; words];
            for s in successors(code, start + v) {
                for (a, b) in set.iter_mut().zip(&pdom[index(s)]) {
                    *a &= b;
                }
            }
            set[v / 64] |= 1 << (v % 64);
            if set != pdom[v] {
                pdom[v] = set;
                changed = true;
            }
        }
    }
    let count = |s: &Vec<u64>| s.iter().map(|w| w.count_ones()).sum::<u32>();
    (0..n)
        .map(|v| {
            // Strict post-dominators form a chain; the immediate one has
            // the most post-dominators of its own.
            let best =
                (0..=n).filter(|&d| d != v && pdom[v][d / 64] & (1 << (d % 64)) != 0).max_by_key(|&d| count(&pdom[d]));
            match best {
                Some(d) if d != exit => Some(start + d),
                _ => None,
            }
        })
        .collect()
}

fn compile(functions: &[Vec<Stmt>]) -> Program {
    let mut code = Vec::new();
    let mut entry = Vec::new();
    let mut reconverge = Vec::new();
    for body in functions {
        let start = code.len();
        entry.push(start);
        let mut loops = Vec::new();
        compile_block(body, &mut code, &mut loops);
        code.push(Ins::Ret);
        reconverge.extend(ipdoms(&code, start, code.len()));
    }
    Program { code, entry, reconverge }
}

// --------------------------------------------------------------- execution

const BUDGET: u32 = 60;

struct Lane {
    rng: fastrand::Rng,
    steps: u32,
    pending_call: Option<usize>,
}

impl Lane {
    fn new(seed: u64, lane: u32) -> Self {
        Lane {
            rng: fastrand::Rng::with_seed(seed ^ (u64::from(lane) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            steps: 0,
            pending_call: None,
        }
    }
    fn takes_else(&mut self) -> bool {
        self.rng.bool()
    }
    fn continues_loop(&mut self) -> bool {
        let draw = self.rng.u32(0..3) != 0;
        draw && self.steps < BUDGET
    }
    fn case(&mut self, n: usize) -> usize {
        self.rng.usize(0..n)
    }
    fn callee(&mut self, callees: &[usize]) -> usize {
        let rng = &mut self.rng;
        *self.pending_call.get_or_insert_with(|| callees[rng.usize(0..callees.len())])
    }
}

fn reference(p: &Program, mut lane: Lane) -> Vec<usize> {
    let mut trace = Vec::new();
    let mut returns = Vec::new();
    let mut pc = p.entry[0];
    loop {
        assert!(trace.len() < 1_000_000, "runaway reference");
        trace.push(pc);
        lane.steps += 1;
        pc = match &p.code[pc] {
            Ins::Op => pc + 1,
            Ins::If { else_pc } => {
                if lane.takes_else() {
                    *else_pc
                } else {
                    pc + 1
                }
            }
            Ins::Latch { head } => {
                if lane.continues_loop() {
                    *head
                } else {
                    pc + 1
                }
            }
            Ins::Jmp(t) => *t,
            Ins::Switch(ts) => ts[lane.case(ts.len())],
            Ins::Exit => break,
            Ins::Ret => match returns.pop() {
                Some(r) => r,
                None => break,
            },
            Ins::Call(callees) => {
                let f = lane.callee(callees);
                lane.pending_call = None;
                returns.push(pc + 1);
                p.entry[f]
            }
        };
    }
    trace
}

/// What the driver needs from a stack.
trait Warp {
    fn top(&self) -> Option<(usize, LaneMask)>;
    fn set_pc(&mut self, pc: usize);
    fn branch(&mut self, t: usize, m: LaneMask, f: usize, r: Option<usize>) -> Result<(), StackError>;
    fn diverge(&mut self, paths: &[(usize, LaneMask)], r: Option<usize>) -> Result<(), StackError>;
    fn exit_lanes(&mut self, m: LaneMask) -> LaneMask;
    /// Returns whether the lanes left the program (return from the
    /// outermost function).
    fn ret(&mut self, m: LaneMask) -> bool;
    fn call(&mut self, callee: usize, m: LaneMask, ret: usize) -> Result<(), StackError>;
    fn entries(&self) -> &[StackEntry<usize>];
    fn check_frames(&self) {}
    fn depth(&self) -> usize {
        self.entries().len()
    }
}

impl Warp for ReconvergenceStack<usize> {
    fn top(&self) -> Option<(usize, LaneMask)> {
        ReconvergenceStack::top(self)
    }
    fn set_pc(&mut self, pc: usize) {
        ReconvergenceStack::set_pc(self, pc)
    }
    fn branch(&mut self, t: usize, m: LaneMask, f: usize, r: Option<usize>) -> Result<(), StackError> {
        ReconvergenceStack::branch(self, t, m, f, r)
    }
    fn diverge(&mut self, paths: &[(usize, LaneMask)], r: Option<usize>) -> Result<(), StackError> {
        ReconvergenceStack::diverge(self, paths, r)
    }
    fn exit_lanes(&mut self, m: LaneMask) -> LaneMask {
        ReconvergenceStack::exit_lanes(self, m)
    }
    fn ret(&mut self, m: LaneMask) -> bool {
        assert!(ReconvergenceStack::exit_lanes(self, m).is_empty());
        true
    }
    fn call(&mut self, _: usize, _: LaneMask, _: usize) -> Result<(), StackError> {
        unreachable!("no calls in single-function programs")
    }
    fn entries(&self) -> &[StackEntry<usize>] {
        ReconvergenceStack::entries(self)
    }
}

impl Warp for CallStack<usize> {
    fn top(&self) -> Option<(usize, LaneMask)> {
        CallStack::top(self)
    }
    fn set_pc(&mut self, pc: usize) {
        CallStack::set_pc(self, pc)
    }
    fn branch(&mut self, t: usize, m: LaneMask, f: usize, r: Option<usize>) -> Result<(), StackError> {
        CallStack::branch(self, t, m, f, r)
    }
    fn diverge(&mut self, paths: &[(usize, LaneMask)], r: Option<usize>) -> Result<(), StackError> {
        CallStack::diverge(self, paths, r)
    }
    fn exit_lanes(&mut self, m: LaneMask) -> LaneMask {
        CallStack::exit_lanes(self, m)
    }
    fn ret(&mut self, m: LaneMask) -> bool {
        let outermost = self.call_depth() == 1;
        assert!(CallStack::ret(self, m).is_empty());
        outermost
    }
    fn call(&mut self, callee: usize, m: LaneMask, ret: usize) -> Result<(), StackError> {
        CallStack::call(self, callee, m, ret)
    }
    fn entries(&self) -> &[StackEntry<usize>] {
        CallStack::entries(self)
    }
    fn check_frames(&self) {
        let frames = self.frames();
        assert_eq!(frames[0].base(), 0);
        for (i, frame) in frames.iter().enumerate().skip(1) {
            let inside = self.frame_entries(i).iter().fold(LaneMask::EMPTY, |a, e| a | e.mask);
            assert!(!inside.is_empty(), "empty inner frame");
            assert!(inside.is_subset_of(frame.lanes));
            let caller_top = self.frame_entries(i - 1).last().expect("empty caller");
            assert_eq!(caller_top.mask, frame.lanes);
            assert_eq!(Some(caller_top.pc), frame.return_pc);
            assert_eq!(self.frame_entries(i)[0].reconverge, None);
        }
    }
}

fn check_invariants<W: Warp>(w: &W, live: LaneMask) {
    let entries = w.entries();
    let mut union = LaneMask::EMPTY;
    for (i, lower) in entries.iter().enumerate() {
        assert!(!lower.mask.is_empty(), "empty entry in {entries:?}");
        union |= lower.mask;
        for upper in &entries[i + 1..] {
            assert!(
                upper.mask.is_subset_of(lower.mask) || !upper.mask.intersects(lower.mask),
                "neither nested nor disjoint: {entries:?}"
            );
        }
    }
    assert_eq!(union, live, "live lanes");
    w.check_frames();
}

struct Outcome {
    traces: Vec<Vec<usize>>,
    schedule: Vec<(usize, LaneMask)>,
    warp_instructions: u64,
    max_depth: usize,
}

fn simulate<W: Warp>(p: &Program, mut w: W, width: u32, seed: u64) -> Outcome {
    let mut lanes: Vec<Lane> = (0..width).map(|l| Lane::new(seed, l)).collect();
    let mut traces = vec![Vec::new(); width as usize];
    let all = LaneMask::full(width);
    let mut exited = LaneMask::EMPTY;
    let mut warp_instructions = 0u64;
    let mut max_depth = w.depth();
    let mut schedule = Vec::new();
    while let Some((pc, active)) = w.top() {
        schedule.push((pc, active));
        warp_instructions += 1;
        assert!(warp_instructions < 1_000_000, "runaway warp");
        let mut execute = |mask: LaneMask, lanes: &mut [Lane]| {
            for l in mask {
                traces[l as usize].push(pc);
                lanes[l as usize].steps += 1;
            }
        };
        let decide = |lanes: &mut [Lane], f: &mut dyn FnMut(&mut Lane) -> bool| -> LaneMask {
            active.iter().filter(|&l| f(&mut lanes[l as usize])).collect()
        };
        match &p.code[pc] {
            Ins::Call(callees) => {
                let mut group = LaneMask::EMPTY;
                let first = lanes[active.first().unwrap() as usize].callee(callees);
                for l in active {
                    if lanes[l as usize].callee(callees) == first {
                        group.insert(l);
                        lanes[l as usize].pending_call = None;
                    }
                }
                execute(group, &mut lanes);
                w.call(p.entry[first], group, pc + 1).unwrap();
            }
            ins => {
                execute(active, &mut lanes);
                let r = p.reconverge[pc];
                match ins {
                    Ins::Op => w.set_pc(pc + 1),
                    Ins::Jmp(t) => w.set_pc(*t),
                    Ins::If { else_pc } => {
                        let taken = decide(&mut lanes, &mut Lane::takes_else);
                        w.branch(*else_pc, taken, pc + 1, r).unwrap();
                    }
                    Ins::Latch { head } => {
                        let taken = decide(&mut lanes, &mut Lane::continues_loop);
                        w.branch(*head, taken, pc + 1, r).unwrap();
                    }
                    Ins::Switch(ts) => {
                        let mut paths: Vec<(usize, LaneMask)> = ts.iter().map(|&t| (t, LaneMask::EMPTY)).collect();
                        for l in active {
                            let case = lanes[l as usize].case(ts.len());
                            paths[case].1.insert(l);
                        }
                        w.diverge(&paths, r).unwrap();
                    }
                    Ins::Exit => {
                        assert!(w.exit_lanes(active).is_empty());
                        exited |= active;
                    }
                    Ins::Ret => {
                        if w.ret(active) {
                            exited |= active;
                        }
                    }
                    Ins::Call(_) => unreachable!(),
                }
            }
        }
        max_depth = max_depth.max(w.depth());
        check_invariants(&w, all - exited);
    }
    assert_eq!(exited, all, "finished with live lanes");
    Outcome { traces, schedule, warp_instructions, max_depth }
}

fn random_bodies(seed: u64, calls: bool, structured: bool) -> Vec<Vec<Stmt>> {
    let mut g = Gen {
        rng: fastrand::Rng::with_seed(seed),
        functions: if calls { 1 + (seed % 4) as usize } else { 1 },
        calls,
        structured,
    };
    (0..g.functions).map(|f| g.block(0, false, f)).collect()
}

fn random_program(seed: u64, calls: bool) -> Program {
    compile(&random_bodies(seed, calls, false))
}

fn width_for(seed: u64) -> u32 {
    let widths = [1, 2, 3, 8, 31, 32, 33, 64];
    widths[(seed as usize / 7) % widths.len()]
}

fn differential<W: Warp>(seed: u64, calls: bool, make: impl Fn(usize, LaneMask) -> W) -> Outcome {
    let p = random_program(seed, calls);
    let width = width_for(seed);
    let out = simulate(&p, make(p.entry[0], LaneMask::full(width)), width, seed);
    for lane in 0..width {
        let expected = reference(&p, Lane::new(seed, lane));
        assert_eq!(out.traces[lane as usize], expected, "seed {seed}: lane {lane} executed a different path");
    }
    out
}

#[test]
fn reconvergence_stack_matches_mimd_execution() {
    let mut diverged = 0;
    for seed in 0..300 {
        let out = differential(seed, false, ReconvergenceStack::new);
        let thread: usize = out.traces.iter().map(Vec::len).sum();
        assert!(thread as u64 >= out.warp_instructions);
        if out.max_depth > 1 {
            diverged += 1;
        }
    }
    // The generator really exercises divergence.
    assert!(diverged > 100, "only {diverged} runs diverged");
}

#[test]
fn call_stack_matches_mimd_execution() {
    let mut deep = 0;
    for seed in 1000..1300 {
        let out = differential(seed, true, CallStack::new);
        if out.max_depth > 3 {
            deep += 1;
        }
    }
    assert!(deep > 50, "only {deep} runs went deep");
}

#[test]
fn ipdom_helper_sanity() {
    // if/else: the branch reconverges at the join; the latch at the exit.
    let p = compile(&[vec![Stmt::If(vec![Stmt::Op], vec![Stmt::Op]), Stmt::Loop(vec![Stmt::Op])]]);
    // 0: If{else 3}; 1: Op; 2: Jmp 4; 3: Op; 4: Op (loop head); 5: Latch; 6: Ret
    assert_eq!(p.reconverge[0], Some(4));
    assert_eq!(p.reconverge[5], Some(6));
    let p = compile(&[vec![Stmt::If(vec![Stmt::Ret], vec![Stmt::Op])]]);
    // 0: If{else 3}; 1: Ret; 2: Jmp 4; 3: Op; 4: Ret -> only the exit.
    assert_eq!(p.reconverge[0], None);
}

// ------------------------------------------- structured masked reference

/// Number of instructions `compile_block` emits for `stmts`.
fn code_len(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::If(a, b) => 1 + code_len(a) + 1 + code_len(b),
            Stmt::Loop(body) => code_len(body) + 1,
            Stmt::Switch(cases) => 1 + cases.iter().map(|c| code_len(c) + 1).sum::<usize>(),
            _ => 1,
        })
        .sum()
}

/// Executes structured code (`Op`, `If`, `Loop`, `Switch`) the way a vector
/// machine with execution masks would: both sides of an `if` under their
/// masks (the "else" side first, as it is the taken side of the compiled
/// branch), a loop until no lane continues, switch cases in order, and
/// everything after a construct with all the lanes that entered it. This is
/// the schedule IPDOM reconvergence must reproduce on such code.
struct Masked<'a> {
    lanes: &'a mut [Lane],
    schedule: Vec<(usize, LaneMask)>,
}

impl Masked<'_> {
    fn emit(&mut self, pc: usize, mask: LaneMask) {
        self.schedule.push((pc, mask));
        for l in mask {
            self.lanes[l as usize].steps += 1;
        }
    }

    fn block(&mut self, stmts: &[Stmt], mut pc: usize, mask: LaneMask) {
        if mask.is_empty() {
            return;
        }
        for stmt in stmts {
            match stmt {
                Stmt::Op => self.emit(pc, mask),
                Stmt::If(then, other) => {
                    self.emit(pc, mask);
                    let otherwise: LaneMask = mask.iter().filter(|&l| self.lanes[l as usize].takes_else()).collect();
                    let then_pc = pc + 1;
                    let jump = then_pc + code_len(then);
                    self.block(other, jump + 1, otherwise);
                    let taken_then = mask - otherwise;
                    if !taken_then.is_empty() {
                        self.block(then, then_pc, taken_then);
                        self.emit(jump, taken_then);
                    }
                }
                Stmt::Loop(body) => {
                    let latch = pc + code_len(body);
                    let mut iterating = mask;
                    while !iterating.is_empty() {
                        self.block(body, pc, iterating);
                        self.emit(latch, iterating);
                        iterating = iterating.iter().filter(|&l| self.lanes[l as usize].continues_loop()).collect();
                    }
                }
                Stmt::Switch(cases) => {
                    self.emit(pc, mask);
                    let mut masks = vec![LaneMask::EMPTY; cases.len()];
                    for l in mask {
                        let case = self.lanes[l as usize].case(cases.len());
                        masks[case].insert(l);
                    }
                    let mut start = pc + 1;
                    for (case, &m) in cases.iter().zip(&masks) {
                        let jump = start + code_len(case);
                        if !m.is_empty() {
                            self.block(case, start, m);
                            self.emit(jump, m);
                        }
                        start = jump + 1;
                    }
                }
                other => unreachable!("not structured: {other:?}"),
            }
            pc += code_len(std::slice::from_ref(stmt));
        }
    }
}

#[test]
fn reconvergence_matches_masked_execution_of_structured_code() {
    let mut diverged = 0;
    for seed in 5000..5300 {
        let bodies = random_bodies(seed, false, true);
        let p = compile(&bodies);
        let width = width_for(seed);
        let all = LaneMask::full(width);
        let out = simulate(&p, ReconvergenceStack::new(0, all), width, seed);
        let mut lanes: Vec<Lane> = (0..width).map(|l| Lane::new(seed, l)).collect();
        let mut masked = Masked { lanes: &mut lanes, schedule: Vec::new() };
        masked.block(&bodies[0], 0, all);
        let ret = code_len(&bodies[0]);
        masked.emit(ret, all);
        assert_eq!(out.schedule, masked.schedule, "seed {seed}");
        if out.max_depth > 1 {
            diverged += 1;
        }
    }
    assert!(diverged > 100, "only {diverged} runs diverged");
}
