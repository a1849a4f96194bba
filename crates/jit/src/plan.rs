//! Thread-fusion planning for one function: where native blocks start, which ops are yield points (barriers
//! and warp collectives, where a thread stops so that the others can catch up), and which registers are live
//! across each yield point (they are spilled to the thread's state words and reloaded on resume).

use std::collections::HashMap;

use graph::{BitSet, EntityRef};

use program::{CallArg, Callee, Dst, Extra, Kind, Op, Program, Src, Sub};

/// What a thread does at a yield point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YieldKind {
    /// `bar.sync`, `barrier.sync`, `bar.red`: wait for the CTA.
    Barrier,
    /// `shfl`, `vote`, `match`, `redux`, `activemask`, `bar.warp.sync`: exchange with the warp.
    Collective,
    /// Matrix, texture and surface instructions: the runtime executes them for the warp with the shared
    /// semantics (`program::tensor`, `program::texture`), reading and writing the registers spilled here.
    Runtime,
    /// `mbarrier.test_wait` / `try_wait`: the thread runs it itself and stops only when it fails, to let the
    /// others arrive; it resumes after it with a false result (`translate/mbarrier.rs`).
    Wait,
}

/// One yield point.
#[derive(Clone, Debug)]
pub struct YieldPoint {
    pub op: u32,
    pub kind: YieldKind,
    /// Registers live after the op (reloaded on resume), as liveness variables (slots, then predicates at
    /// `slots + p`).
    pub live: Vec<usize>,
    /// The live registers whose home may be stale here (stored before the thread stops); the others hold
    /// the value they were reloaded with or last stored with.
    pub spill: Vec<usize>,
    /// The live registers read on resume before the next yield point (the others stay in their homes
    /// until a later resume needs them).
    pub reload: Vec<usize>,
}

/// The plan of one function.
#[derive(Clone, Debug)]
pub struct Plan {
    /// `leader[i]`: op `i` starts a native block.
    pub leader: Vec<bool>,
    /// Yield points in op order; resume point `k + 1` continues after `yields[k]`.
    pub yields: Vec<YieldPoint>,
    /// Each register's home word in the spill area (`None`: never live across a yield point), by liveness
    /// variable. Homes are fixed for the whole kernel, so a value reloaded at one yield point and unchanged
    /// at the next need not be stored again.
    pub home: Vec<Option<u32>>,
    /// Words of the spill area: the homes, then the carry flag.
    pub spill_words: u32,
    /// `eager[i]`: op `i` runs at most once per thread (it is in no loop), so the registers it writes that
    /// have homes are stored right after it; they stay clean until written again, instead of being stored
    /// at every yield point of a loop that follows.
    pub eager: Vec<bool>,
    /// Every yield point is a plain barrier: `bar.sync` of one immediate id for the whole CTA, without a
    /// thread count or reduction, and no thread arrives early (`bar.arrive`). The kernel loop then counts
    /// the arrivals and releases the CTA itself, without returning to the runtime.
    pub counted_barriers: bool,
}

pub fn yield_kind(op: &Op) -> Option<YieldKind> {
    match op.kind {
        Kind::Bar => match op.m.sub {
            Sub::Bar { wait: true, .. } => Some(YieldKind::Barrier),
            _ => None,
        },
        Kind::Shfl | Kind::Vote | Kind::Match | Kind::Redux | Kind::Activemask | Kind::Elect | Kind::WarpSync => {
            Some(YieldKind::Collective)
        }
        // Texture and surface instructions are per thread: a helper call (`translate.rs`), no yield.
        Kind::Matrix => Some(YieldKind::Runtime),
        Kind::Mbarrier => match op.m.sub {
            Sub::Mbar(m) if m.is_wait() => Some(YieldKind::Wait),
            _ => None,
        },
        _ => None,
    }
}

/// Whether every barrier op is `bar.sync ID` with one immediate ID, no count, no reduction, and nothing else
/// yields or arrives early.
fn plain_barriers(prog: &Program) -> bool {
    let mut id = None;
    prog.ops.iter().all(|op| match (op.kind, yield_kind(op)) {
        (Kind::Bar, Some(YieldKind::Barrier)) => {
            let plain = matches!(op.m.sub, Sub::Bar { red: None, .. }) && matches!(op.b, Src::None);
            let Src::Imm(v) = op.a else { return false };
            plain && *id.get_or_insert(v) == v
        }
        (Kind::Bar, _) => false,
        (_, Some(_)) => false,
        _ => true,
    })
}

