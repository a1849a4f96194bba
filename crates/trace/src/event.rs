//! Events of an OS thread's stream and their compact encoding.
//!
//! Every event starts with one varint `v`: the low 3 bits are the tag, `v >> 3` the payload. Memory accesses
//! store their address as a zigzag varint delta against the previous address seen at the same *slot* (global
//! instruction index modulo [`ADDR_SLOTS`]) within the same SIMT segment; the table of previous addresses
//! starts at zero at every [`Event::SegmentStart`]. See `FORMAT.md`.

use serde::Serialize;

use crate::varint::{self, Cursor, DecodeError};

/// Number of previous-address slots for delta encoding.
pub const ADDR_SLOTS: usize = 4096;

const TAG_BLOCK: u64 = 0;
const TAG_MEM: u64 = 1;
const TAG_CALL: u64 = 2;
const TAG_RET: u64 = 3;
const TAG_TAIL: u64 = 4;
const TAG_LOCK: u64 = 5;
const TAG_SKIP: u64 = 6;
const TAG_EXT: u64 = 7;

const EXT_SEGMENT_START: u64 = 0;
const EXT_SEGMENT_END: u64 = 1;
const EXT_PARTIAL: u64 = 2;

/// Which synchronization primitive a lock event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// `pthread_mutex_lock`/`unlock` (and `std::mutex`, which calls them).
    Mutex = 0,
    /// `pthread_spin_lock`/`unlock`.
    Spin = 1,
    /// OpenMP `critical` (`GOMP_critical_start`/`end`, named or not).
    OmpCritical = 2,
    /// `pthread_rwlock_*`.
    RwLock = 3,
    /// `omp_set_lock`/`omp_unset_lock`.
    OmpLock = 4,
}

impl LockKind {
    pub fn from_u64(v: u64) -> Option<LockKind> {
        Some(match v {
            0 => LockKind::Mutex,
            1 => LockKind::Spin,
            2 => LockKind::OmpCritical,
            3 => LockKind::RwLock,
            4 => LockKind::OmpLock,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::Spin => "spin",
            LockKind::OmpCritical => "omp-critical",
            LockKind::RwLock => "rwlock",
            LockKind::OmpLock => "omp-lock",
        }
    }
}

/// Why instructions were left out of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipKind {
    /// A system call (`arg` = its number); executes no traced instructions itself.
    Syscall = 0,
    /// A call to an `--exclude`d function (`arg` = its symbol id), callees included.
    Excluded = 1,
    /// Spinning inside a lock function after the first attempt (`arg` = the lock function's symbol id).
    LockSpin = 2,
}

impl SkipKind {
    pub fn from_u64(v: u64) -> Option<SkipKind> {
        Some(match v {
            0 => SkipKind::Syscall,
            1 => SkipKind::Excluded,
            2 => SkipKind::LockSpin,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SkipKind::Syscall => "syscall",
            SkipKind::Excluded => "excluded",
            SkipKind::LockSpin => "lock-spin",
        }
    }
}

/// One event of an OS thread's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The block `tb` executed (all its instructions).
    Block { tb: u32 },
    /// Instructions `from..` of block `tb` executed (the SIMT thread started inside the block).
    PartialBlock { tb: u32, from: u16 },
    /// Instruction `insn` (index in the last block) accessed `1 << size_log2` bytes at `addr`.
    Mem { insn: u16, store: bool, size_log2: u8, addr: u64 },
    /// A call; the next block is the callee's entry. `callee` is a symbol id.
    Call { callee: u32 },
    /// A return that popped `frames` frames of the shadow stack (more than one after `longjmp` or an
    /// exception; 0 when it matched no call seen).
    Return { frames: u32 },
    /// A jump to another function's entry: the current frame now runs `callee`.
    TailCall { callee: u32 },
    /// A lock acquired (`release == false`) or released, at the lock function's return.
    Lock { kind: LockKind, release: bool, addr: u64 },
    /// Instructions executed but not recorded.
    Skip { kind: SkipKind, insns: u64, arg: u64 },
    /// The following events belong to SIMT thread `simt`.
    SegmentStart { simt: u32 },
    /// The current SIMT thread ended.
    SegmentEnd,
}

