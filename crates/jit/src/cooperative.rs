//! Cooperative launches on the JIT: every CTA of the grid on an OS thread of its own, all started before any
//! can finish, so that a grid-wide barrier (`program::grid`) sees every CTA arrive. The worker pool runs CTAs
//! to completion one after another and cannot do this. A poll of the barrier (`Helper::GridSpin`, compiled
//! into the strong loads of kernels that read the grid workspace) yields the core, which matters when there
//! are more CTAs than cores, and stops the thread once another CTA has failed: its CTA would otherwise wait
//! forever for the failed one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::exec::{LaunchData, Worker};
use crate::CtaResult;

/// What the CTA threads of one cooperative launch share.
#[derive(Debug)]
pub struct GridState {
    /// The grid workspace's device address.
    pub workspace: u64,
    /// The first CTA that failed (`u64::MAX`: none yet).
    failed: AtomicU64,
}

impl GridState {
    pub fn new(workspace: u64) -> GridState {
        GridState { workspace, failed: AtomicU64::new(u64::MAX) }
    }

    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire) != u64::MAX
    }
}

/// CTA workers kept from one cooperative launch to the next (their buffers stay mapped).
const KEPT_WORKERS: usize = 64;

/// Runs every CTA of the launch at once. The results: each CTA that printed, and the first CTA that failed
/// with its error (CTAs stopped because of it are not reported).
pub fn run(data: &LaunchData<'_>, name: &str, grid: &GridState, workers: &Mutex<Vec<Worker>>) -> Vec<CtaResult> {
    let ctas = data.grid.count().unwrap_or(0);
    let mut pool = std::mem::take(&mut *workers.lock().unwrap_or_else(|e| e.into_inner()));
    pool.resize_with(ctas as usize, Worker::default);
    let results: Mutex<Vec<CtaResult>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for (cta, worker) in pool.iter_mut().enumerate() {
            let results = &results;
            let spawned = std::thread::Builder::new().name(format!("lockstep-cta-{cta}")).spawn_scoped(s, move || {
                let cta = cta as u64;
                worker.run_ctas(data, cta..cta + 1, &|_| false, &mut |cta, out, err| {
                    // Only the first failure is the launch's: the CTAs it stopped report theirs after it.
                    let first = err.is_some()
                        && grid.failed.compare_exchange(u64::MAX, cta, Ordering::AcqRel, Ordering::Acquire).is_ok();
                    let err = err.filter(|_| first);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push((cta, out, err));
                });
            });
            if let Err(e) = spawned {
                // Threads already started may wait for this CTA: stop them.
                let _ = grid.failed.compare_exchange(u64::MAX, cta as u64, Ordering::AcqRel, Ordering::Acquire);
                let err = device::ExecError::launch(
                    name,
                    format!("cannot start a thread for CTA {cta} of a cooperative launch: {e}"),
                );
                results.lock().unwrap_or_else(|e| e.into_inner()).push((cta as u64, Vec::new(), Some(err)));
                break;
            }
        }
    });
    pool.truncate(KEPT_WORKERS);
    *workers.lock().unwrap_or_else(|e| e.into_inner()) = pool;
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}