fn ends_block(op: &Op) -> bool {
    matches!(op.kind, Kind::Bra | Kind::Brx | Kind::Ret | Kind::Exit | Kind::Trap)
}

impl Plan {
    pub fn new(prog: &Program) -> Plan {
        let n = prog.ops.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (i, op) in prog.ops.iter().enumerate() {
            if ends_block(op) || yield_kind(op).is_some() {
                leader[i + 1] = true;
            }
            if op.kind == Kind::Bra {
                leader[op.target as usize] = true;
            }
            if let Some(Extra::Targets(t)) = op.extra.as_deref() {
                for &x in t {
                    leader[x as usize] = true;
                }
            }
        }
        leader.truncate(n.max(1));
        let yield_ops: Vec<u32> =
            prog.ops.iter().enumerate().filter(|(_, o)| yield_kind(o).is_some()).map(|(i, _)| i as u32).collect();
        let vars = prog.slots as usize + prog.preds as usize;
        let mut yields = Vec::new();
        let mut home = vec![None; vars];
        let mut words = 0;
        let mut eager = vec![false; n];
        if !yield_ops.is_empty() {
            let live = Liveness::compute(prog, &leader);
            for &i in &yield_ops {
                let op = &prog.ops[i as usize];
                let mut after = live.live_after(prog, &leader, i as usize);
                if yield_kind(op) == Some(YieldKind::Runtime) {
                    // The runtime reads the op's sources and writes its destinations in the spill area.
                    for_each_use(prog, op, |v| {
                        after.insert(v);
                    });
                    for_each_def(prog, op, |v| {
                        after.insert(v);
                    });
                }
                let live: Vec<usize> = after.iter().filter(|&v| v < vars).collect();
                for &v in &live {
                    if home[v].is_none() {
                        home[v] = Some(words);
                        words += 1;
                    }
                }
                let kind = yield_kind(op).expect("a yield");
                yields.push(YieldPoint { op: i, kind, live, spill: Vec::new(), reload: Vec::new() });
            }
            eager = outside_loops(prog, &leader);
            let clean = Clean::compute(prog, &leader, &yields, &eager, &home);
            for y in &mut yields {
                y.spill = y.live.iter().copied().filter(|&v| !clean[&(y.op as usize)].contains(v)).collect();
            }
            let needed = Liveness::compute_regions(prog, &leader, &yields);
            for y in &mut yields {
                let after = needed.live_after(prog, &leader, y.op as usize);
                y.reload = y.live.iter().copied().filter(|&v| after.contains(v)).collect();
            }
        }
        let counted_barriers = !yields.is_empty() && plain_barriers(prog);
        Plan { leader, yields, home, spill_words: words + 1, counted_barriers, eager }
    }

    /// Byte offset of a liveness variable's home from the thread's state words (`abi::thread`).
    pub fn home_offset(&self, var: usize) -> Option<i32> {
        Some(crate::abi::thread::SPILL + crate::abi::thread::WORD * self.home.get(var).copied().flatten()? as i32)
    }

    /// Byte offset of the exchange area (posted operands and collective results, `abi::thread::POST_A` ...).
    pub fn exchange_offset(&self) -> i32 {
        crate::abi::thread::SPILL + crate::abi::thread::WORD * self.spill_words as i32
    }

    /// Words of each thread's state (status, homes, exchange area).
    pub fn state_words(&self) -> i32 {
        1 + self.spill_words as i32 + crate::abi::thread::EXCHANGE_WORDS
    }

    /// Byte offset of the carry flag's home.
    pub fn carry_offset(&self) -> i32 {
        crate::abi::thread::SPILL + crate::abi::thread::WORD * (self.spill_words as i32 - 1)
    }
}

