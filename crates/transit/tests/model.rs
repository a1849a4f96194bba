//! The closed-form equilibrium: each bound, the boundaries between them, and the directions.

use transit::{Bound, Model, Param};

const EPS: f64 = 1e-9;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// L = 100 cycles, Z = 10, M = 32 lanes, R = 1 request per cycle unless changed: ceilings
/// n/110 (threads), 1 (memory), 3.2 (computation).
fn base(n: f64) -> Model {
    Model { m: 32.0, r: 1.0, l: 100.0, z: 10.0, n }
}

/// The equilibrium balances supply and demand everywhere in its k range.
fn check_balanced(m: &Model) {
    let e = m.solve();
    assert!(close(e.x + e.k, m.n), "{m:?}: x + k = {} != n", e.x + e.k);
    for k in [e.k_range.0, e.k, e.k_range.1] {
        assert!(close(m.f(k), e.ms), "{m:?}: f({k}) = {} but throughput {}", m.f(k), e.ms);
        assert!(close(m.g(m.n - k), e.ms), "{m:?}: g({}) = {} but throughput {}", m.n - k, m.g(m.n - k), e.ms);
    }
    assert!(close(e.cs, m.z * e.ms));
}

#[test]
fn thread_bound() {
    let m = base(55.0);
    let e = m.solve();
    assert_eq!(e.bound, Bound::Thread);
    assert!(close(e.k, 50.0) && close(e.x, 5.0), "{e:?}");
    assert!(close(e.ms, 0.5) && close(e.cs, 5.0));
    // Both curves on their sloping parts: left of δ, right of π.
    assert!(e.k < m.delta().0 && e.x < m.pi().0);
    check_balanced(&m);
}

#[test]
fn memory_bound() {
    let m = base(220.0);
    let e = m.solve();
    assert_eq!(e.bound, Bound::Memory);
    assert!(close(e.ms, 1.0) && close(e.x, 10.0) && close(e.k, 210.0), "{e:?}");
    assert!(e.k >= m.delta().0 && e.x < m.pi().0);
    check_balanced(&m);
}

#[test]
fn computation_bound() {
    let m = Model { r: 5.0, ..base(1100.0) };
    let e = m.solve();
    assert_eq!(e.bound, Bound::Computation);
    assert!(close(e.ms, 3.2) && close(e.k, 320.0) && close(e.x, 780.0), "{e:?}");
    assert!(close(e.cs, 32.0), "all M lanes busy");
    assert!(e.k <= m.delta().0 && e.x >= m.pi().0);
    check_balanced(&m);
}

#[test]
fn capacity_bound() {
    // M/Z = 32/32 = 1 = R: the roofline ridge.
    let m = Model { z: 32.0, ..base(1100.0) };
    let e = m.solve();
    assert_eq!(e.bound, Bound::Capacity);
    assert!(close(e.ms, 1.0) && close(e.cs, 32.0));
    assert!(close(e.k_range.0, 100.0) && close(e.k_range.1, 1068.0), "{e:?}");
    check_balanced(&m);
}

#[test]
fn boundary_thread_memory() {
    // n/(L+Z) = R exactly: the crossing is on δ; the flat part counts (memory bound is f(k) = R).
    let m = base(110.0);
    let e = m.solve();
    assert_eq!(e.bound, Bound::Memory);
    assert!(close(e.k, 100.0) && close(e.k, m.delta().0) && close(e.x, 10.0));
    check_balanced(&m);
    let below = base(110.0 * (1.0 - 1e-6)).solve();
    let above = base(110.0 * (1.0 + 1e-6)).solve();
    assert_eq!(below.bound, Bound::Thread);
    assert_eq!(above.bound, Bound::Memory);
    // Continuous across the boundary.
    assert!((below.k - e.k).abs() < 1e-3 && (above.k - e.k).abs() < 1e-3);
    assert!((below.ms - e.ms).abs() < 1e-5 && (above.ms - e.ms).abs() < 1e-5);
}

#[test]
fn boundary_thread_computation() {
    // R = 5, n/(L+Z) = M/Z = 3.2 at n = 352: the crossing is on π.
    let at = |n: f64| Model { r: 5.0, ..base(n) };
    let e = at(352.0).solve();
    assert_eq!(e.bound, Bound::Computation);
    assert!(close(e.k, 320.0) && close(e.x, 32.0) && close(e.x, at(352.0).pi().0));
    check_balanced(&at(352.0));
    assert_eq!(at(352.0 * (1.0 - 1e-6)).solve().bound, Bound::Thread);
    assert_eq!(at(352.0 * (1.0 + 1e-6)).solve().bound, Bound::Computation);
    assert!((at(351.9999).solve().k - e.k).abs() < 1e-3);
}

#[test]
fn boundary_memory_computation_is_capacity() {
    let at = |z: f64| Model { z, ..base(1100.0) };
    assert_eq!(at(32.0).solve().bound, Bound::Capacity);
    // Z a little higher: M/Z below R, computation bound; a little lower: memory bound.
    assert_eq!(at(32.0 * (1.0 + 1e-6)).solve().bound, Bound::Computation);
    assert_eq!(at(32.0 * (1.0 - 1e-6)).solve().bound, Bound::Memory);
    // The MS throughput is continuous, k jumps across the capacity stretch.
    let lo = at(32.0 * (1.0 - 1e-6)).solve();
    let hi = at(32.0 * (1.0 + 1e-6)).solve();
    let cap = at(32.0).solve();
    assert!((lo.ms - cap.ms).abs() < 1e-5 && (hi.ms - cap.ms).abs() < 1e-5);
    assert!((lo.k - cap.k_range.1).abs() < 0.1, "{lo:?} {cap:?}");
    assert!((hi.k - cap.k_range.0).abs() < 0.1, "{hi:?} {cap:?}");
}