/// Where encoded events go.
pub trait Sink {
    fn put_bytes(&mut self, b: &[u8]);

    /// Appends the low `n` bytes (n <= 16) of `v`, little-endian. A sink with 16 bytes of slack may store all
    /// 16 and advance by `n`: one register store instead of a variable-length copy.
    #[inline]
    fn put_u128(&mut self, v: u128, n: usize) {
        self.put_bytes(&v.to_le_bytes()[..n]);
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put_bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
}

/// Encodes events, keeping the previous-address table.
#[derive(Debug)]
pub struct EventEncoder {
    last: Box<[u64]>,
    gen: Box<[u32]>,
    cur_gen: u32,
}

impl Default for EventEncoder {
    fn default() -> Self {
        Self::new()
    }
}

/// `v` as LEB128 bytes in a register (little-endian) and their count (1..=10), without branches: the 7-bit
/// groups are spread into bytes with shifts and masks, and the continuation bits are set below the last byte.
#[inline(always)]
fn leb128(v: u64) -> (u128, usize) {
    let bits = 64 - (v | 1).leading_zeros();
    let n = bits.div_ceil(7) as usize;
    let mut x: u64 = 0;
    let mut k = 0;
    while k < 8 {
        x |= ((v >> (7 * k)) & 0x7f) << (8 * k);
        k += 1;
    }
    let hi = v >> 56;
    let y = (hi & 0x7f) | ((hi & 0x80) << 1);
    let cont = 0x8080_8080_8080_8080_8080u128 & ((1u128 << (8 * (n - 1))) - 1);
    (u128::from(x) | (u128::from(y) << 64) | cont, n)
}

#[inline]
fn head(tag: u64, payload: u64) -> u64 {
    (payload << 3) | tag
}

impl EventEncoder {
    pub fn new() -> Self {
        EventEncoder {
            last: vec![0; ADDR_SLOTS].into_boxed_slice(),
            gen: vec![0; ADDR_SLOTS].into_boxed_slice(),
            cur_gen: 1,
        }
    }

    /// Forgets all previous addresses (done at every segment start), in O(1).
    pub fn reset(&mut self) {
        self.cur_gen = self.cur_gen.wrapping_add(1);
        if self.cur_gen == 0 {
            self.gen.fill(0);
            self.cur_gen = 1;
        }
    }

    #[inline]
    fn one(s: &mut impl Sink, v: u64) {
        let (x, n) = leb128(v);
        s.put_u128(x, n);
    }

    #[inline]
    fn two(s: &mut impl Sink, a: u64, b: u64) {
        let (x, n) = leb128(a);
        let (y, m) = leb128(b);
        if n + m <= 16 {
            s.put_u128(x | (y << (8 * n)), n + m);
        } else {
            s.put_u128(x, n);
            s.put_u128(y, m);
        }
    }

    #[inline]
    pub fn block(&mut self, s: &mut impl Sink, tb: u32) {
        Self::one(s, head(TAG_BLOCK, tb.into()));
    }

    /// A memory access by instruction `insn` of a block whose first global instruction index is `first_insn`.
    #[inline]
    pub fn mem(&mut self, s: &mut impl Sink, first_insn: u32, insn: u16, store: bool, size_log2: u8, addr: u64) {
        let slot = (first_insn.wrapping_add(insn.into()) as usize) & (ADDR_SLOTS - 1);
        let prev = if self.gen[slot] == self.cur_gen { self.last[slot] } else { 0 };
        self.gen[slot] = self.cur_gen;
        self.last[slot] = addr;
        let payload = (u64::from(insn) << 4) | (u64::from(store) << 3) | u64::from(size_log2 & 7);
        Self::two(s, head(TAG_MEM, payload), varint::zigzag(addr.wrapping_sub(prev) as i64));
    }

    pub fn call(&mut self, s: &mut impl Sink, callee: u32) {
        Self::one(s, head(TAG_CALL, callee.into()));
    }

    pub fn ret(&mut self, s: &mut impl Sink, frames: u32) {
        Self::one(s, head(TAG_RET, frames.into()));
    }

