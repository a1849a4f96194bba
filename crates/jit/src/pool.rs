//! The worker pool: one thread per core, started once, running one job (a launch) at a time on all workers.
//! The launching thread is worker 0 (so a one-worker pool starts no thread); the others spin a little after
//! a job before they sleep, so that back-to-back launches do not pay a futex wake-up each.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A job as the workers see it: the launch's closure with its lifetime erased. [`Pool::run`] waits until
/// every worker has finished it, so the closure outlives every use.
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn(usize) + Sync));

// SAFETY: the closure is `Sync`, and `run` keeps it alive until all workers are done with it.
unsafe impl Send for Job {}

#[derive(Default)]
struct State {
    generation: u64,
    job: Option<Job>,
    remaining: usize,
    panicked: bool,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    /// `State::generation`, readable without the lock (for spinning workers).
    published: AtomicU64,
    start: Condvar,
    done: Condvar,
}

/// How many times a worker polls for the next job before it sleeps (a few tens of microseconds).
const SPINS: u32 = 20_000;

/// A fixed set of worker threads: the launching thread and `threads - 1` started ones.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    threads: usize,
    /// Serializes launches from several threads.
    launch: Mutex<()>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({} workers)", self.threads)
    }
}

impl Pool {
    pub fn new(threads: usize) -> Pool {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            published: AtomicU64::new(0),
            start: Condvar::new(),
            done: Condvar::new(),
        });
        let workers = (1..threads)
            .map(|w| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("lockstep-jit-{w}"))
                    .spawn(move || worker(w, &shared))
                    .expect("spawn a JIT worker thread")
            })
            .collect();
        Pool { shared, workers, threads, launch: Mutex::new(()) }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f(worker)` on every worker and returns when all are done. Returns `false` if any panicked.
    pub fn run(&self, f: &(dyn Fn(usize) + Sync)) -> bool {
        let _one_at_a_time = self.launch.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: lifetime erasure; we wait below until no worker holds the pointer any more.
        let job = Job(unsafe {
            std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync + 'static)>(f)
        });
        if !self.workers.is_empty() {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.generation += 1;
            st.job = Some(job);
            st.remaining = self.workers.len();
            st.panicked = false;
            self.shared.published.store(st.generation, Ordering::Release);
            self.shared.start.notify_all();
        }
        let ok = catch_unwind(AssertUnwindSafe(|| f(0))).is_ok();
        if self.workers.is_empty() {
            return ok;
        }
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        while st.remaining > 0 {
            st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.job = None;
        ok && !st.panicked
    }
}

fn worker(w: usize, shared: &Shared) {
    let mut seen = 0u64;
    loop {
        for _ in 0..SPINS {
            if shared.published.load(Ordering::Acquire) != seen {
                break;
            }
            std::hint::spin_loop();
        }
        let job = {
            let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            while st.generation == seen && !st.shutdown {
                st = shared.start.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            if st.shutdown {
                return;
            }
            seen = st.generation;
            st.job
        };
        let ok = match job {
            // SAFETY: `Pool::run` keeps the closure alive until `remaining` reaches zero.
            Some(Job(f)) => catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(w) })).is_ok(),
            None => true,
        };
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if !ok {
            st.panicked = true;
        }
        st.remaining -= 1;
        if st.remaining == 0 {
            shared.done.notify_all();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            st.shutdown = true;
            self.shared.start.notify_all();
        }
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}