/// The operands an op reads: `a` to `d`, the address base, a vector op's sources, a `cp.async`'s source
/// address, `src-size` and `ignore-src`, a bulk copy's source and mbarrier addresses and tensor coordinates
/// (not a call's arguments).
pub fn operands(op: &Op) -> impl Iterator<Item = &Src> {
    let srcs = match op.extra.as_deref() {
        Some(Extra::Srcs(srcs)) => &srcs[..],
        Some(Extra::AtomVec(v)) => &v.srcs[..],
        _ => &[],
    };
    let copy = match op.extra.as_deref() {
        Some(Extra::Copy(c)) => [Some(&c.src.base), c.src_size.as_ref(), c.ignore_src.as_ref()],
        Some(Extra::Bulk(b)) => [Some(&b.src.base), b.mbar.as_ref().map(|m| &m.base), None],
        _ => [None; 3],
    };
    let coords = match op.extra.as_deref() {
        Some(Extra::Bulk(b)) => b.tensor.as_ref().map_or(&[][..], |t| &t.coords[..]),
        _ => &[],
    };
    [&op.a, &op.b, &op.c, &op.d, &op.mem.base].into_iter().chain(srcs).chain(copy.into_iter().flatten()).chain(coords)
}

/// Calls `f` with the liveness variable of every register the op reads (slots, then predicates after the
/// slots).
pub fn for_each_use(prog: &Program, op: &Op, mut f: impl FnMut(usize)) {
    let ns = prog.slots as usize;
    let mut src = |s: &Src| match *s {
        Src::Reg(r) => f(r as usize),
        Src::Pred(p, _) => f(ns + p as usize),
        _ => {}
    };
    if let Some((p, _)) = op.guard {
        src(&Src::Pred(p, false));
    }
    operands(op).for_each(&mut src);
    if let Some(Extra::Call { callee, args, .. }) = op.extra.as_deref() {
        if let Callee::Indirect(s) = callee {
            src(s);
        }
        for a in args {
            if let CallArg::Reg(r, _) = a {
                src(&Src::Reg(*r));
            }
        }
    }
    // Matrix operand lists: counted as read (the runtime reads the whole spill set anyway).
    if op.kind == Kind::Matrix {
        for_each_matrix_reg(op, ns, &mut |v| {
            src(&if v < ns { Src::Reg(v as u32) } else { Src::Pred((v - ns) as u32, false) })
        });
    }
    // Texture operands: the sources are read; a destination keeps its old value where the instruction does
    // not write it (a `txq` of one field, a failed fetch's predicate), so it is read too.
    if let Some(Extra::Texture(t)) = op.extra.as_deref() {
        let (mut read, mut old) = (Vec::new(), Vec::new());
        t.operands(|s| read.push(*s), |d| old.push(dst_as_src(d)));
        read.iter().chain(&old).for_each(&mut src);
    }
    // A guarded write keeps the old value where the guard is false: the old value is used.
    if op.guard.is_some() {
        for_each_def(prog, op, |v| src(&if v < ns { Src::Reg(v as u32) } else { Src::Pred((v - ns) as u32, false) }));
    }
}

/// A destination read as a source (its old value).
fn dst_as_src(d: &Dst) -> Src {
    match *d {
        Dst::Reg(r, _) => Src::Reg(r),
        Dst::Pred(p) => Src::Pred(p, false),
        _ => Src::None,
    }
}

/// Calls `f` with the liveness variable of every register the op writes.
pub fn for_each_def(prog: &Program, op: &Op, mut f: impl FnMut(usize)) {
    let ns = prog.slots as usize;
    let mut dst = |d: &Dst| match *d {
        Dst::Reg(r, _) => f(r as usize),
        Dst::Pred(p) => f(ns + p as usize),
        _ => {}
    };
    dst(&op.dst);
    dst(&op.dst2);
    match op.extra.as_deref() {
        Some(Extra::Dsts(d)) => d.iter().for_each(&mut dst),
        Some(Extra::AtomVec(v)) => v.dsts.iter().for_each(&mut dst),
        Some(Extra::Texture(t)) => t.operands(|_| {}, &mut dst),
        Some(Extra::Call { rets, .. }) => {
            for a in rets {
                if let CallArg::Reg(r, _) = a {
                    dst(&Dst::Reg(*r, 0));
                }
            }
        }
        _ => {}
    }
}

/// Registers named inside matrix and texture operand lists (not covered by the generic def/use walk).
fn for_each_matrix_reg(op: &Op, ns: usize, f: &mut impl FnMut(usize)) {
    let f = std::cell::RefCell::new(f);
    let src = |s: &Src| match *s {
        Src::Reg(r) => (f.borrow_mut())(r as usize),
        Src::Pred(p, _) => (f.borrow_mut())(ns + p as usize),
        _ => {}
    };
    let dst = |d: &Dst| match *d {
        Dst::Reg(r, _) => (f.borrow_mut())(r as usize),
        Dst::Pred(p) => (f.borrow_mut())(ns + p as usize),
        _ => {}
    };
    match op.extra.as_deref() {
        Some(Extra::Matrix(m)) => m.operands(src, dst),
        Some(Extra::Texture(t)) => t.operands(src, dst),
        _ => {}
    }
}