    pub fn tail_call(&mut self, s: &mut impl Sink, callee: u32) {
        Self::one(s, head(TAG_TAIL, callee.into()));
    }

    pub fn lock(&mut self, s: &mut impl Sink, kind: LockKind, release: bool, addr: u64) {
        Self::two(s, head(TAG_LOCK, ((kind as u64) << 1) | u64::from(release)), addr);
    }

    pub fn skip(&mut self, s: &mut impl Sink, kind: SkipKind, insns: u64, arg: u64) {
        Self::one(s, head(TAG_SKIP, kind as u64));
        Self::two(s, insns, arg);
    }

    /// Starts a SIMT segment (and resets the address table).
    pub fn segment_start(&mut self, s: &mut impl Sink, simt: u32) {
        self.reset();
        Self::two(s, head(TAG_EXT, EXT_SEGMENT_START), simt.into());
    }

    pub fn segment_end(&mut self, s: &mut impl Sink) {
        Self::one(s, head(TAG_EXT, EXT_SEGMENT_END));
    }

    pub fn partial_block(&mut self, s: &mut impl Sink, tb: u32, from: u16) {
        Self::one(s, head(TAG_EXT, EXT_PARTIAL));
        Self::two(s, tb.into(), from.into());
    }

    /// Encodes any event (convenience for writers that are not on a hot path). `first_insn` maps a block id to
    /// (first global instruction index, instruction count); it is consulted for memory events only.
    pub fn event(&mut self, s: &mut impl Sink, e: &Event, last_block_first_insn: u32) {
        match *e {
            Event::Block { tb } => self.block(s, tb),
            Event::PartialBlock { tb, from } => self.partial_block(s, tb, from),
            Event::Mem { insn, store, size_log2, addr } => {
                self.mem(s, last_block_first_insn, insn, store, size_log2, addr)
            }
            Event::Call { callee } => self.call(s, callee),
            Event::Return { frames } => self.ret(s, frames),
            Event::TailCall { callee } => self.tail_call(s, callee),
            Event::Lock { kind, release, addr } => self.lock(s, kind, release, addr),
            Event::Skip { kind, insns, arg } => self.skip(s, kind, insns, arg),
            Event::SegmentStart { simt } => self.segment_start(s, simt),
            Event::SegmentEnd => self.segment_end(s),
        }
    }
}

/// Receives a stream's events in bulk ([`crate::EventStream::drive`]): whole and partial blocks and memory
/// accesses, the bulk of every stream, through methods of their own, the rest as [`Event`]s.
pub trait Visitor {
    /// Instructions `from..` of block `tb` executed (`from` is 0 for a whole block); `first_insn` is the block's
    /// first global instruction index ([`BlockShape::first_insn`]).
    fn block(&mut self, tb: u32, from: u16, first_insn: u32);
    /// Instruction `insn` of the last block accessed `1 << size_log2` bytes at `addr`.
    fn mem(&mut self, insn: u16, store: bool, size_log2: u8, addr: u64);
    /// Any other event.
    fn event(&mut self, e: Event);
    /// Whether the drive ([`crate::EventStream::drive`]) should return now, before its budget of events is spent
    /// (checked before every event).
    #[inline]
    fn satisfied(&self) -> bool {
        false
    }
}

/// What the decoder needs to know of a block: its first global instruction index and instruction count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShape {
    pub first_insn: u32,
    pub len: u32,
}

/// Decodes events, mirroring [`EventEncoder`]'s address table.
#[derive(Debug)]
pub struct EventDecoder {
    last: Vec<u64>,
    /// Shape of the block the last `Block`/`PartialBlock` named (memory events refer to it).
    cur: Option<BlockShape>,
}

impl Default for EventDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl EventDecoder {
    pub fn new() -> Self {
        EventDecoder { last: vec![0; ADDR_SLOTS], cur: None }
    }

    /// The shape of the block the last `Block`/`PartialBlock` named.
    #[inline]
    pub fn current_block(&self) -> Option<BlockShape> {
        self.cur
    }

    pub fn reset(&mut self) {
        self.last.fill(0);
    }

