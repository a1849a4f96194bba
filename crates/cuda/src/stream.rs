//! Streams, events and host functions.
//!
//! Work is synchronous (see the crate docs), so a stream is a handle with flags and a priority, and the
//! host functions queued on it: they run in order on one runtime thread, as CUDA runs them off the calling
//! thread, and any later work on their stream (or on the legacy default stream, or a device-wide
//! synchronization) waits until they have run. An event is the time of its last record.

use std::collections::HashMap;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use crate::{Cuda, Error, Result};

/// `cudaStreamLegacy`, and the null stream.
pub const LEGACY_STREAM: u64 = 0x1;
/// `cudaStreamPerThread`.
pub const PER_THREAD_STREAM: u64 = 0x2;

/// Created streams and events live in windows no pointer uses: above the 57-bit user address space, and
/// below 2^63, because programs hold handles in signed integers too (cuda.core gives a stream's handle to
/// Numba as an `intptr_t`, which cuda-bindings refuses to convert back when it is negative).
const STREAM_WINDOW: u64 = 0x7900_0000_0000_0000;
const EVENT_WINDOW: u64 = 0x7800_0000_0000_0000;

/// `cudaHostFn_t`: `void (*)(void *userData)`.
pub type HostFn = unsafe extern "C" fn(*mut libc::c_void);
/// `cudaStreamCallback_t`: `void (*)(cudaStream_t, cudaError_t, void *userData)`.
pub type StreamCallback = unsafe extern "C" fn(*mut libc::c_void, i32, *mut libc::c_void);

/// `cudaEventCreateWithFlags`'s flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventFlags(pub u32);

impl EventFlags {
    pub const BLOCKING_SYNC: u32 = 0x1;
    pub const DISABLE_TIMING: u32 = 0x2;
    pub const INTERPROCESS: u32 = 0x4;
}

#[derive(Default)]
pub(crate) struct Streams {
    table: Mutex<Table>,
    /// Host functions queued and not yet run, per stream (the null stream's under 0).
    pending: Arc<(Mutex<HashMap<u64, u32>>, Condvar)>,
    executor: OnceLock<Mutex<Sender<Job>>>,
}

#[derive(Default)]
struct Table {
    streams: HashMap<u64, Stream>,
    /// Stream attributes set (`cudaStreamSetAttribute`), by stream and attribute id: the value union's bytes.
    attributes: HashMap<u64, HashMap<i32, StreamAttrValue>>,
    events: HashMap<u64, Event>,
    next_stream: u64,
    next_event: u64,
}

/// Size of `cudaStreamAttrValue` (`cudaLaunchAttributeValue`), a union.
pub const STREAM_ATTR_BYTES: usize = 64;
/// A stream attribute's value, as its union's bytes.
pub type StreamAttrValue = [u8; STREAM_ATTR_BYTES];

/// `cudaLaunchAttributeID`s a stream takes: the access policy window, the synchronization policy, the
/// priority, the memory synchronization domain map and domain.
pub(crate) const ATTR_ACCESS_POLICY_WINDOW: i32 = 1;
const ATTR_PRIORITY: i32 = 8;
const STREAM_ATTRS: [i32; 5] = [ATTR_ACCESS_POLICY_WINDOW, 3, ATTR_PRIORITY, 9, 10];

/// An access policy window must fit `cudaDevAttrMaxAccessPolicyWindowSize`, which is 0 (no persisting L2):
/// only an empty one does (`num_bytes`, after the base pointer, is 0). Streams and kernel nodes check it.
pub(crate) fn check_access_policy_window(attr: i32, value: &StreamAttrValue) -> Result<()> {
    let num_bytes = u64::from_le_bytes(value[8..16].try_into().unwrap_or_default());
    if attr == ATTR_ACCESS_POLICY_WINDOW && num_bytes > 0 {
        return Err(Error::INVALID_VALUE);
    }
    Ok(())
}

fn check_stream_attr(attr: i32) -> Result<()> {
    if STREAM_ATTRS.contains(&attr) {
        Ok(())
    } else {
        Err(Error::INVALID_VALUE)
    }
}

#[derive(Clone, Copy, Debug)]
struct Stream {
    flags: u32,
    priority: i32,
}

#[derive(Clone, Copy, Debug)]
struct Event {
    flags: u32,
    recorded: Option<Instant>,
}

