//! Writing and reading traces; truncation at every byte and corruption never panic and yield valid prefixes.

use std::path::Path;

use trace::{
    Access, Block, EndRecord, Event, Flow, Header, Insn, LockKind, MemOperand, MetaRecord, Module, ModuleKind, SimtEnd,
    SimtStart, SkipKind, Status, Symbol, SymbolKind, ThreadInfo, Trace, TraceWriter,
};

fn insn(addr: u64, len: u8, flow: Flow, mem: bool) -> Insn {
    Insn {
        addr,
        bytes: vec![0x90; len as usize],
        flow,
        atomic: false,
        mnemonic: "nop".into(),
        mem: if mem { vec![MemOperand { size: 8, access: Access::Read }] } else { vec![] },
    }
}

/// A small trace: two OS threads, one SIMT thread each, a loop block with memory accesses, a call, a lock.
fn build(chunk_bytes: usize, complete: bool) -> Vec<u8> {
    let header = Header {
        tracer: "test".into(),
        program: "/bin/prog".into(),
        args: vec!["1".into()],
        created_unix: 1,
        ..Header::default()
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap().with_chunk_bytes(chunk_bytes);
    w.meta(&MetaRecord::Module(Module {
        id: 0,
        path: "/bin/prog".into(),
        start: 0x1000,
        end: 0x3000,
        bias: 0,
        kind: ModuleKind::Main,
    }));
    for (id, (name, addr)) in [("main", 0x1000u64), ("f", 0x1100)].iter().enumerate() {
        w.meta(&MetaRecord::Symbol(Symbol {
            id: id as u32,
            module: 0,
            addr: *addr,
            size: 0x100,
            kind: SymbolKind::Function,
            name: name.to_string(),
            mangled: String::new(),
        }));
    }
    // Block 0: main's loop (3 insns, the second loads); block 1: f (2 insns, ends in ret).
    w.meta(&MetaRecord::Block(Block {
        id: 0,
        addr: 0x1000,
        first_insn: 0,
        insns: vec![
            insn(0x1000, 2, Flow::Next, false),
            insn(0x1002, 3, Flow::Next, true),
            insn(0x1005, 2, Flow::CondBranch, false),
        ],
    }));
    w.meta(&MetaRecord::Block(Block {
        id: 1,
        addr: 0x1100,
        first_insn: 3,
        insns: vec![insn(0x1100, 4, Flow::Next, true), insn(0x1104, 1, Flow::Return, false)],
    }));
    for os in 0..2u32 {
        w.meta(&MetaRecord::Thread(ThreadInfo { os, tid: 100 + os, rank: os }));
        let (seq, offset) = w.position(os);
        w.meta(&MetaRecord::SimtStart(SimtStart {
            simt: os,
            os,
            index_in_os: 0,
            function: u32::MAX,
            iteration: u64::MAX,
            chunk_seq: seq,
            offset,
        }));
        w.event(os, &Event::SegmentStart { simt: os }).unwrap();
        let mut insns = 0;
        for i in 0..200u64 {
            w.event(os, &Event::Block { tb: 0 }).unwrap();
            w.event(
                os,
                &Event::Mem { insn: 1, store: false, size_log2: 3, addr: 0x7000 + 8 * i + 0x100 * u64::from(os) },
            )
            .unwrap();
            insns += 3;
            if i % 50 == 0 {
                w.event(os, &Event::Call { callee: 1 }).unwrap();
                w.event(os, &Event::Block { tb: 1 }).unwrap();
                w.event(os, &Event::Mem { insn: 0, store: true, size_log2: 2, addr: 0x9000 }).unwrap();
                w.event(os, &Event::Lock { kind: LockKind::Mutex, release: false, addr: 0x9000 }).unwrap();
                w.event(os, &Event::Return { frames: 1 }).unwrap();
                w.event(os, &Event::Skip { kind: SkipKind::Syscall, insns: 0, arg: 1 }).unwrap();
                insns += 2;
            }
        }
        w.event(os, &Event::SegmentEnd).unwrap();
        w.meta(&MetaRecord::SimtEnd(SimtEnd { simt: os, insns }));
        w.add_insns(insns);
    }
    let mut v = w.finish(EndRecord { reason: "exit".into(), exit_code: Some(0), recovered: false, insns: 0 }).unwrap();
    if !complete {
        // Drop the end chunk (the last one), like a killed tracer.
        let (_, mut pos) = Header::decode(&v).unwrap();
        let mut last = pos;
        while pos < v.len() {
            let h = trace::ChunkHeader::parse(&v[pos..]).unwrap();
            last = pos;
            pos += trace::CHUNK_HEADER_LEN + h.stored_len as usize;
        }
        v.truncate(last);
    }
    v
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Turns [`trace::Visitor`] calls back into events.
#[derive(Default)]
struct Record(Vec<Event>);

impl trace::Visitor for Record {
    fn block(&mut self, tb: u32, from: u16, _first_insn: u32) {
        self.0.push(if from == 0 { Event::Block { tb } } else { Event::PartialBlock { tb, from } });
    }
    fn mem(&mut self, insn: u16, store: bool, size_log2: u8, addr: u64) {
        self.0.push(Event::Mem { insn, store, size_log2, addr });
    }
    fn event(&mut self, e: Event) {
        self.0.push(e);
    }
}

/// A stream's events through [`trace::EventStream::drive`] with `budget` events per call, and its error.
fn drive_all(mut s: trace::EventStream<'_>, budget: usize) -> (Vec<Event>, Option<String>) {
    let mut r = Record::default();
    loop {
        match s.drive(&mut r, budget) {
            Ok(true) => {}
            Ok(false) => return (r.0, None),
            Err(e) => return (r.0, Some(e.0)),
        }
    }
}

/// The same through the iterator.
fn iterate_all(s: trace::EventStream<'_>) -> (Vec<Event>, Option<String>) {
    let mut v = Vec::new();
    for e in s {
        match e {
            Ok(e) => v.push(e),
            Err(e) => return (v, Some(e.0)),
        }
    }
    (v, None)
}

/// Bulk decoding gives the iterator's events and errors, at any budget.
fn check_drive(t: &Trace) {
    let os: Vec<u32> = t.os_streams().collect();
    for &o in &os {
        let want = iterate_all(t.os_events(o));
        for budget in [1, 3, 1000] {
            assert_eq!(drive_all(t.os_events(o), budget), want, "thread {o}, budget {budget}");
        }
    }
    for s in 0..t.simt.len() as u32 {
        if let (Ok(a), Ok(b)) = (t.simt_events(s), t.simt_events(s)) {
            assert_eq!(drive_all(a, 7), iterate_all(b), "SIMT thread {s}");
        }
    }
}

/// Reads every event of every thread; returns the number of events and whether any stream error occurred.
fn read_all(t: &Trace) -> (usize, bool) {
    check_drive(t);
    let mut n = 0;
    let mut err = false;
    let streams: Vec<u32> = t.os_streams().collect();
    for os in streams {
        for e in t.os_events(os) {
            match e {
                Ok(_) => n += 1,
                Err(_) => {
                    err = true;
                    break;
                }
            }
        }
    }
    for s in 0..t.simt.len() as u32 {
        if let Ok(it) = t.simt_events(s) {
            for e in it {
                if e.is_err() {
                    err = true;
                    break;
                }
            }
        }
    }
    let _ = trace::summarize(t, 10);
    (n, err)
}

#[test]
fn round_trip_and_simt_index() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(200, true);
    let p = write(dir.path(), "t.trace", &bytes);
    let t = Trace::open(&p).unwrap();
    assert_eq!(t.status, Status::Complete);
    assert_eq!(t.header.program, "/bin/prog");
    assert_eq!(t.blocks.len(), 2);
    assert_eq!(t.blocks[1].first_insn, 3);
    assert_eq!(t.threads.len(), 2);
    assert!(t.chunk_count(0) > 2, "small chunks make several per stream");
    assert_eq!(t.end.as_ref().unwrap().insns, 2 * (600 + 8));
    for simt in 0..2u32 {
        let events: Vec<Event> = t.simt_events(simt).unwrap().map(|e| e.unwrap()).collect();
        assert_eq!(events.first(), Some(&Event::SegmentStart { simt }));
        assert_eq!(events.last(), Some(&Event::SegmentEnd));
        let addrs: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Event::Mem { insn: 1, addr, .. } => Some(*addr),
                _ => None,
            })
            .collect();
        assert_eq!(addrs.len(), 200);
        assert!(addrs.iter().enumerate().all(|(i, &a)| a == 0x7000 + 8 * i as u64 + 0x100 * u64::from(simt)));
    }
    let s = trace::summarize(&t, 5);
    assert_eq!(s.insns, 2 * (600 + 8));
    assert_eq!(s.locks.len(), 1);
    assert_eq!(s.locks[0].acquires, 8);
    assert_eq!(s.functions[0].name, "main");
    assert_eq!(s.functions[0].insns, 1200);
    assert_eq!(s.simt_threads, 2);
    assert_eq!(t.simt_order(), vec![0, 1]);
}