#[test]
fn triple_point() {
    // R = M/Z = n/(L+Z) = 1: the capacity range shrinks to the single point δ = (100, 1) = π.
    let m = Model { z: 32.0, ..base(132.0) };
    let e = m.solve();
    assert_eq!(e.bound, Bound::Capacity);
    assert!(close(e.k_range.0, e.k_range.1) && close(e.k, 100.0) && close(e.x, 32.0));
    check_balanced(&m);
    // Fewer threads: thread bound.
    assert_eq!(Model { n: 131.0, ..m }.solve().bound, Bound::Thread);
}

#[test]
fn zero_threads_and_zero_latency() {
    let e = base(0.0).solve();
    assert_eq!(e.bound, Bound::Thread);
    assert_eq!((e.k, e.x, e.ms), (0.0, 0.0, 0.0));
    // L = 0: the memory system answers at once; f jumps to R.
    let m = Model { l: 0.0, ..base(5.0) };
    let e = m.solve();
    assert_eq!(e.bound, Bound::Thread);
    assert!(close(e.ms, 0.5) && close(e.k, 0.0) && close(e.x, 5.0));
}

#[test]
fn validate_rejects_bad_parameters() {
    for bad in [
        Model { m: 0.0, ..base(1.0) },
        Model { r: -1.0, ..base(1.0) },
        Model { z: f64::NAN, ..base(1.0) },
        Model { l: -1.0, ..base(1.0) },
        Model { n: f64::INFINITY, ..base(1.0) },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    assert!(base(1.0).validate().is_ok());
}

fn random_model(rng: &mut fastrand::Rng) -> Model {
    let lg = |rng: &mut fastrand::Rng, lo: f64, hi: f64| (lo.ln() + rng.f64() * (hi.ln() - lo.ln())).exp();
    Model {
        m: lg(rng, 1.0, 4096.0),
        r: lg(rng, 0.01, 100.0),
        l: lg(rng, 1.0, 2000.0),
        z: lg(rng, 0.1, 500.0),
        n: lg(rng, 1.0, 20000.0),
    }
}

#[test]
fn random_models_balance_and_classify_consistently() {
    let mut rng = fastrand::Rng::with_seed(17);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20_000 {
        let m = random_model(&mut rng);
        let e = m.solve();
        check_balanced(&m);
        seen.insert(e.bound);
        let (delta, _) = m.delta();
        let (pi, _) = m.pi();
        let tol = 1e-9 * m.n.max(delta).max(1.0);
        match e.bound {
            Bound::Thread => assert!(e.k < delta + tol && e.x < pi + tol),
            Bound::Memory => assert!(e.k >= delta - tol && e.x <= pi + tol),
            Bound::Computation => assert!(e.k <= delta + tol && e.x >= pi - tol),
            Bound::Capacity => {}
        }
        // The throughput is the least ceiling.
        let c = e.ceilings;
        assert!(close(e.ms, c.thread.min(c.memory).min(c.computation)));
    }
    assert!(seen.contains(&Bound::Thread) && seen.contains(&Bound::Memory) && seen.contains(&Bound::Computation));
}

/// Every direction says what really happens when its parameter is raised.
#[test]
fn directions_hold() {
    let mut rng = fastrand::Rng::with_seed(99);
    let mut models: Vec<Model> = (0..3000).map(|_| random_model(&mut rng)).collect();
    models.extend([base(55.0), base(220.0), Model { r: 5.0, ..base(1100.0) }, Model { z: 32.0, ..base(1100.0) }]);
    for m in models {
        let e = m.solve();
        let dirs = m.directions();
        assert!(!dirs.is_empty());
        for d in dirs {
            let now = m.get(d.param);
            if !d.helps {
                let after = m.with(d.param, now * 1.5).solve();
                assert!(after.cs <= e.cs * (1.0 + EPS), "{m:?} {e:?}: raising {} helped: {d:?} {after:?}", d.param);
                continue;
            }
            match d.limit {
                Some(limit) => {
                    assert!(limit >= now * (1.0 - EPS), "{m:?}: limit {limit} below {now} for {}", d.param);
                    let at = m.with(d.param, limit).solve();
                    let gain = d.cs_gain.expect("gain with a limit");
                    assert!((at.cs / e.cs - gain).abs() <= 1e-6 * gain, "{m:?} {d:?} {at:?}");
                    // Past the limit the bound has changed to the one announced.
                    let past = m.with(d.param, limit * 1.001 + 1e-12).solve();
                    assert_eq!(Some(past.bound), d.next_bound, "{m:?} {e:?} {d:?} {past:?}");
                    // ... and this direction stops paying: the next 10% gain little.
                    let further = m.with(d.param, limit * 1.1).solve();
                    assert!(further.cs <= at.cs * 1.1 * (1.0 + EPS));
                }
                None => {
                    let after = m.with(d.param, now * 1.5).solve();
                    assert!(after.cs > e.cs, "{m:?}: raising {} did not help", d.param);
                }
            }
            // A little increase already helps.
            let step = m.with(d.param, now * 1.000_001).solve();
            assert!(step.cs >= e.cs, "{m:?} {d:?}");
        }
        // The directions named in the paper for each bound.
        let helpful: Vec<Param> = m.directions().into_iter().filter(|d| d.helps).map(|d| d.param).collect();
        match e.bound {
            Bound::Thread => assert_eq!(helpful, [Param::N, Param::Z]),
            Bound::Memory => assert_eq!(helpful, [Param::Z, Param::R]),
            Bound::Computation => assert_eq!(helpful, [Param::M]),
            Bound::Capacity => assert!(helpful.is_empty()),
        }
    }
}