/// A host function to run, and the stream it belongs to.
struct Job {
    stream: u64,
    run: Box<dyn FnOnce() + Send>,
}

thread_local! {
    static ON_EXECUTOR: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A raw pointer a host function receives back (the program's `userData`).
struct UserData(*mut libc::c_void);
// SAFETY: the program hands the pointer to CUDA to be passed to its function on another thread, as CUDA
// does; what it points at is the program's business.
unsafe impl Send for UserData {}

impl Streams {
    /// Waits until the host functions queued on `stream` have run (and, for the legacy stream, those of
    /// every blocking stream). Host functions themselves never wait (they may not call CUDA).
    fn wait(&self, stream: u64, blocking_with_legacy: bool) {
        if ON_EXECUTOR.with(|e| e.get()) {
            return;
        }
        let (lock, cv) = &*self.pending;
        let mut pending = lock.lock().unwrap_or_else(|e| e.into_inner());
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let waits_for = |s: u64| {
            s == stream
                || (blocking_with_legacy && (s == 0 || table.streams.get(&s).is_some_and(|st| st.flags & 0x1 == 0)))
        };
        let keys: Vec<u64> = pending.keys().copied().filter(|&s| waits_for(s)).collect();
        drop(table);
        while keys.iter().any(|k| pending.get(k).copied().unwrap_or(0) > 0) {
            pending = cv.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits for every queued host function.
    pub(crate) fn wait_all(&self) {
        if ON_EXECUTOR.with(|e| e.get()) {
            return;
        }
        let (lock, cv) = &*self.pending;
        let mut pending = lock.lock().unwrap_or_else(|e| e.into_inner());
        while pending.values().any(|&n| n > 0) {
            pending = cv.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn enqueue(&self, stream: u64, run: Box<dyn FnOnce() + Send>) {
        {
            let (lock, _) = &*self.pending;
            *lock.lock().unwrap_or_else(|e| e.into_inner()).entry(stream).or_default() += 1;
        }
        let sender = self.executor.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let pending = self.pending.clone();
            let spawned = std::thread::Builder::new().name("lockstep-host-fn".into()).spawn(move || {
                ON_EXECUTOR.with(|e| e.set(true));
                for job in rx {
                    // A panic in the program's function is its own; the stream must still move on.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job.run));
                    let (lock, cv) = &*pending;
                    if let Some(n) = lock.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&job.stream) {
                        *n = n.saturating_sub(1);
                    }
                    cv.notify_all();
                }
            });
            if spawned.is_err() {
                eprintln!("lockstep: error: cannot start the host-function thread; host functions run inline");
            }
            Mutex::new(tx)
        });
        let job = Job { stream, run };
        if let Err(mpsc::SendError(job)) = sender.lock().unwrap_or_else(|e| e.into_inner()).send(job) {
            // No executor thread: run here.
            (job.run)();
            let (lock, cv) = &*self.pending;
            if let Some(n) = lock.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&job.stream) {
                *n = n.saturating_sub(1);
            }
            cv.notify_all();
        }
    }
}

impl Cuda {
    /// Normalizes a stream handle (the null stream and `cudaStreamLegacy` are one) and checks it exists.
    pub(crate) fn stream_key(&self, stream: u64) -> Result<u64> {
        match stream {
            0 | LEGACY_STREAM => Ok(0),
            PER_THREAD_STREAM => Ok(PER_THREAD_STREAM),
            s if self.streams.table.lock().unwrap_or_else(|e| e.into_inner()).streams.contains_key(&s) => Ok(s),
            _ => Err(Error::INVALID_RESOURCE_HANDLE),
        }
    }

    /// Before work on `stream`: waits for its host functions (and, on the legacy stream, those of the
    /// blocking streams); errors for an unknown stream.
    pub fn enter_stream(&self, stream: u64) -> Result<()> {
        let key = self.stream_key(stream)?;
        self.check_capture_sync(key)?;
        let non_blocking = self
            .streams
            .table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .streams
            .get(&key)
            .is_some_and(|s| s.flags & 0x1 != 0);
        self.streams.wait(key, key == 0 || !non_blocking);
        Ok(())
    }

    /// `cudaStreamCreateWithPriority` (and the simpler forms): flags 0 or `cudaStreamNonBlocking`.
    pub fn stream_create(&self, flags: u32, priority: i32) -> Result<u64> {
        if flags & !0x1 != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let (least, greatest) = Cuda::stream_priority_range();
        let priority = priority.clamp(greatest, least);
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        t.next_stream += 1;
        let handle = STREAM_WINDOW + t.next_stream * 16;
        t.streams.insert(handle, Stream { flags, priority });
        Ok(handle)
    }

    /// `cudaDeviceGetStreamPriorityRange`: (least, greatest); lower numbers are higher priorities.
    pub fn stream_priority_range() -> (i32, i32) {
        (0, -5)
    }

    /// `cudaStreamDestroy`: waits for its host functions, then forgets it.
    pub fn stream_destroy(&self, stream: u64) -> Result<()> {
        if matches!(stream, 0 | LEGACY_STREAM | PER_THREAD_STREAM) {
            return Err(Error::INVALID_RESOURCE_HANDLE);
        }
        self.enter_stream(stream)?;
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        t.attributes.remove(&stream);
        t.streams.remove(&stream).map(|_| ()).ok_or(Error::INVALID_RESOURCE_HANDLE)
    }

    /// `cudaStreamSynchronize`.
    pub fn stream_synchronize(&self, stream: u64) -> Result<()> {
        self.check_unsafe_call()?;
        self.enter_stream(stream)?;
        self.lock().flush_printf();
        self.synchronize_faults()
    }

    /// `cudaStreamQuery`: `cudaErrorNotReady` while host functions are queued on it.
    pub fn stream_query(&self, stream: u64) -> Result<()> {
        let key = self.stream_key(stream)?;
        self.check_unsafe_call()?;
        self.check_capture_sync(key)?;
        let (lock, _) = &*self.streams.pending;
        if lock.lock().unwrap_or_else(|e| e.into_inner()).get(&key).copied().unwrap_or(0) > 0 {
            return Err(Error::NOT_READY);
        }
        self.synchronize_faults()
    }

    /// `cudaStreamGetFlags` and `cudaStreamGetPriority`.
    pub fn stream_flags_priority(&self, stream: u64) -> Result<(u32, i32)> {
        let key = self.stream_key(stream)?;
        let t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        Ok(t.streams.get(&key).map_or((0, 0), |s| (s.flags, s.priority)))
    }

    /// `cudaStreamGetAttribute`: the value set, or the default (zeros; the stream's priority for
    /// `cudaLaunchAttributePriority`).
    pub fn stream_attribute(&self, stream: u64, attr: i32) -> Result<StreamAttrValue> {
        check_stream_attr(attr)?;
        let key = self.stream_key(stream)?;
        let t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = t.attributes.get(&key).and_then(|a| a.get(&attr)) {
            return Ok(*v);
        }
        let mut v = [0u8; STREAM_ATTR_BYTES];
        if attr == ATTR_PRIORITY {
            let priority = t.streams.get(&key).map_or(0, |s| s.priority);
            v[..4].copy_from_slice(&priority.to_le_bytes());
        }
        Ok(v)
    }

    /// `cudaStreamSetAttribute`: kept and read back; they change nothing in how lockstep runs the stream. An
    /// access policy window must fit `cudaDevAttrMaxAccessPolicyWindowSize`, which is 0 (no persisting L2):
    /// only an empty window is accepted.
    pub fn set_stream_attribute(&self, stream: u64, attr: i32, value: StreamAttrValue) -> Result<()> {
        check_stream_attr(attr)?;
        let key = self.stream_key(stream)?;
        check_access_policy_window(attr, &value)?;
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        if attr == ATTR_PRIORITY {
            let (least, greatest) = Cuda::stream_priority_range();
            let priority = i32::from_le_bytes(value[..4].try_into().unwrap_or_default()).clamp(greatest, least);
            if let Some(s) = t.streams.get_mut(&key) {
                s.priority = priority;
            }
        }
        t.attributes.entry(key).or_default().insert(attr, value);
        Ok(())
    }

    /// `cudaStreamCopyAttributes`: `dst` gets `src`'s attributes.
    pub fn stream_copy_attributes(&self, dst: u64, src: u64) -> Result<()> {
        let (dst, src) = (self.stream_key(dst)?, self.stream_key(src)?);
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        let attrs = t.attributes.get(&src).cloned().unwrap_or_default();
        if let (Some(p), true) = (t.streams.get(&src).map(|s| s.priority), t.streams.contains_key(&dst)) {
            if let Some(d) = t.streams.get_mut(&dst) {
                d.priority = p;
            }
        }
        t.attributes.insert(dst, attrs);
        Ok(())
    }

    /// `cudaStreamWaitEvent`: work is done when enqueued, so the event has happened (or was never
    /// recorded, which CUDA treats as done).
    pub fn stream_wait_event(&self, stream: u64, event: u64) -> Result<()> {
        self.stream_key(stream)?;
        let recorded = self.event_get(event)?.recorded.is_some();
        self.capture_wait_event(stream, event, recorded)
    }

    /// `cudaLaunchHostFunc`: runs `f(user_data)` on the runtime's host-function thread after the work
    /// already on `stream`; later work on the stream waits for it.
    pub fn launch_host_fn(&self, stream: u64, f: HostFn, user_data: *mut libc::c_void) -> Result<()> {
        let key = self.stream_key(stream)?;
        if self.capture(key, || Ok(crate::graph::NodeOp::Host { f, data: user_data as u64 }))? {
            return Ok(());
        }
        self.check_sticky()?;
        let data = UserData(user_data);
        self.streams.enqueue(
            key,
            Box::new(move || {
                let data = data;
                // SAFETY: the program's function with the program's argument, as CUDA calls it.
                unsafe { f(data.0) }
            }),
        );
        Ok(())
    }

    /// `cudaStreamAddCallback`: like [`Cuda::launch_host_fn`], with the stream and its status passed.
    pub fn stream_add_callback(&self, stream: u64, f: StreamCallback, user_data: *mut libc::c_void) -> Result<()> {
        let key = self.stream_key(stream)?;
        self.check_capture_sync(key)?;
        let status = self.sticky.load(std::sync::atomic::Ordering::Acquire);
        let data = UserData(user_data);
        self.streams.enqueue(
            key,
            Box::new(move || {
                let data = data;
                // SAFETY: as above; the stream handle is passed back as the program gave it.
                unsafe { f(stream as *mut libc::c_void, status, data.0) }
            }),
        );
        Ok(())
    }

    // ---- events ----------------------------------------------------------------------------------------

    /// `cudaEventCreateWithFlags`.
    pub fn event_create(&self, flags: u32) -> Result<u64> {
        if flags & !0x7 != 0 || (flags & EventFlags::INTERPROCESS != 0 && flags & EventFlags::DISABLE_TIMING == 0) {
            return Err(Error::INVALID_VALUE);
        }
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        t.next_event += 1;
        let handle = EVENT_WINDOW + t.next_event * 16;
        t.events.insert(handle, Event { flags, recorded: None });
        Ok(handle)
    }

    /// Whether `event` exists (`cudaErrorInvalidResourceHandle` otherwise).
    pub(crate) fn event_exists(&self, event: u64) -> Result<()> {
        self.event_get(event).map(|_| ())
    }

    fn event_get(&self, event: u64) -> Result<Event> {
        let t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        t.events.get(&event).copied().ok_or(Error::INVALID_RESOURCE_HANDLE)
    }

    /// `cudaEventDestroy`.
    pub fn event_destroy(&self, event: u64) -> Result<()> {
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        t.events.remove(&event).map(|_| ()).ok_or(Error::INVALID_RESOURCE_HANDLE)
    }

    /// `cudaEventRecord`: the event happens now, after the work already on `stream` (done, or waited for).
    pub fn event_record(&self, event: u64, stream: u64) -> Result<()> {
        self.event_get(event)?;
        if self.capture_event_record(event, stream)? {
            return Ok(());
        }
        self.enter_stream(stream)?;
        self.check_sticky()?;
        let mut t = self.streams.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = t.events.get_mut(&event) {
            e.recorded = Some(Instant::now());
        }
        Ok(())
    }

    /// `cudaEventQuery`: recorded events (and never-recorded ones, as CUDA says) are complete.
    pub fn event_query(&self, event: u64) -> Result<()> {
        self.event_get(event)?;
        self.check_captured_event(event)?;
        self.check_unsafe_call()?;
        self.synchronize_faults()
    }

    /// `cudaEventSynchronize`.
    pub fn event_synchronize(&self, event: u64) -> Result<()> {
        self.event_get(event)?;
        self.check_captured_event(event)?;
        self.check_unsafe_call()?;
        self.lock().flush_printf();
        self.synchronize_faults()
    }

    /// `cudaEventElapsedTime`: milliseconds from `start`'s record to `end`'s, as measured.
    pub fn event_elapsed(&self, start: u64, end: u64) -> Result<f32> {
        let (s, e) = (self.event_get(start)?, self.event_get(end)?);
        if (s.flags | e.flags) & EventFlags::DISABLE_TIMING != 0 {
            return Err(Error::INVALID_RESOURCE_HANDLE);
        }
        let (Some(a), Some(b)) = (s.recorded, e.recorded) else {
            return Err(Error::INVALID_RESOURCE_HANDLE);
        };
        self.check_sticky()?;
        let ms = if b >= a { (b - a).as_secs_f64() * 1e3 } else { -((a - b).as_secs_f64() * 1e3) };
        Ok(ms as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn cuda() -> Cuda {
        Cuda::new(Config { jit_cache: None, threads: 1, ..Config::default() }, Box::new(std::io::sink()))
    }

    static ORDER: AtomicU32 = AtomicU32::new(0);

    unsafe extern "C" fn record_order(data: *mut libc::c_void) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        // SAFETY: the test passes a pointer to an AtomicU32 that outlives the stream's work.
        let slot = unsafe { &*(data as *const AtomicU32) };
        slot.store(ORDER.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
    }

    #[test]
    fn host_functions_run_in_order_and_later_work_waits_for_them() {
        let cuda = cuda();
        let s = cuda.stream_create(0, 0).unwrap();
        let (a, b) = (Box::new(AtomicU32::new(0)), Box::new(AtomicU32::new(0)));
        cuda.launch_host_fn(s, record_order, &*a as *const AtomicU32 as *mut libc::c_void).unwrap();
        cuda.launch_host_fn(s, record_order, &*b as *const AtomicU32 as *mut libc::c_void).unwrap();
        assert_eq!(cuda.stream_query(s), Err(Error::NOT_READY), "the functions sleep; they are still queued");
        cuda.stream_synchronize(s).unwrap();
        let (a, b) = (a.load(Ordering::SeqCst), b.load(Ordering::SeqCst));
        assert!(a > 0 && b == a + 1, "in order: {a} then {b}");
        assert_eq!(cuda.stream_query(s), Ok(()));
        cuda.stream_destroy(s).unwrap();
        assert_eq!(cuda.stream_synchronize(s), Err(Error::INVALID_RESOURCE_HANDLE));
    }

    #[test]
    fn stream_and_event_handles_are_positive_as_signed_integers_and_never_user_addresses() {
        let cuda = cuda();
        for h in [cuda.stream_create(0, 0).unwrap(), cuda.event_create(0).unwrap()] {
            assert!(i64::try_from(h).is_ok(), "{h:#x} is negative as an intptr_t");
            assert!(h >= 1 << 57, "{h:#x} could be a user-space address");
        }
    }

    #[test]
    fn events_measure_time_and_reject_what_cuda_rejects() {
        let cuda = cuda();
        let (a, b) = (cuda.event_create(0).unwrap(), cuda.event_create(0).unwrap());
        assert_eq!(cuda.event_elapsed(a, b), Err(Error::INVALID_RESOURCE_HANDLE), "not recorded");
        assert_eq!(cuda.event_query(a), Ok(()), "a never-recorded event is complete");
        cuda.event_record(a, 0).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        cuda.event_record(b, PER_THREAD_STREAM).unwrap();
        let ms = cuda.event_elapsed(a, b).unwrap();
        assert!((5.0..5000.0).contains(&ms), "{ms}");
        assert!(cuda.event_elapsed(b, a).unwrap() < 0.0);
        let untimed = cuda.event_create(EventFlags::DISABLE_TIMING).unwrap();
        cuda.event_record(untimed, 0).unwrap();
        assert_eq!(cuda.event_elapsed(a, untimed), Err(Error::INVALID_RESOURCE_HANDLE));
        assert_eq!(cuda.event_create(EventFlags::INTERPROCESS), Err(Error::INVALID_VALUE));
        cuda.event_destroy(a).unwrap();
        assert_eq!(cuda.event_record(a, 0), Err(Error::INVALID_RESOURCE_HANDLE));
    }
}