    /// The rest of a memory access whose head carried `payload`: its instruction and address.
    #[inline(always)]
    fn mem(&mut self, c: &mut Cursor<'_>, payload: u64) -> Result<(u16, u64), DecodeError> {
        let cur = self.cur.ok_or(DecodeError("a memory access precedes any block"))?;
        let insn = payload >> 4;
        if insn >= u64::from(cur.len) {
            return Err(DecodeError("a memory access names an instruction past the end of its block"));
        }
        let delta = varint::unzigzag(c.varint()?);
        let slot = (cur.first_insn.wrapping_add(insn as u32) as usize) & (ADDR_SLOTS - 1);
        let addr = self.last[slot].wrapping_add(delta as u64);
        self.last[slot] = addr;
        Ok((insn as u16, addr))
    }

    /// Decodes the next event if it is a whole block or a memory access (the bulk of every stream) and hands it
    /// to `v`; any other event is left for [`EventDecoder::next`] (`Ok(false)`, the cursor unmoved).
    #[inline(always)]
    pub fn next_fast(
        &mut self,
        c: &mut Cursor<'_>,
        shapes: &[BlockShape],
        v: &mut impl Visitor,
    ) -> Result<bool, DecodeError> {
        let start = c.pos();
        let head = c.varint()?;
        let payload = head >> 3;
        match head & 7 {
            TAG_BLOCK => {
                let sh = usize::try_from(payload)
                    .ok()
                    .and_then(|i| shapes.get(i))
                    .ok_or(DecodeError("an event names a block the trace does not define"))?;
                self.cur = Some(*sh);
                v.block(payload as u32, 0, sh.first_insn);
            }
            TAG_MEM => {
                let (insn, addr) = self.mem(c, payload)?;
                v.mem(insn, payload & 8 != 0, (payload & 7) as u8, addr);
            }
            _ => {
                c.set_pos(start);
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Decodes the next event. `shape` looks up a block id (None: unknown block → error).
    pub fn next(
        &mut self,
        c: &mut Cursor<'_>,
        shape: &impl Fn(u32) -> Option<BlockShape>,
    ) -> Result<Event, DecodeError> {
        let v = c.varint()?;
        let payload = v >> 3;
        let p32 = || u32::try_from(payload).map_err(|_| DecodeError("an event field is out of range"));
        Ok(match v & 7 {
            TAG_BLOCK => {
                let tb = p32()?;
                self.cur = Some(shape(tb).ok_or(DecodeError("an event names a block the trace does not define"))?);
                Event::Block { tb }
            }
            TAG_MEM => {
                let (insn, addr) = self.mem(c, payload)?;
                Event::Mem { insn, store: payload & 8 != 0, size_log2: (payload & 7) as u8, addr }
            }
            TAG_CALL => Event::Call { callee: p32()? },
            TAG_RET => Event::Return { frames: p32()? },
            TAG_TAIL => Event::TailCall { callee: p32()? },
            TAG_LOCK => {
                let kind = LockKind::from_u64(payload >> 1).ok_or(DecodeError("unknown lock kind"))?;
                Event::Lock { kind, release: payload & 1 != 0, addr: c.varint()? }
            }
            TAG_SKIP => {
                let kind = SkipKind::from_u64(payload).ok_or(DecodeError("unknown skip kind"))?;
                Event::Skip { kind, insns: c.varint()?, arg: c.varint()? }
            }
            _ => match payload {
                EXT_SEGMENT_START => {
                    self.reset();
                    self.cur = None;
                    Event::SegmentStart { simt: c.varint_u32()? }
                }
                EXT_SEGMENT_END => {
                    self.cur = None;
                    Event::SegmentEnd
                }
                EXT_PARTIAL => {
                    let tb = c.varint_u32()?;
                    let from = c.varint()?;
                    let sh = shape(tb).ok_or(DecodeError("an event names a block the trace does not define"))?;
                    if from >= u64::from(sh.len) {
                        return Err(DecodeError("a partial block starts past its end"));
                    }
                    self.cur = Some(sh);
                    Event::PartialBlock { tb, from: from as u16 }
                }
                _ => return Err(DecodeError("unknown extended event")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128_matches_varint() {
        let mut vals = vec![0u64, 1, 127, 128, 255, 16383, 16384, u64::MAX, 1 << 56, (1 << 63) - 1, 1 << 63];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (x % 64));
        }
        for v in vals {
            let (r, n) = leb128(v);
            let mut want = Vec::new();
            varint::put(&mut want, v);
            assert_eq!(&r.to_le_bytes()[..n], &want[..], "{v:#x}");
            assert!(n == 16 || r >> (8 * n) == 0);
        }
    }

    struct Record(Vec<Event>);

    impl Visitor for Record {
        fn block(&mut self, tb: u32, from: u16, _first_insn: u32) {
            self.0.push(Event::PartialBlock { tb, from });
        }
        fn mem(&mut self, insn: u16, store: bool, size_log2: u8, addr: u64) {
            self.0.push(Event::Mem { insn, store, size_log2, addr });
        }
        fn event(&mut self, e: Event) {
            self.0.push(e);
        }
    }

    #[test]
    fn fast_path_agrees_with_next_on_bad_input() {
        let shapes = [BlockShape { first_insn: 0, len: 3 }];
        let shape = |tb: u32| shapes.get(tb as usize).copied();
        let cases: [&[u8]; 6] = [
            &[0x01, 0x00],             // a memory access before any block
            &[0x08],                   // block 1 of 1
            &[0x00, 0x81, 0x03, 0x00], // block 0, then an access by instruction 3 of 3
            &[0x00, 0x01],             // an access whose address delta is missing
            &[0x80],                   // a cut varint
            &[0x00, 0x09, 0x80, 0x80], // an access whose address delta is cut
        ];
        for bytes in cases {
            let (mut a, mut b) = (EventDecoder::new(), EventDecoder::new());
            let (mut ca, mut cb) = (Cursor::new(bytes), Cursor::new(bytes));
            let mut r = Record(Vec::new());
            let fast = loop {
                match a.next_fast(&mut ca, &shapes, &mut r) {
                    Ok(true) => {}
                    Ok(false) => panic!("{bytes:?}: only blocks and accesses here"),
                    Err(e) => break e,
                }
            };
            let slow = loop {
                if let Err(e) = b.next(&mut cb, &shape) {
                    break e;
                }
            };
            assert_eq!(fast, slow, "{bytes:?}");
        }
    }

    #[test]
    fn round_trip() {
        let shapes = [BlockShape { first_insn: 0, len: 3 }, BlockShape { first_insn: 3, len: 5000 }];
        let shape = |tb: u32| shapes.get(tb as usize).copied();
        let events = [
            Event::SegmentStart { simt: 7 },
            Event::Block { tb: 0 },
            Event::Mem { insn: 2, store: true, size_log2: 3, addr: 0x7fff_0000_1000 },
            Event::Block { tb: 0 },
            Event::Mem { insn: 2, store: true, size_log2: 3, addr: 0x7fff_0000_0ff8 },
            Event::Call { callee: 12 },
            Event::Block { tb: 1 },
            Event::Mem { insn: 4095, store: false, size_log2: 2, addr: u64::MAX },
            Event::Mem { insn: 0, store: false, size_log2: 0, addr: 0 },
            Event::Return { frames: 1 },
            Event::TailCall { callee: 3 },
            Event::Lock { kind: LockKind::OmpCritical, release: true, addr: 0x5555_5555_0000 },
            Event::Skip { kind: SkipKind::Syscall, insns: 0, arg: 231 },
            Event::PartialBlock { tb: 1, from: 17 },
            Event::SegmentEnd,
        ];
        let mut enc = EventEncoder::new();
        let mut buf = Vec::new();
        let mut first = 0;
        for e in &events {
            if let Event::Block { tb } | Event::PartialBlock { tb, .. } = e {
                first = shapes[*tb as usize].first_insn;
            }
            enc.event(&mut buf, e, first);
        }
        let mut dec = EventDecoder::new();
        let mut c = Cursor::new(&buf);
        for e in &events {
            assert_eq!(dec.next(&mut c, &shape).unwrap(), *e);
        }
        assert!(c.is_empty());
    }
}
