//! Stream capture: while a stream captures, the work issued to it (kernel launches, copies, sets, host
//! functions, graph launches) is recorded as graph nodes instead of run, each after the stream's current
//! dependencies, which it then replaces.
//!
//! A capture sequence starts on its origin stream. An event recorded on a capturing stream holds the
//! stream's dependencies at that point; another stream waiting on it joins the sequence with those
//! dependencies (fork), and the origin stream waiting on an event recorded on the other stream takes its
//! work back (join). `cudaStreamEndCapture` on the origin ends the sequence for every stream in it, and
//! fails with `cudaErrorStreamCaptureUnjoined` when a joined stream's last work is not an ancestor of the
//! origin's. Calls that would synchronize with a capturing stream fail as CUDA's do and invalidate the
//! sequence: synchronizing or querying it (`cudaErrorStreamCaptureUnsupported`), work on the legacy stream
//! while a blocking stream captures (`cudaErrorStreamCaptureImplicit`), waiting on an event recorded
//! outside the sequence (`cudaErrorStreamCaptureIsolation`), a device-wide synchronization.

use std::collections::{HashMap, HashSet};
use std::thread::ThreadId;

use crate::graph::{CopyNode, NodeOp, State};
use crate::{Cuda, Error, Result};

/// `cudaStreamCaptureStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureStatus {
    None = 0,
    Active = 1,
    Invalidated = 2,
}

/// `cudaStreamCaptureMode`.
const MODE_GLOBAL: i32 = 0;
const MODE_RELAXED: i32 = 2;

thread_local! {
    /// The calling thread's capture interaction mode (`cudaThreadExchangeStreamCaptureMode`): global by
    /// default.
    static THREAD_MODE: std::cell::Cell<i32> = const { std::cell::Cell::new(MODE_GLOBAL) };
}

/// `cudaThreadExchangeStreamCaptureMode`: sets the calling thread's mode to `mode`, returns the one before.
pub fn exchange_thread_capture_mode(mode: i32) -> Result<i32> {
    if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
        return Err(Error::INVALID_VALUE);
    }
    Ok(THREAD_MODE.with(|m| m.replace(mode)))
}

struct Sequence {
    origin: u64,
    graph: u64,
    mode: i32,
    thread: ThreadId,
    invalidated: bool,
    /// The graph is the program's (`cudaStreamBeginCaptureToGraph`): a failed capture leaves it alone.
    programs_graph: bool,
}

/// A stream's part in a capture sequence: the sequence and the nodes its next work depends on.
struct Member {
    sequence: u64,
    deps: Vec<u64>,
}

#[derive(Default)]
pub(crate) struct Captures {
    sequences: HashMap<u64, Sequence>,
    /// Capturing streams, by their normalized handle.
    streams: HashMap<u64, Member>,
    /// Events last recorded on a capturing stream: the sequence and the dependencies they stand for.
    events: HashMap<u64, (u64, Vec<u64>)>,
    next: u64,
}

/// What `cudaStreamGetCaptureInfo` reports of an active or invalidated capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaptureInfo {
    pub status: CaptureStatus,
    pub id: u64,
    pub graph: u64,
    /// The current dependencies: an array of node handles valid until the next call on the stream.
    pub deps: u64,
    pub count: usize,
}

impl Cuda {
    /// `cudaStreamBeginCapture`: the legacy stream cannot capture (`cudaErrorInvalidValue`, as documented),
    /// nor a stream already capturing (`cudaErrorIllegalState`).
    pub fn begin_capture(&self, stream: u64, mode: i32) -> Result<()> {
        self.begin_capture_into(stream, mode, None)
    }

    /// `cudaStreamBeginCaptureToGraph`: the capture adds to the program's `graph`, its first work after
    /// `deps` (nodes of that graph).
    pub fn begin_capture_to_graph(&self, stream: u64, graph: u64, deps: &[u64], mode: i32) -> Result<()> {
        self.begin_capture_into(stream, mode, Some((graph, deps)))
    }

    fn begin_capture_into(&self, stream: u64, mode: i32, target: Option<(u64, &[u64])>) -> Result<()> {
        if !(0..=MODE_RELAXED).contains(&mode) {
            return Err(Error::INVALID_VALUE);
        }
        let key = self.stream_key(stream)?;
        if key == 0 {
            return Err(Error::INVALID_VALUE);
        }
        if self.stream_is_capturing(key)? {
            return Err(Error::ILLEGAL_STATE);
        }
        self.enter_stream(key)?;
        let mut s = self.graphs.lock();
        if s.captures.streams.contains_key(&key) {
            return Err(Error::ILLEGAL_STATE);
        }
        let (graph, deps) = match target {
            Some((graph, deps)) => {
                let nodes = s.graph_nodes_of(graph).ok_or(Error::INVALID_VALUE)?;
                if deps.iter().any(|d| !nodes.contains(d)) {
                    return Err(Error::INVALID_VALUE);
                }
                (graph, deps.to_vec())
            }
            None => (s.new_graph(), Vec::new()),
        };
        let c = &mut s.captures;
        c.next += 1;
        let id = c.next;
        let thread = std::thread::current().id();
        let programs_graph = target.is_some();
        c.sequences.insert(id, Sequence { origin: key, graph, mode, thread, invalidated: false, programs_graph });
        c.streams.insert(key, Member { sequence: id, deps });
        Ok(())
    }

