//! `mbarrier` objects (PTX ISA 9.7.13.15) for both engines: decoding the instructions on them (`mbarrier.*`
//! and `cp.async.mbarrier.arrive`), and each operation as a function of the object's 64-bit word, so that
//! the emulator and the JIT agree bit for bit.
//!
//! The ISA leaves the object's contents opaque. lockstep's layout:
//!
//! | bits   | field |
//! | ------ | ----- |
//! | 0-19   | pending arrivals of the current phase |
//! | 20-39  | expected arrivals (what the pending count is reloaded with when a phase completes) |
//! | 40-60  | tx-count, 21-bit two's complement (the ISA's range is ±(2^20 - 1)) |
//! | 62     | valid: set by `init`, cleared by `inval` |
//! | 63     | phase parity |
//!
//! Shared memory starts zeroed, so an object never initialized (or invalidated) has no valid bit, and any
//! operation but `init` on it is an error rather than undefined behaviour. The state token an arrive returns
//! is the object's word before the arrive: its parity says which phase the thread arrived in (`test_wait`),
//! its pending count is what `pending_count` reads.
//!
//! Every copy lockstep runs completes when issued (`copy.rs`), so the arrive-on of `cp.async.mbarrier.arrive`
//! happens at once, and waiting is only for other threads: a wait that fails lets the other threads run
//! (the emulator's warp scheduler, the JIT's yield points).

use ir::{Modifier, Opcode, Operand, StateSpace, Word};

use crate::{Decoder, Dst, Frame, InstId, Kind, Op, RegMap, Src, Sub, Ty};

/// Scheduling rounds in a row in which every live thread of a CTA waits (at failed mbarrier waits or
/// barriers) and no mbarrier changes, after which both engines report a deadlock. A thread may run code
/// between two failed waits (a backoff counter, a clock read); more than this many rounds of it without an
/// arrival means none is coming.
pub const IDLE_ROUNDS: u32 = 256;

/// The largest arrival count, and the largest tx-count magnitude.
pub const MAX_COUNT: u32 = (1 << 20) - 1;

const PENDING: u64 = MAX_COUNT as u64;
const EXPECTED_SHIFT: u32 = 20;
const TX_SHIFT: u32 = 40;
const TX_BITS: u32 = 21;
const VALID: u64 = 1 << 62;
const PARITY: u64 = 1 << 63;

/// An operation on an mbarrier object. Its operand `a` (an op's `a`) is the count of `init` and of an arrive
/// (1 when absent), the tx count of `expect_tx`, `complete_tx` and `.expect_tx` arrives, the state token or
/// phase parity of a wait, the token of `pending_count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mbar {
    Init,
    Inval,
    /// `arrive` or `arrive_drop` (`drop`: the expected count falls by the count too), `.noComplete` (the
    /// arrive must not complete the phase), `.expect_tx` (an expect-tx of `a`, then an arrive of 1).
    Arrive {
        drop: bool,
        no_complete: bool,
        expect_tx: bool,
    },
    ExpectTx,
    CompleteTx,
    /// `test_wait` or `try_wait` (`blocking`), on a state token or (`parity`) a phase parity.
    Wait {
        parity: bool,
        blocking: bool,
    },
    /// `pending_count`: reads a token, not the object.
    PendingCount,
    /// `cp.async.mbarrier.arrive{.noinc}`: without `.noinc` the pending count is raised by one first, so the
    /// arrive-on nets to nothing.
    CpAsyncArrive {
        noinc: bool,
    },
}

impl Mbar {
    /// Whether the op waits (a failed wait lets the other threads run).
    pub fn is_wait(self) -> bool {
        matches!(self, Mbar::Wait { .. })
    }
}

/// The fields of an mbarrier word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub pending: u32,
    pub expected: u32,
    pub tx: i32,
    pub valid: bool,
    pub parity: bool,
}

impl State {
    pub fn decode(word: u64) -> State {
        let tx = ((word >> TX_SHIFT) & ((1 << TX_BITS) - 1)) as i32;
        State {
            pending: (word & PENDING) as u32,
            expected: ((word >> EXPECTED_SHIFT) & PENDING) as u32,
            // Sign-extend the 21-bit field.
            tx: (tx << (32 - TX_BITS)) >> (32 - TX_BITS),
            valid: word & VALID != 0,
            parity: word & PARITY != 0,
        }
    }

    pub fn encode(self) -> u64 {
        u64::from(self.pending)
            | u64::from(self.expected) << EXPECTED_SHIFT
            | (u64::from(self.tx as u32) & ((1 << TX_BITS) - 1)) << TX_SHIFT
            | if self.valid { VALID } else { 0 }
            | if self.parity { PARITY } else { 0 }
    }

