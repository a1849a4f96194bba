//! The closed-form equilibrium against a brute-force discrete-time simulation of the closed network
//! (`transit::sim`), for random parameters.
//!
//! Tolerance: MS and CS throughput within 2% (relative); threads in the memory system within 5% of n plus two
//! threads. Over 4,000 random cases (another seed) the worst throughput error was 0.55% and the worst k
//! error 70% of that band. The throughput is what the model predicts best: the rest is truncation of the last
//! round trip in the window and the token bucket's rounding. k strays more near a knee, where lanes that
//! finish together send requests in bursts and a few queue in front of a memory system the smooth model
//! calls unsaturated. Near the memory/computation boundary the start-up transient drains at the rate
//! |R − M/Z|, so the warm-up is stretched there.

use transit::sim::{simulate, SimParams};
use transit::{Bound, Model};

const THROUGHPUT_TOL: f64 = 0.02;
const K_TOL: f64 = 0.05;
const K_SLACK_THREADS: f64 = 2.0;

fn compare(p: &SimParams) -> Result<(), String> {
    let model = Model { m: p.lanes as f64, r: p.r, l: f64::from(p.l), z: f64::from(p.z), n: p.threads as f64 };
    let e = model.solve();
    let s = simulate(p);
    let rel = (s.ms - e.ms).abs() / e.ms;
    if rel > THROUGHPUT_TOL {
        return Err(format!("{p:?}\nmodel {e:?}\nsim {s:?}\nthroughput off by {:.2}%", rel * 100.0));
    }
    if (s.cs - e.cs).abs() / e.cs > THROUGHPUT_TOL {
        return Err(format!("{p:?}\nmodel {e:?}\nsim {s:?}\nCS throughput off"));
    }
    // In the capacity bound any k of the range balances; the simulation picks one.
    let (lo, hi) = e.k_range;
    let slack = K_TOL * p.threads as f64 + K_SLACK_THREADS;
    if s.k < lo - slack || s.k > hi + slack {
        return Err(format!("{p:?}\nmodel {e:?}\nsim {s:?}\nk = {} outside [{lo}, {hi}] ± {slack}", s.k));
    }
    Ok(())
}

fn params(lanes: usize, threads: usize, z: u32, l: u32, r: f64) -> SimParams {
    let period = u64::from(z + l);
    let gap = (r - lanes as f64 / f64::from(z)).abs();
    let drain = ((3.0 * threads as f64 / gap) as u64).min(300_000);
    SimParams { lanes, threads, z, l, r, warmup: 30 * period + 2000 + drain, cycles: (100 * period).max(20_000) }
}

#[test]
fn each_bound_matches_the_simulation() {
    // Thread: 6 threads, L = 100, Z = 10 → 6/110 < R = 1, < M/Z = 3.2.
    // Memory: 200 threads → R = 1 wins.
    // Computation: R = 5, 1000 threads → M/Z = 3.2 wins.
    // Capacity: Z = 32 → M/Z = 1 = R.
    let cases = [
        (params(32, 6, 10, 100, 1.0), Bound::Thread),
        (params(32, 200, 10, 100, 1.0), Bound::Memory),
        (params(32, 1000, 10, 100, 5.0), Bound::Computation),
        (params(32, 600, 32, 100, 1.0), Bound::Capacity),
        // On the boundaries.
        (params(32, 110, 10, 100, 1.0), Bound::Memory),
        (params(32, 352, 10, 100, 5.0), Bound::Computation),
        (params(32, 132, 32, 100, 1.0), Bound::Capacity),
    ];
    for (p, bound) in cases {
        let m = Model { m: p.lanes as f64, r: p.r, l: f64::from(p.l), z: f64::from(p.z), n: p.threads as f64 };
        assert_eq!(m.solve().bound, bound, "{p:?}");
        compare(&p).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn random_parameters_match_the_simulation() {
    let mut rng = fastrand::Rng::with_seed(0x7_2a11);
    let mut failures = Vec::new();
    let mut bounds = std::collections::HashMap::new();
    for _ in 0..120 {
        let lanes = rng.usize(1..=16);
        let threads = rng.usize(1..=96);
        let z = rng.u32(1..=40);
        let l = rng.u32(1..=200);
        // Rates from a request every 50 cycles to two per cycle, log-uniform.
        let r = (0.02f64.ln() + rng.f64() * (2.0f64.ln() - 0.02f64.ln())).exp();
        let p = params(lanes, threads, z, l, r);
        let m = Model { m: lanes as f64, r, l: f64::from(l), z: f64::from(z), n: threads as f64 };
        *bounds.entry(m.solve().bound).or_insert(0) += 1;
        if let Err(e) = compare(&p) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of 120 disagree:\n{}", failures.len(), failures.join("\n\n"));
    for b in [Bound::Thread, Bound::Memory, Bound::Computation] {
        assert!(bounds.get(&b).copied().unwrap_or(0) >= 5, "too few {b} cases: {bounds:?}");
    }
}