/// Successor ops of op `i` (the end of the function is `None`).
fn successors(prog: &Program, i: usize, mut f: impl FnMut(usize)) {
    let op = &prog.ops[i];
    let n = prog.ops.len();
    let fall = |f: &mut dyn FnMut(usize)| {
        if i + 1 < n {
            f(i + 1)
        }
    };
    match op.kind {
        Kind::Bra => {
            f(op.target as usize);
            if op.guard.is_some() {
                fall(&mut f);
            }
        }
        Kind::Brx => {
            if let Some(Extra::Targets(t)) = op.extra.as_deref() {
                t.iter().for_each(|&x| f(x as usize));
            }
        }
        Kind::Ret | Kind::Exit | Kind::Trap => {
            if op.guard.is_some() {
                fall(&mut f);
            }
        }
        _ => fall(&mut f),
    }
}

/// Which registers hold the same value as their home in the spill area ("clean"), just before each yield
/// point: a forward must-analysis. A thread starts with every register dirty; writing a register makes it
/// dirty; at a yield point the live registers are stored (the dirty ones) and reloaded, so they are clean
/// after it. Registers a barrier or collective writes on resume are dirty again.
struct Clean;

impl Clean {
    /// The clean set before each yield point, by op index.
    fn compute(
        prog: &Program,
        leader: &[bool],
        yields: &[YieldPoint],
        eager: &[bool],
        home: &[Option<u32>],
    ) -> HashMap<usize, BitSet> {
        let n = prog.ops.len();
        let vars = prog.slots as usize + prog.preds as usize;
        let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        let block_of = block_index(&starts, n);
        let at: HashMap<usize, &YieldPoint> = yields.iter().map(|y| (y.op as usize, y)).collect();
        // Unreached blocks keep "everything clean" (the top of the lattice); the entry starts with nothing.
        let mut clean_in = vec![BitSet::full(vars); starts.len()];
        if !starts.is_empty() {
            clean_in[0] = BitSet::new(vars);
        }
        let transfer = |i: usize, clean: &mut BitSet| {
            let op = &prog.ops[i];
            // Eager stores follow ordinary ops only: a collective's or `bar.red`'s result arrives on resume.
            let eager = eager[i] && !at.contains_key(&i);
            if let Some(y) = at.get(&i) {
                if op.guard.is_none() {
                    y.live.iter().for_each(|&v| {
                        clean.insert(v);
                    });
                }
                if y.kind == YieldKind::Runtime {
                    return;
                }
            }
            for_each_def(prog, op, |v| {
                if eager && home[v].is_some() {
                    clean.insert(v);
                } else {
                    clean.remove(v);
                }
            });
        };
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..starts.len() {
                let end = starts.get(b + 1).copied().unwrap_or(n);
                let mut clean = clean_in[b].clone();
                for i in starts[b]..end {
                    transfer(i, &mut clean);
                }
                successors(prog, end - 1, |s| {
                    let t = block_of[s];
                    let before = clean_in[t].clone();
                    clean_in[t].intersect_with(&clean);
                    changed |= clean_in[t] != before;
                });
            }
        }
        let mut out = HashMap::new();
        for b in 0..starts.len() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            let mut clean = clean_in[b].clone();
            for i in starts[b]..end {
                if at.contains_key(&i) {
                    out.insert(i, clean.clone());
                }
                transfer(i, &mut clean);
            }
        }
        out
    }
}

/// Which ops lie in no loop of the function (all of them in none when a cycle is irreducible).
fn outside_loops(prog: &Program, leader: &[bool]) -> Vec<bool> {
    use graph::{AdjacencyGraph, DominatorTree, LoopForest, NodeId};
    let n = prog.ops.len();
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    if starts.is_empty() {
        return vec![false; n];
    }
    let block_of = block_index(&starts, n);
    let mut succs = vec![Vec::new(); starts.len()];
    for (b, s) in succs.iter_mut().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n);
        for i in starts[b]..end {
            successors(prog, i, |t| {
                if t != i + 1 || i + 1 == end {
                    s.push(NodeId::new(block_of[t]));
                }
            });
        }
    }
    let g = AdjacencyGraph::from_successors(NodeId::new(0), &succs);
    let dom = DominatorTree::compute(&g);
    let loops = LoopForest::compute(&g, &dom);
    if !loops.irreducible_edges().is_empty() {
        return vec![false; n];
    }
    (0..n).map(|i| loops.loop_depth(NodeId::new(block_of[i])) == 0).collect()
}

