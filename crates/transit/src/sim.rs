//! A brute-force, cycle-by-cycle simulation of the closed network the model describes: the reference the
//! closed-form equilibrium is tested against.
//!
//! `n` threads circulate. The computation system has `m` lanes; a thread in a lane does one instruction per
//! cycle and, after `z` of them, issues a memory request and leaves. Threads without a lane wait in a FIFO. The
//! memory system admits at most `r` requests per cycle (a token bucket, so fractional rates work) into a pipe
//! that returns each one `l` cycles later; requests beyond the rate wait in a FIFO. A thread whose request
//! returns goes back to the computation system. So one round trip of a lone thread takes exactly `z + l`
//! cycles, the computation system retires at most `m` instructions per cycle and the memory system serves at
//! most `r` requests per cycle: the network whose steady state the model solves in closed form.

use std::collections::VecDeque;

/// Parameters of a simulation run (integers where the simulation needs whole cycles and threads).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimParams {
    pub lanes: usize,
    pub threads: usize,
    /// Instructions per request (cycles in a lane per visit).
    pub z: u32,
    /// Cycles a request spends in the memory pipe.
    pub l: u32,
    /// Requests admitted per cycle at most.
    pub r: f64,
    /// Cycles simulated before measuring.
    pub warmup: u64,
    /// Cycles measured.
    pub cycles: u64,
}

/// Time averages over the measured cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimResult {
    /// Requests completed per cycle (MS throughput).
    pub ms: f64,
    /// Instructions retired per cycle (CS throughput).
    pub cs: f64,
    /// Mean threads in the memory system (queued or in the pipe), sampled at the start of each cycle.
    pub k: f64,
    /// Mean threads in the computation system (in a lane or waiting for one).
    pub x: f64,
}

/// Runs the simulation. The threads start in the memory system, returning one after another over one round
/// trip.
pub fn simulate(p: &SimParams) -> SimResult {
    let z = p.z.max(1);
    let mut cs_wait: VecDeque<usize> = VecDeque::new();
    // Per lane: the thread and the instructions it still has to do.
    let mut lanes: Vec<Option<(usize, u32)>> = vec![None; p.lanes.max(1)];
    let mut ms_wait: VecDeque<usize> = VecDeque::new();
    // (thread, cycle at which it is back in the computation system); FIFO because every request takes l.
    // Threads start evenly spread over one round trip, so the lanes do not all start (and finish) in step.
    let period = u64::from(z + p.l);
    let mut pipe: VecDeque<(usize, u64)> =
        (0..p.threads).map(|i| (i, i as u64 * period / p.threads.max(1) as u64)).collect();
    let mut tokens = 0.0f64;
    let cap = p.r.max(1.0);

    let (mut done, mut retired, mut k_sum, mut x_sum) = (0u64, 0u64, 0u64, 0u64);
    let total = p.warmup + p.cycles;
    for t in 0..total {
        let measuring = t >= p.warmup;
        // 1. Requests that are back.
        while pipe.front().is_some_and(|&(_, ready)| ready <= t) {
            let (thread, _) = pipe.pop_front().expect("front checked");
            cs_wait.push_back(thread);
            if measuring {
                done += 1;
            }
        }
        if measuring {
            let k = (pipe.len() + ms_wait.len()) as u64;
            k_sum += k;
            x_sum += p.threads as u64 - k;
        }
        // 2. Lanes take waiting threads and each does one instruction.
        for lane in lanes.iter_mut() {
            if lane.is_none() {
                if let Some(thread) = cs_wait.pop_front() {
                    *lane = Some((thread, z));
                }
            }
            if let Some((thread, left)) = lane {
                *left -= 1;
                if measuring {
                    retired += 1;
                }
                if *left == 0 {
                    ms_wait.push_back(*thread);
                    *lane = None;
                }
            }
        }
        // 3. The memory system admits what its rate allows; each request returns l cycles after this one.
        tokens += p.r;
        while tokens >= 1.0 {
            let Some(thread) = ms_wait.pop_front() else { break };
            tokens -= 1.0;
            pipe.push_back((thread, t + 1 + u64::from(p.l)));
        }
        // An idle memory system saves up at most one cycle's worth (or one request).
        tokens = tokens.min(cap);
    }
    let c = p.cycles.max(1) as f64;
    SimResult { ms: done as f64 / c, cs: retired as f64 / c, k: k_sum as f64 / c, x: x_sum as f64 / c }
}