    /// Completes the current phase when no arrival and no transaction is pending: the parity flips and the
    /// pending count is reloaded from the expected count.
    fn settle(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.parity = !self.parity;
            self.pending = self.expected;
        }
    }

    fn arrive(&mut self, count: u32) -> Result<(), String> {
        if count == 0 || count > MAX_COUNT {
            return Err(format!("the arrive count {count} is outside 1 to 2^20 - 1"));
        }
        if count > self.pending {
            return Err(format!(
                "an arrive-on of {count} when {} arrivals are pending in this phase (more arrivals than the \
                 expected count {})",
                self.pending, self.expected
            ));
        }
        self.pending -= count;
        Ok(())
    }

    fn add_tx(&mut self, delta: i64) -> Result<(), String> {
        let tx = i64::from(self.tx) + delta;
        if tx.unsigned_abs() > u64::from(MAX_COUNT) {
            return Err(format!("the tx-count would be {tx}, outside ±(2^20 - 1)"));
        }
        self.tx = tx as i32;
        Ok(())
    }
}

/// What one thread's operation did: the object's new word (the old one for waits) and the result (the state
/// token of an arrive, 1 or 0 for a wait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub word: u64,
    pub result: u64,
}

/// One thread's `op` on the object holding `word`, with operand `a`. Undefined behaviour the ISA names
/// (an uninitialized object, more arrivals than expected, a `.noComplete` arrive that completes the phase,
/// counts out of range) is an error with its reason.
pub fn apply(op: Mbar, word: u64, a: u64) -> Result<Step, String> {
    let mut s = State::decode(word);
    if op == Mbar::Init {
        let count = a as u32;
        if count == 0 || count > MAX_COUNT || a >> 32 != 0 {
            return Err(format!("`mbarrier.init` with count {a}, outside 1 to 2^20 - 1"));
        }
        let s = State { pending: count, expected: count, tx: 0, valid: true, parity: false };
        return Ok(Step { word: s.encode(), result: 0 });
    }
    if !s.valid {
        return Err(format!("an mbarrier operation on an uninitialized or invalidated object (its word is {word:#x})"));
    }
    let count = a as u32;
    let result = match op {
        Mbar::Init | Mbar::PendingCount => 0,
        Mbar::Inval => return Ok(Step { word: 0, result: 0 }),
        Mbar::Arrive { drop, no_complete, expect_tx } => {
            let before = word;
            let count = if expect_tx {
                s.add_tx(i64::from(count))?;
                1
            } else {
                count
            };
            if drop {
                if count > s.expected {
                    return Err(format!("`arrive_drop` of {count} when the expected count is {}", s.expected));
                }
                s.expected -= count;
            }
            s.arrive(count)?;
            if no_complete && s.pending == 0 && s.tx == 0 {
                return Err("a `.noComplete` arrive-on completes the current phase".into());
            }
            s.settle();
            before
        }
        Mbar::ExpectTx => {
            s.add_tx(i64::from(count))?;
            0
        }
        Mbar::CompleteTx => {
            s.add_tx(-i64::from(count))?;
            s.settle();
            0
        }
        Mbar::CpAsyncArrive { noinc } => {
            if !noinc {
                if s.pending >= MAX_COUNT {
                    return Err("`cp.async.mbarrier.arrive` raises the pending count past 2^20 - 1".into());
                }
                s.pending += 1;
            }
            s.arrive(1)?;
            s.settle();
            0
        }
        Mbar::Wait { parity, .. } => {
            let phase = if parity {
                if a > 1 {
                    return Err(format!("the phase parity {a} is neither 0 nor 1"));
                }
                a == 1
            } else {
                token(a)?.parity
            };
            // The phase named is complete when it is no longer the current one.
            u64::from(phase != s.parity)
        }
    };
    Ok(Step { word: s.encode(), result })
}

/// `mbarrier.pending_count`: the pending count of the object before the arrive that returned `token`.
pub fn pending_count(token_word: u64) -> Result<u64, String> {
    Ok(u64::from(token(token_word)?.pending))
}

fn token(word: u64) -> Result<State, String> {
    let s = State::decode(word);
    if !s.valid {
        return Err(format!("the state operand {word:#x} is not a token an mbarrier arrive returned"));
    }
    Ok(s)
}

/// A sentence on an object's state, for deadlock reports.
pub fn describe(word: u64) -> String {
    let s = State::decode(word);
    if !s.valid {
        return "not initialized".into();
    }
    format!("phase parity {}, {} of {} arrivals pending, tx-count {}", u8::from(s.parity), s.pending, s.expected, s.tx)
}