    /// `cudaStreamUpdateCaptureDependencies`: the capturing stream's next work depends on `deps` (nodes of
    /// the capture's graph) as well as (`set` false) or instead of (`set` true) what it did.
    pub fn update_capture_dependencies(&self, stream: u64, deps: &[u64], set: bool) -> Result<()> {
        let key = self.stream_key(stream)?;
        let mut s = self.graphs.lock();
        let seq = s.captures.streams.get(&key).map(|m| m.sequence).ok_or(Error::ILLEGAL_STATE)?;
        let graph = s.captures.sequences[&seq].graph;
        let nodes = s.graph_nodes_of(graph).ok_or(Error::ILLEGAL_STATE)?;
        if deps.iter().any(|d| !nodes.contains(d)) {
            return Err(Error::INVALID_VALUE);
        }
        let m = s.captures.streams.get_mut(&key).ok_or(Error::ILLEGAL_STATE)?;
        if set {
            m.deps.clear();
        }
        for d in deps {
            if !m.deps.contains(d) {
                m.deps.push(*d);
            }
        }
        Ok(())
    }

    /// `cudaStreamEndCapture`: the captured graph. Every stream of the sequence stops capturing, also when
    /// the capture failed (then the graph is destroyed).
    pub fn end_capture(&self, stream: u64) -> Result<u64> {
        let key = self.stream_key(stream)?;
        self.with_graphs(|s| s.end_capture(key))
    }
}

impl State {
    fn end_capture(&mut self, key: u64) -> Result<u64> {
        let s = self;
        let c = &mut s.captures;
        let id = c.streams.get(&key).ok_or(Error::ILLEGAL_STATE)?.sequence;
        let seq = &c.sequences[&id];
        if seq.origin != key {
            return Err(Error::STREAM_CAPTURE_UNMATCHED);
        }
        if seq.mode != MODE_RELAXED && seq.thread != std::thread::current().id() {
            return Err(Error::STREAM_CAPTURE_WRONG_THREAD);
        }
        let seq = c.sequences.remove(&id).ok_or(Error::ILLEGAL_STATE)?;
        let members: Vec<(u64, Vec<u64>)> =
            c.streams.iter().filter(|(_, m)| m.sequence == id).map(|(stream, m)| (*stream, m.deps.clone())).collect();
        for (stream, _) in &members {
            c.streams.remove(stream);
        }
        c.events.retain(|_, (sequence, _)| *sequence != id);
        let origin_deps = members.iter().find(|(st, _)| *st == key).map(|(_, d)| d.clone()).unwrap_or_default();
        let ancestors = s.ancestors(&origin_deps);
        let unjoined = members.iter().any(|(_, deps)| deps.iter().any(|d| !ancestors.contains(d)));
        if seq.invalidated || unjoined {
            if !seq.programs_graph {
                let _ = s.destroy_graph(seq.graph);
            }
            return Err(if seq.invalidated {
                Error::STREAM_CAPTURE_INVALIDATED
            } else {
                Error::STREAM_CAPTURE_UNJOINED
            });
        }
        Ok(seq.graph)
    }
}

impl Cuda {
    /// `cudaStreamGetCaptureInfo` (and `cudaStreamIsCapturing`, which reads only the status). Asking about
    /// the legacy stream while a blocking stream captures is `cudaErrorStreamCaptureImplicit`.
    pub fn capture_info(&self, stream: u64) -> Result<CaptureInfo> {
        let key = self.stream_key(stream)?;
        if key == 0 && self.blocking_capture() {
            return Err(Error::STREAM_CAPTURE_IMPLICIT);
        }
        let s = self.graphs.lock();
        let c = &s.captures;
        let Some(m) = c.streams.get(&key) else {
            return Ok(CaptureInfo { status: CaptureStatus::None, id: 0, graph: 0, deps: 0, count: 0 });
        };
        let seq = &c.sequences[&m.sequence];
        let status = if seq.invalidated { CaptureStatus::Invalidated } else { CaptureStatus::Active };
        let deps = if m.deps.is_empty() { 0 } else { m.deps.as_ptr() as u64 };
        Ok(CaptureInfo { status, id: m.sequence, graph: seq.graph, deps, count: m.deps.len() })
    }