#[test]
fn truncation_at_every_byte_is_a_valid_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(400, true);
    let full = Trace::open(write(dir.path(), "full.trace", &bytes)).unwrap();
    let (all_events, _) = read_all(&full);
    let mut last_events = 0;
    let mut saw_prefix = false;
    for cut in 0..bytes.len() {
        let p = write(dir.path(), "cut.trace", &bytes[..cut]);
        match Trace::open(&p) {
            Err(e) => {
                // Only a cut inside the header is fatal, with a clear message.
                assert!(cut < 200, "cut at {cut}: {e}");
                assert!(e.0.contains("trace") || e.0.contains("magic"), "{e}");
            }
            Ok(t) => {
                assert!(!t.status.is_complete(), "cut at {cut} claims to be complete");
                let (n, err) = read_all(&t);
                assert!(!err, "cut at {cut}: a valid prefix decodes without errors");
                assert!(n <= all_events);
                assert!(n >= last_events || t.valid_len < cut as u64, "events never decrease as the cut moves on");
                last_events = last_events.max(n);
                saw_prefix = true;
            }
        }
    }
    assert!(saw_prefix);
}

#[test]
fn byte_flips_give_errors_or_prefixes_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(400, true);
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 1 << rng.u8(0..8);
        let p = write(dir.path(), "flip.trace", &b);
        if let Ok(t) = Trace::open(&p) {
            // Every chunk is checksummed: a flip is either detected or lies in a chunk never read.
            let _ = read_all(&t);
            if t.status.is_complete() {
                panic!("flip at byte {i} went unnoticed");
            }
        }
    }
}

#[test]
fn random_garbage_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(400, true);
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..300 {
        let mut b = bytes.clone();
        let at = rng.usize(0..b.len());
        let n = rng.usize(1..64).min(b.len() - at);
        for x in &mut b[at..at + n] {
            *x = rng.u8(..);
        }
        let p = write(dir.path(), "garbage.trace", &b);
        if let Ok(t) = Trace::open(&p) {
            let _ = read_all(&t);
        }
    }
}

#[test]
fn missing_end_record_is_reported_as_killed() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = build(400, false);
    let t = Trace::open(write(dir.path(), "noend.trace", &bytes)).unwrap();
    match &t.status {
        Status::Truncated { reason, .. } => assert!(reason.contains("killed"), "{reason}"),
        Status::Complete => panic!("no end record, yet complete"),
    }
    let (n, err) = read_all(&t);
    assert!(n > 0 && !err);
}

#[test]
fn not_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "x.trace", b"hello world, this is not a trace at all");
    let e = Trace::open(&p).unwrap_err();
    assert!(e.0.contains("not a lockstep trace"), "{e}");
    let p = write(dir.path(), "empty.trace", b"");
    let e = Trace::open(&p).unwrap_err();
    assert!(e.0.contains("too short"), "{e}");
}