/// The memory-ordering and scope qualifiers of mbarrier instructions: every engine runs a CTA's threads
/// with sequentially consistent memory, and a cluster is one CTA, so they hold by construction.
fn ordering(w: Word) -> bool {
    matches!(w, Word::Release | Word::Relaxed | Word::Acquire | Word::Cta | Word::Cluster)
}

impl Decoder<'_> {
    /// `mbarrier.{init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait,
    /// pending_count}` in the forms of PTX ISA 9.7.13.15.
    pub(crate) fn mbarrier(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let has = |w| inst.has(w);
        let cluster = inst.modifiers.contains(&Modifier::Space(StateSpace::SharedCluster));
        let subs = [
            Word::Init,
            Word::Inval,
            Word::Arrive,
            Word::ArriveDrop,
            Word::ExpectTx,
            Word::CompleteTx,
            Word::TestWait,
            Word::TryWait,
            Word::PendingCount,
        ];
        let named: Vec<Word> = subs.iter().copied().filter(|w| has(*w)).collect();
        let arrive = has(Word::Arrive) || has(Word::ArriveDrop);
        let mbar = match named.as_slice() {
            [Word::Init] => Mbar::Init,
            [Word::Inval] => Mbar::Inval,
            [Word::ExpectTx] => Mbar::ExpectTx,
            [Word::CompleteTx] => Mbar::CompleteTx,
            [Word::PendingCount] => Mbar::PendingCount,
            [Word::TestWait] | [Word::TryWait] => {
                Mbar::Wait { parity: has(Word::Parity), blocking: has(Word::TryWait) }
            }
            [Word::Arrive | Word::ArriveDrop] | [Word::Arrive | Word::ArriveDrop, Word::ExpectTx] => Mbar::Arrive {
                drop: has(Word::ArriveDrop),
                no_complete: has(Word::NoComplete),
                expect_tx: has(Word::ExpectTx),
            },
            _ => {
                self.unsupported(i, "not an `mbarrier` operation of PTX ISA 9.x (init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait, pending_count)");
                return;
            }
        };
        let allowed = |w: Word| {
            subs.contains(&w)
                || ordering(w)
                || (w == Word::Parity && mbar.is_wait())
                || (w == Word::NoComplete && arrive)
        };
        let bad = inst.modifiers.iter().find(|m| match m {
            Modifier::Word(w) => !allowed(*w),
            Modifier::Space(s) => {
                !matches!(s, StateSpace::Shared | StateSpace::SharedCta | StateSpace::SharedCluster)
                    || (*s == StateSpace::SharedCluster && mbar == Mbar::PendingCount)
            }
            Modifier::Type(t) => *t != ir::ScalarType::B64,
            _ => true,
        });
        if let Some(m) = bad {
            self.unsupported(i, &format!("`.{m}` is not a qualifier of this `mbarrier` operation"));
            return;
        }
        let ops = &inst.operands;
        let addr = |k: usize| matches!(ops.get(k), Some(Operand::Address(_)));
        // (destination?, address operand index, operands allowed)
        let (dst, at, counts): (bool, Option<usize>, &[usize]) = match mbar {
            Mbar::Init => (false, Some(0), &[2]),
            Mbar::Inval => (false, Some(0), &[1]),
            Mbar::ExpectTx | Mbar::CompleteTx => (false, Some(0), &[2]),
            Mbar::PendingCount => (true, None, &[2]),
            Mbar::Wait { blocking, .. } => (true, Some(1), if blocking { &[3, 4] } else { &[3] }),
            Mbar::Arrive { no_complete, expect_tx, .. } => {
                (true, Some(1), if no_complete || expect_tx { &[3] } else { &[2, 3] })
            }
            Mbar::CpAsyncArrive { .. } => (false, Some(0), &[1]),
        };
        if !counts.contains(&ops.len()) || at.is_some_and(|k| !addr(k)) {
            self.unsupported(i, "operands do not match the `mbarrier` operation's syntax (PTX ISA 9.7.13.15)");
            return;
        }
        if cluster && (mbar.is_wait() || matches!(mbar, Mbar::Init | Mbar::Inval)) {
            self.unsupported(i, "this `mbarrier` operation does not take `.shared::cluster` (PTX ISA 9.7.13.15.8)");
            return;
        }
        if cluster && arrive && !matches!(ops.first(), Some(Operand::Sink)) {
            self.unsupported(i, "an arrive on a `.shared::cluster` mbarrier returns no state: its destination is `_`");
            return;
        }
        op.kind = Kind::Mbarrier;
        op.m.sub = Sub::Mbar(mbar);
        op.ty = Ty::B64;
        if dst {
            op.dst = self.dst(i, &ops[0], regs);
        }
        if let Some(k) = at {
            op.mem = self.mem(i, ops.get(k), regs, frame);
        }
        let operand = at.map_or(1, |k| k + 1);
        let ty = match mbar {
            Mbar::Wait { parity: false, .. } | Mbar::PendingCount => Ty::B64,
            _ => Ty::U32,
        };
        op.a = match ops.get(operand) {
            Some(o) => self.src(i, o, ty, regs, frame),
            None => Src::Imm(1),
        };
    }

    /// `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]`.
    pub(crate) fn cp_async_mbarrier_arrive(&mut self, op: &mut Op, i: InstId, regs: &RegMap, frame: &Frame) {
        let inst = &self.body.insts[i];
        let bad = inst.modifiers.iter().find(|m| match m {
            Modifier::Word(w) => !matches!(w, Word::Async | Word::Mbarrier | Word::Arrive | Word::Noinc),
            Modifier::Space(s) => !matches!(s, StateSpace::Shared | StateSpace::SharedCta),
            Modifier::Type(t) => *t != ir::ScalarType::B64,
            _ => true,
        });
        if let Some(m) = bad {
            self.unsupported(i, &format!("`.{m}` is not a qualifier of `cp.async.mbarrier.arrive`"));
            return;
        }
        if inst.opcode != Opcode::Cp || inst.operands.len() != 1 || !matches!(inst.operands[0], Operand::Address(_)) {
            self.unsupported(i, "`cp.async.mbarrier.arrive` takes one address operand");
            return;
        }
        op.kind = Kind::Mbarrier;
        op.m.sub = Sub::Mbar(Mbar::CpAsyncArrive { noinc: inst.has(Word::Noinc) });
        op.ty = Ty::B64;
        op.mem = self.mem(i, inst.operands.first(), regs, frame);
        op.a = Src::Imm(1);
        op.dst = Dst::None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(op: Mbar, word: u64, a: u64) -> u64 {
        apply(op, word, a).expect("defined").word
    }

    const ARRIVE: Mbar = Mbar::Arrive { drop: false, no_complete: false, expect_tx: false };

    #[test]
    fn layout_round_trips_with_negative_tx() {
        let s = State { pending: 5, expected: 9, tx: -300, valid: true, parity: true };
        assert_eq!(State::decode(s.encode()), s);
        let s = State { pending: MAX_COUNT, expected: MAX_COUNT, tx: MAX_COUNT as i32, valid: true, parity: false };
        assert_eq!(State::decode(s.encode()), s);
    }

    #[test]
    fn phases_complete_on_the_last_arrival_and_the_last_transaction() {
        let w = step(Mbar::Init, 0, 2);
        let first = apply(ARRIVE, w, 1).unwrap();
        assert_eq!(first.result, w, "the token is the word before the arrive");
        let w = step(Mbar::ExpectTx, first.word, 64);
        let w = step(ARRIVE, w, 1);
        // Both arrived, 64 bytes outstanding: still phase 0.
        let wait = |w, token| apply(Mbar::Wait { parity: false, blocking: false }, w, token).unwrap().result;
        assert_eq!(wait(w, first.result), 0);
        let w = step(Mbar::CompleteTx, w, 64);
        assert_eq!(wait(w, first.result), 1);
        let s = State::decode(w);
        assert!(s.parity && s.pending == 2 && s.tx == 0);
        let parity = |w, p| apply(Mbar::Wait { parity: true, blocking: true }, w, p).unwrap().result;
        assert_eq!((parity(w, 0), parity(w, 1)), (1, 0));
    }

    #[test]
    fn drops_lower_later_phases_and_undefined_cases_are_errors() {
        let w = step(Mbar::Init, 0, 3);
        let w = step(Mbar::Arrive { drop: true, no_complete: false, expect_tx: false }, w, 1);
        let w = step(ARRIVE, w, 2);
        assert_eq!(State::decode(w).pending, 2, "the next phase expects two");
        assert!(apply(ARRIVE, w, 3).is_err(), "more arrivals than pending");
        assert!(apply(Mbar::Arrive { drop: false, no_complete: true, expect_tx: false }, w, 2).is_err());
        assert!(apply(ARRIVE, 0, 1).is_err(), "uninitialized");
        assert!(apply(ARRIVE, step(Mbar::Inval, w, 0), 1).is_err(), "invalidated");
        assert!(apply(Mbar::Init, 0, 0).is_err());
        assert_eq!(pending_count(apply(ARRIVE, w, 1).unwrap().result).unwrap(), 2);
    }

    #[test]
    fn cp_async_arrive_without_noinc_nets_to_nothing() {
        let w = step(Mbar::Init, 0, 2);
        assert_eq!(step(Mbar::CpAsyncArrive { noinc: false }, w, 1), w);
        assert_eq!(State::decode(step(Mbar::CpAsyncArrive { noinc: true }, w, 1)).pending, 1);
    }
}
