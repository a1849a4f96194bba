//! Cooperative launches on the JIT: every CTA of the grid on an OS thread of its own, all started before any
//! can finish, so that a grid-wide barrier (`program::grid`) sees every CTA arrive. The worker pool runs CTAs
//! to completion one after another and cannot do this. A poll of the barrier (`Helper::GridSpin`, compiled
//! into the strong loads of kernels that read the grid workspace) yields the core, which matters when there
//! are more CTAs than cores, and stops the thread once another CTA has failed: its CTA would otherwise wait
//! forever for the failed one. It also stops every thread when each CTA still running has read the same
//! value at the same address `STUCK_POLLS` times in a row (a poll that ends a spin reads a new value, so a
//! CTA past its spin does not count as stuck): nobody is left to change what they wait for, as when some
//! CTA exits without reaching a grid barrier.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::exec::{LaunchData, Worker};
use crate::CtaResult;

/// Polls of an unchanged value in a row, in every CTA still running, that make a deadlock.
const STUCK_POLLS: u64 = 1 << 18;
/// A finished CTA's streak.
const FINISHED: u64 = u64::MAX;

/// What the CTA threads of one cooperative launch share.
#[derive(Debug)]
pub struct GridState {
    /// The grid workspace's device address.
    pub workspace: u64,
    /// The first CTA that failed (`u64::MAX`: none yet).
    failed: AtomicU64,
    /// Each CTA's polls of an unchanged value in a row ([`FINISHED`] once it is done).
    streaks: Vec<AtomicU64>,
}

/// A CTA thread's last poll: address, value, and how many polls in a row read them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Poll {
    addr: u64,
    value: u64,
    streak: u64,
}

impl GridState {
    pub fn new(workspace: u64, ctas: u64) -> GridState {
        GridState {
            workspace,
            failed: AtomicU64::new(u64::MAX),
            streaks: (0..ctas).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// CTA `cta` read `value` at `addr` in a spin: `Err` with the reason when it should stop.
    pub fn poll(&self, cta: u64, last: &mut Poll, addr: u64, value: u64) -> Result<(), String> {
        if self.failed.load(Ordering::Acquire) != u64::MAX {
            return Err("stopped: another CTA of the cooperative launch failed".into());
        }
        last.streak = if (last.addr, last.value) == (addr, value) { last.streak + 1 } else { 1 };
        (last.addr, last.value) = (addr, value);
        let Some(mine) = self.streaks.get(cta as usize) else { return Ok(()) };
        mine.store(last.streak, Ordering::Relaxed);
        if last.streak < STUCK_POLLS || !last.streak.is_multiple_of(1024) {
            return Ok(());
        }
        if self.streaks.iter().all(|s| s.load(Ordering::Relaxed) >= STUCK_POLLS) {
            let waiting = self.streaks.iter().filter(|s| s.load(Ordering::Relaxed) != FINISHED).count();
            return Err(format!(
                "deadlock in a cooperative launch: each of the {waiting} CTAs still running reads an unchanging value \
                 in a spin (this one {value:#x} at {addr:#x}), and {} finished: a grid-wide barrier that some CTA \
                 never reaches?",
                self.streaks.len() - waiting
            ));
        }
        Ok(())
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
                grid.streaks[cta as usize].store(FINISHED, Ordering::Relaxed);
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