fn block_index(starts: &[usize], n: usize) -> Vec<usize> {
    let mut block_of = vec![0usize; n];
    for (b, &s) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n);
        block_of[s..end].iter_mut().for_each(|x| *x = b);
    }
    block_of
}

/// The registers and predicates (`slots + preds` variables) live on entry to each of `ops`, which must start
/// blocks (`Plan::leader`): a read on some path from there may see their value.
pub fn live_in_at(prog: &Program, leader: &[bool], ops: impl IntoIterator<Item = usize>) -> HashMap<usize, BitSet> {
    let live = Liveness::compute(prog, leader);
    ops.into_iter()
        .filter_map(|i| {
            let b = live.starts.binary_search(&i).ok()?;
            Some((i, live.live_in[b].clone()))
        })
        .collect()
}

/// Register liveness at block granularity over the op list, with bitsets of `slots + preds` variables.
struct Liveness {
    /// Block index of each op, and each block's first op.
    starts: Vec<usize>,
    live_in: Vec<BitSet>,
}

impl Liveness {
    /// Plain liveness: a register is live where a later read may see its value.
    fn compute(prog: &Program, leader: &[bool]) -> Liveness {
        Liveness::solve(prog, leader, &HashMap::new())
    }

    /// Liveness within the stretches between yield points: which registers a thread reads in registers
    /// before its next stop. An unguarded yield point ends the stretch: after it, registers come back from
    /// their homes, so what is live after it is not needed before it, except the operands the thread posts
    /// and the registers it stores there.
    fn compute_regions(prog: &Program, leader: &[bool], yields: &[YieldPoint]) -> Liveness {
        Liveness::solve(prog, leader, &yields.iter().map(|y| (y.op as usize, y)).collect())
    }