    /// Whether `stream` is in a capture sequence (active or invalidated).
    pub(crate) fn stream_is_capturing(&self, stream: u64) -> Result<bool> {
        let key = self.stream_key(stream)?;
        Ok(self.graphs.lock().captures.streams.contains_key(&key))
    }

    /// Whether a blocking stream (one the legacy stream synchronizes with) is capturing.
    fn blocking_capture(&self) -> bool {
        let capturing: Vec<u64> = self.graphs.lock().captures.streams.keys().copied().collect();
        capturing.into_iter().any(|s| self.stream_flags_priority(s).is_ok_and(|(flags, _)| flags & 0x1 == 0))
    }

    /// Marks the sequences of the given streams invalidated (their work is no longer recorded).
    fn invalidate(&self, streams: &[u64]) {
        let mut s = self.graphs.lock();
        let c = &mut s.captures;
        let ids: Vec<u64> = streams.iter().filter_map(|st| c.streams.get(st).map(|m| m.sequence)).collect();
        for id in ids {
            if let Some(seq) = c.sequences.get_mut(&id) {
                seq.invalidated = true;
            }
        }
    }

    /// Before work that synchronizes with `key` (a normalized stream handle): fails, invalidating the
    /// capture, when that would synchronize with a capturing stream.
    pub(crate) fn check_capture_sync(&self, key: u64) -> Result<()> {
        if self.graphs.lock().captures.streams.is_empty() {
            return Ok(());
        }
        if self.stream_is_capturing(key)? {
            self.invalidate(&[key]);
            return Err(Error::STREAM_CAPTURE_UNSUPPORTED);
        }
        if key == 0 {
            self.check_legacy_capture()?;
        }
        Ok(())
    }

    /// Before a "potentially unsafe" call (waiting for or querying a stream or an event, `cudaMalloc`: calls
    /// that may synchronize), by the rules of `cudaThreadExchangeStreamCaptureMode`: unless the calling thread's
    /// mode is relaxed, its own captures that were not begun relaxed forbid the call, and in the (default)
    /// global mode so do other threads' captures begun in global mode. The call fails with
    /// `cudaErrorStreamCaptureUnsupported` and those captures are invalidated (as CUDA 13 does on an H100 for
    /// the thread's own captures).
    pub(crate) fn check_unsafe_call(&self) -> Result<()> {
        let mut s = self.graphs.lock();
        let c = &mut s.captures;
        if c.sequences.is_empty() {
            return Ok(());
        }
        let mode = THREAD_MODE.with(|m| m.get());
        if mode == MODE_RELAXED {
            return Ok(());
        }
        let me = std::thread::current().id();
        let mut prohibited = false;
        for seq in c.sequences.values_mut() {
            let own = seq.thread == me && seq.mode != MODE_RELAXED;
            let other = seq.thread != me && seq.mode == MODE_GLOBAL && mode == MODE_GLOBAL;
            if own || other {
                seq.invalidated = true;
                prohibited = true;
            }
        }
        if prohibited {
            Err(Error::STREAM_CAPTURE_UNSUPPORTED)
        } else {
            Ok(())
        }
    }

    /// Work on the legacy stream (a blocking copy or set, or the null stream's own work) while a blocking
    /// stream captures: `cudaErrorStreamCaptureImplicit`, and those captures are invalidated.
    pub(crate) fn check_legacy_capture(&self) -> Result<()> {
        if self.graphs.lock().captures.streams.is_empty() {
            return Ok(());
        }
        let capturing: Vec<u64> = self.graphs.lock().captures.streams.keys().copied().collect();
        let blocking: Vec<u64> = capturing
            .into_iter()
            .filter(|&s| self.stream_flags_priority(s).is_ok_and(|(flags, _)| flags & 0x1 == 0))
            .collect();
        if blocking.is_empty() {
            return Ok(());
        }
        self.invalidate(&blocking);
        Err(Error::STREAM_CAPTURE_IMPLICIT)
    }

    /// `cudaDeviceSynchronize` while any stream captures: `cudaErrorStreamCaptureUnsupported`, and every
    /// capture is invalidated (it would wait for a capturing stream).
    pub(crate) fn check_device_sync_capture(&self) -> Result<()> {
        let capturing: Vec<u64> = self.graphs.lock().captures.streams.keys().copied().collect();
        if capturing.is_empty() {
            return Ok(());
        }
        self.invalidate(&capturing);
        Err(Error::STREAM_CAPTURE_UNSUPPORTED)
    }

