//! Thread-fusion planning for one function: where native blocks start, which ops are yield points (barriers
//! and warp collectives, where a thread stops so that the others can catch up), and which registers are live
//! across each yield point (they are spilled to the thread's state block and reloaded on resume).

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
}

/// One yield point.
#[derive(Clone, Debug)]
pub struct YieldPoint {
    pub op: u32,
    pub kind: YieldKind,
    /// Register slots live after the op (to spill and reload), then predicate indices.
    pub live_slots: Vec<u32>,
    pub live_preds: Vec<u32>,
}

/// The plan of one function.
#[derive(Clone, Debug)]
pub struct Plan {
    /// `leader[i]`: op `i` starts a native block.
    pub leader: Vec<bool>,
    /// Yield points in op order; resume point `k + 1` continues after `yields[k]`.
    pub yields: Vec<YieldPoint>,
    /// The largest number of registers spilled at one yield point (slots + predicates + the carry flag).
    pub spill_words: u32,
}

pub fn yield_kind(op: &Op) -> Option<YieldKind> {
    match op.kind {
        Kind::Bar => match op.m.sub {
            Sub::Bar { wait: true, .. } => Some(YieldKind::Barrier),
            _ => None,
        },
        Kind::Shfl | Kind::Vote | Kind::Match | Kind::Redux | Kind::Activemask | Kind::WarpSync => {
            Some(YieldKind::Collective)
        }
        Kind::Matrix | Kind::Texture => Some(YieldKind::Runtime),
        _ => None,
    }
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
        let mut yields = Vec::new();
        let mut spill_words = 0;
        if !yield_ops.is_empty() {
            let live = Liveness::compute(prog, &leader);
            for &i in &yield_ops {
                let op = &prog.ops[i as usize];
                let mut after = live.live_after(prog, &leader, i as usize);
                if yield_kind(op) == Some(YieldKind::Runtime) {
                    // The runtime reads the op's sources and writes its destinations in the spill area.
                    for_each_use(prog, op, |v| after.insert(v));
                    for_each_def(prog, op, |v| after.insert(v));
                }
                let nslots = prog.slots as usize;
                let mut live_slots = Vec::new();
                let mut live_preds = Vec::new();
                for v in after.iter() {
                    if v < nslots {
                        live_slots.push(v as u32);
                    } else {
                        live_preds.push((v - nslots) as u32);
                    }
                }
                spill_words = spill_words.max(live_slots.len() as u32 + live_preds.len() as u32 + 1);
                yields.push(YieldPoint { op: i, kind: yield_kind(op).expect("a yield"), live_slots, live_preds });
            }
        }
        Plan { leader, yields, spill_words }
    }
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
    for s in [&op.a, &op.b, &op.c, &op.d, &op.mem.base] {
        src(s);
    }
    match op.extra.as_deref() {
        Some(Extra::Srcs(srcs)) => srcs.iter().for_each(&mut src),
        Some(Extra::Call { callee, args, .. }) => {
            if let Callee::Indirect(s) = callee {
                src(s);
            }
            for a in args {
                if let CallArg::Reg(r, _) = a {
                    src(&Src::Reg(*r));
                }
            }
        }
        _ => {}
    }
    // Matrix and texture operand lists: counted as read (the runtime reads the whole spill set anyway).
    if matches!(op.kind, Kind::Matrix | Kind::Texture) {
        for_each_matrix_reg(op, ns, &mut |v| {
            src(&if v < ns { Src::Reg(v as u32) } else { Src::Pred((v - ns) as u32, false) })
        });
    }
    // A guarded write keeps the old value where the guard is false: the old value is used.
    if op.guard.is_some() {
        for_each_def(prog, op, |v| src(&if v < ns { Src::Reg(v as u32) } else { Src::Pred((v - ns) as u32, false) }));
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

/// Register liveness at block granularity over the op list, with bitsets of `slots + preds` variables.
struct Liveness {
    /// Block index of each op, and each block's first op.
    starts: Vec<usize>,
    live_in: Vec<BitSet>,
}

#[derive(Clone, PartialEq, Eq)]
pub struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> BitSet {
        BitSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn union(&mut self, o: &BitSet) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0
            .iter()
            .enumerate()
            .flat_map(|(w, &bits)| (0..64).filter(move |b| bits & (1 << b) != 0).map(move |b| w * 64 + b))
    }
}

impl Liveness {
    fn compute(prog: &Program, leader: &[bool]) -> Liveness {
        let n = prog.ops.len();
        let vars = prog.slots as usize + prog.preds as usize;
        let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
        let mut block_of = vec![0usize; n];
        for (b, &s) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            block_of[s..end].iter_mut().for_each(|x| *x = b);
        }
        let nb = starts.len();
        let mut live_in = vec![BitSet::new(vars); nb];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..nb).rev() {
                let start = starts[b];
                let end = starts.get(b + 1).copied().unwrap_or(n);
                let mut live = BitSet::new(vars);
                successors(prog, end - 1, |s| live.union(&live_in[block_of[s]]));
                for i in (start..end).rev() {
                    let op = &prog.ops[i];
                    if i != end - 1 {
                        // Guarded early exits inside a block also reach their other successors.
                        successors(prog, i, |s| {
                            if s != i + 1 {
                                live.union(&live_in[block_of[s]])
                            }
                        });
                    }
                    if op.guard.is_none() {
                        for_each_def(prog, op, |v| live.remove(v));
                    }
                    for_each_use(prog, op, |v| live.insert(v));
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
            BitSet::new(self.live_in.first().map_or(0, |s| s.0.len() * 64))
        }
    }
}