    fn solve(prog: &Program, leader: &[bool], yields: &HashMap<usize, &YieldPoint>) -> Liveness {
        let n = prog.ops.len();
        let vars = prog.slots as usize + prog.preds as usize;
        let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        let block_of = block_index(&starts, n);
        let nb = starts.len();
        let mut live_in = vec![BitSet::new(vars); nb];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..nb).rev() {
                let start = starts[b];
                let end = starts.get(b + 1).copied().unwrap_or(n);
                let mut live = BitSet::new(vars);
                let last = &prog.ops[end - 1];
                if !(yields.contains_key(&(end - 1)) && last.guard.is_none()) {
                    successors(prog, end - 1, |s| {
                        live.union_with(&live_in[block_of[s]]);
                    });
                }
                for i in (start..end).rev() {
                    let op = &prog.ops[i];
                    if let Some(y) = yields.get(&i) {
                        y.spill.iter().for_each(|&v| {
                            live.insert(v);
                        });
                        if y.kind == YieldKind::Runtime {
                            // The runtime reads the operands from their homes; only the guard is read here.
                            if let Some((p, _)) = op.guard {
                                live.insert(prog.slots as usize + p as usize);
                            }
                        } else {
                            for_each_use(prog, op, |v| {
                                live.insert(v);
                            });
                        }
                        continue;
                    }
                    if i != end - 1 {
                        // Guarded early exits inside a block also reach their other successors.
                        successors(prog, i, |s| {
                            if s != i + 1 {
                                live.union_with(&live_in[block_of[s]]);
                            }
                        });
                    }
                    if op.guard.is_none() {
                        for_each_def(prog, op, |v| {
                            live.remove(v);
                        });
                    }
                    for_each_use(prog, op, |v| {
                        live.insert(v);
                    });
                }
                if live != live_in[b] {
                    live_in[b] = live;
                    changed = true;
                }
            }
        }
        Liveness { starts, live_in }
    }

    /// Variables live just after op `i` (op `i + 1` starts a block, as it follows a yield point).
    fn live_after(&self, _prog: &Program, _leader: &[bool], i: usize) -> BitSet {
        let b = self.starts.partition_point(|&s| s <= i + 1) - 1;
        if self.starts.get(b) == Some(&(i + 1)) {
            self.live_in[b].clone()
        } else {
            // The yield is the function's last op.
            BitSet::new(self.live_in.first().map_or(0, BitSet::domain_size))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use device::{LoadedModule, SharedLayout};

    /// Decodes the first kernel of `body` (wrapped in a module header) and plans it.
    fn plan(body: &str) -> (Program, Plan) {
        let ptx = format!(".version 8.0\n.target sm_80\n.address_size 64\n{body}");
        let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}"));
        let kernel = module.functions.iter().find(|(_, f)| f.is_kernel()).map(|(id, _)| id).expect("a kernel");
        let shared = SharedLayout::for_kernel(&module, kernel);
        let loaded = LoadedModule { global_addresses: vec![None; module.globals.len()], module };
        let mut programs = program::decode_all(&loaded, kernel, &shared).expect("decodes");
        let prog = programs.remove(&kernel).expect("the kernel");
        let plan = Plan::new(&prog);
        (prog, plan)
    }

    /// Register names of liveness variables, for kernels that declare `%r<N>` and then `%p<M>` (slots are
    /// numbered in declaration order).
    fn names(prog: &Program, vars: &[usize]) -> Vec<String> {
        let ns = prog.slots as usize;
        let name = |v: usize| if v < ns { format!("%r{v}") } else { format!("%p{}", v - ns) };
        let mut v: Vec<String> = vars.iter().map(|&v| name(v)).collect();
        v.sort();
        v
    }

    /// A value computed before a loop with a barrier is stored once where it is written; the loop counter,
    /// written in the loop, is stored at the barriers after its writes; a value not read before the next
    /// barrier is not reloaded.
    #[test]
    fn homes_spills_and_reloads() {
        let (prog, plan) = plan(
            ".visible .entry k(.param .u64 p) {
               .reg .b32 %r<8>; .reg .pred %p<2>;
               mov.u32 %r1, %tid.x;
               mul.lo.u32 %r2, %r1, 3;
               mov.u32 %r3, 0;
             LOOP:
               bar.sync 0;
               add.u32 %r3, %r3, 1;
               setp.lt.u32 %p1, %r3, 4;
               @%p1 bra LOOP;
               bar.sync 0;
               add.u32 %r4, %r2, %r3;
               bar.sync 0;
               add.u32 %r5, %r4, %r1;
               ret;
             }",
        );
        assert!(plan.counted_barriers);
        let loop_bar = &plan.yields[0];
        assert_eq!(names(&prog, &loop_bar.live), ["%r1", "%r2", "%r3"]);
        // %r1 and %r2 are written outside the loop, so they were stored right after their writes.
        assert_eq!(names(&prog, &loop_bar.spill), ["%r3"]);
        assert_eq!(names(&prog, &loop_bar.reload), ["%r3"]);
        // The loop's last increment follows its barrier.
        let after = &plan.yields[1];
        assert_eq!(names(&prog, &after.spill), ["%r3"]);
        assert_eq!(names(&prog, &after.reload), ["%r2", "%r3"]);
        // %r4 is written outside loops: stored at once.
        let last = &plan.yields[2];
        assert_eq!(names(&prog, &last.spill), Vec::<String>::new());
        assert_eq!(names(&prog, &last.reload), ["%r1", "%r4"]);
        assert!(plan.home.iter().filter(|h| h.is_some()).count() == 4);
    }

    #[test]
    fn only_one_plain_barrier_is_counted() {
        let kernel = |body: &str| {
            plan(&format!(
                ".visible .entry k() {{ .reg .b32 %r<4>; .reg .pred %p<2>; mov.u32 %r1, %tid.x; {body} ret; }}"
            ))
            .1
            .counted_barriers
        };
        assert!(kernel("bar.sync 0; bar.sync 0;"));
        assert!(kernel("barrier.sync 3;"));
        assert!(!kernel("bar.sync 0; bar.sync 1;"), "two barrier ids");
        assert!(!kernel("bar.sync 0, 64;"), "a thread count");
        assert!(!kernel("bar.sync %r1;"), "an id in a register");
        assert!(!kernel("bar.arrive 1, 64; bar.sync 0;"), "early arrival");
        assert!(!kernel("bar.red.popc.u32 %r2, 0, %p1;"), "a reduction");
        assert!(!kernel("bar.sync 0; shfl.sync.down.b32 %r2, %r1, 1, 31, -1;"), "a warp collective");
        assert!(!kernel("mov.u32 %r2, 0;"), "no yield point");
    }
}