    /// Records `op` on `stream` if it captures: `Ok(true)` when recorded, `Ok(false)` when the stream is
    /// not capturing (the caller runs the work), `cudaErrorStreamCaptureInvalidated` after an invalidation.
    pub(crate) fn capture(&self, stream: u64, op: impl FnOnce() -> Result<NodeOp>) -> Result<bool> {
        let key = self.stream_key(stream)?;
        let (graph, deps) = {
            let s = self.graphs.lock();
            let c = &s.captures;
            let Some(m) = c.streams.get(&key) else { return Ok(false) };
            let seq = &c.sequences[&m.sequence];
            if seq.invalidated {
                return Err(Error::STREAM_CAPTURE_INVALIDATED);
            }
            (seq.graph, m.deps.clone())
        };
        // Built outside the lock: a kernel node resolves (and may load) the kernel.
        let op = op()?;
        let mut s = self.graphs.lock();
        let node = s.add_node(graph, op, &deps)?;
        if let Some(m) = s.captures.streams.get_mut(&key) {
            m.deps = vec![node];
        }
        Ok(true)
    }

    /// An executable graph launched on a capturing stream: its steps recorded one after another.
    pub(crate) fn capture_steps(&self, stream: u64, steps: Vec<NodeOp>) -> Result<()> {
        for op in steps {
            self.capture(stream, || Ok(op))?;
        }
        Ok(())
    }

    /// A 1-D copy on `stream` recorded if it captures.
    pub(crate) fn capture_copy(&self, stream: u64, copy: CopyNode) -> Result<bool> {
        self.capture(stream, || Ok(NodeOp::Memcpy(copy)))
    }

    /// `cudaEventRecord` on a capturing stream: the event stands for the stream's current dependencies
    /// (`Ok(true)`); on any other stream it leaves its capture (`Ok(false)`, recorded as usual).
    pub(crate) fn capture_event_record(&self, event: u64, stream: u64) -> Result<bool> {
        let key = self.stream_key(stream)?;
        let mut s = self.graphs.lock();
        let c = &mut s.captures;
        let Some(m) = c.streams.get(&key) else {
            c.events.remove(&event);
            return Ok(false);
        };
        if c.sequences[&m.sequence].invalidated {
            return Err(Error::STREAM_CAPTURE_INVALIDATED);
        }
        let entry = (m.sequence, m.deps.clone());
        c.events.insert(event, entry);
        Ok(true)
    }

    /// `cudaStreamWaitEvent`: an event recorded in a capture makes `stream` join that capture (or, if it
    /// already belongs to it, adds the event's dependencies); a capturing stream waiting on an event from
    /// outside its capture is `cudaErrorStreamCaptureIsolation` (a never-recorded event stands for no work
    /// and is no dependency).
    pub(crate) fn capture_wait_event(&self, stream: u64, event: u64, recorded: bool) -> Result<()> {
        let key = self.stream_key(stream)?;
        let mut s = self.graphs.lock();
        let c = &mut s.captures;
        let joined = c.streams.get(&key).map(|m| m.sequence);
        match (c.events.get(&event).cloned(), joined) {
            (None, None) => Ok(()),
            (None, Some(_)) if !recorded => Ok(()),
            (None, Some(id)) => {
                if let Some(seq) = c.sequences.get_mut(&id) {
                    seq.invalidated = true;
                }
                Err(Error::STREAM_CAPTURE_ISOLATION)
            }
            (Some((id, deps)), None) => {
                if key == 0 {
                    return Err(Error::STREAM_CAPTURE_IMPLICIT);
                }
                c.streams.insert(key, Member { sequence: id, deps });
                Ok(())
            }
            (Some((id, deps)), Some(mine)) if id == mine => {
                if let Some(m) = c.streams.get_mut(&key) {
                    for d in deps {
                        if !m.deps.contains(&d) {
                            m.deps.push(d);
                        }
                    }
                }
                Ok(())
            }
            (Some(_), Some(_)) => Err(Error::STREAM_CAPTURE_MERGE),
        }
    }

    /// An event last recorded in a capture cannot be waited for or queried from the host.
    pub(crate) fn check_captured_event(&self, event: u64) -> Result<()> {
        if self.graphs.lock().captures.events.contains_key(&event) {
            return Err(Error::CAPTURED_EVENT);
        }
        Ok(())
    }
}

impl crate::graph::State {
    /// `deps` and every node they depend on, transitively.
    fn ancestors(&self, deps: &[u64]) -> HashSet<u64> {
        let mut seen = HashSet::new();
        let mut todo: Vec<u64> = deps.to_vec();
        while let Some(n) = todo.pop() {
            if seen.insert(n) {
                todo.extend(self.node_deps(n));
            }
        }
        seen
    }
}
