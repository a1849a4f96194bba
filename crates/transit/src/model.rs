//! The model itself, in the paper's normalized units: a *cycle* is the time one execution lane needs for one
//! instruction, so the computation system (CS) retires `min(x, M)` instructions per cycle with `x` threads in
//! it, and the memory system (MS) serves `min(k / L, R)` requests per cycle with `k` threads in it.
//!
//! A thread alternates between the two: `Z` instructions in the CS, then one request that keeps it `L` cycles
//! in the MS. With `n` threads in all (`x + k = n`), flow balance says that the MS serves what the CS asks
//! for:
//!
//! ```text
//! f(k) = min(k / L, R)          supply of the MS with k threads in it
//! g(x) = min(x, M) / Z          demand the CS makes with x threads in it
//! f(k) = g(n - k)               the machine state (equilibrium)
//! ```
//!
//! `f` rises with `k` and `g(n - k)` falls with `k`, so they cross once (or, in the capacity bound, along a
//! flat stretch). The height of the crossing is the MS throughput; times `Z` it is the CS throughput. It has
//! a closed form, the minimum of three ceilings:
//!
//! ```text
//! throughput = min( n / (L + Z),  R,  M / Z )
//!                   threads       memory  computation
//! ```
//!
//! Which ceiling is lowest names the bound: only the first is [`Bound::Thread`] (both curves on their sloping
//! parts), only `R` is [`Bound::Memory`] (f on its flat part), only `M / Z` is [`Bound::Computation`] (g on
//! its flat part), `R` and `M / Z` together (the roofline ridge, `M / Z = R`) is [`Bound::Capacity`]. On a
//! boundary between thread and memory (or computation) bound the crossing sits exactly on the knee δ (or π)
//! and the flat part wins, as in the paper's definitions (memory bound *is* `f(k) = R`).

use std::fmt;

use serde::Serialize;

/// Relative tolerance for "these two ceilings are equal" when classifying a bound.
pub const TIE_TOLERANCE: f64 = 1e-9;

/// The five inputs of the model, normalized (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Model {
    /// M: execution lanes (threads the CS serves at once); the CS transition point π is at `x = M`.
    pub m: f64,
    /// R: peak MS throughput, requests per cycle.
    pub r: f64,
    /// L: memory latency, cycles. The MS transition point δ is at `k = R·L` (Little's law).
    pub l: f64,
    /// Z: instructions per memory request (arithmetic intensity, the time a thread thinks).
    pub z: f64,
    /// n: threads in the machine.
    pub n: f64,
}

/// One of the five parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Param {
    N,
    Z,
    M,
    R,
    L,
}

impl Param {
    pub fn symbol(self) -> &'static str {
        match self {
            Param::N => "n",
            Param::Z => "Z",
            Param::M => "M",
            Param::R => "R",
            Param::L => "L",
        }
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// Where the equilibrium lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// Both curves on their sloping parts: too few threads to fill either system.
    Thread,
    /// On the flat part of f: the MS delivers its peak R.
    Memory,
    /// On the flat part of g: all M lanes are busy.
    Computation,
    /// Both flat: `M / Z = R`, workload balance equals machine balance.
    Capacity,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Thread => "thread",
            Bound::Memory => "memory",
            Bound::Computation => "computation",
            Bound::Capacity => "capacity",
        }
    }

    /// One line on what the bound means.
    pub fn explain(self) -> &'static str {
        match self {
            Bound::Thread => {
                "f(k) and g(x) cross on their sloping parts: neither system is saturated, threads are too few"
            }
            Bound::Memory => "the crossing is on the flat part of f(k): the memory system delivers its peak R",
            Bound::Computation => "the crossing is on the flat part of g(x): all M lanes are busy",
            Bound::Capacity => {
                "both curves cross on their flat parts: M/Z = R, the workload's balance equals the machine's"
            }
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The machine state the model predicts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Equilibrium {
    pub bound: Bound,
    /// Threads in the memory system. In the capacity bound any k in `k_range` balances; `k` is its middle.
    pub k: f64,
    /// Threads in the computation system, `n - k`.
    pub x: f64,
    /// The range of k that balances: a single point except in the capacity bound.
    pub k_range: (f64, f64),
    /// MS throughput, requests per cycle: `f(k)`.
    pub ms: f64,
    /// CS throughput, instructions per cycle: `Z · f(k)`.
    pub cs: f64,
    /// The three ceilings on the MS throughput: `n / (L + Z)` (threads), `R` (memory), `M / Z` (computation).
    pub ceilings: Ceilings,
}

/// The three ceilings whose minimum is the MS throughput.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ceilings {
    pub thread: f64,
    pub memory: f64,
    pub computation: f64,
}

/// A parameter of a [`Model`] that is out of range.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelError(pub String);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TIE_TOLERANCE * a.abs().max(b.abs())
}

impl Model {
    /// Checks every parameter: M, R and Z positive, L and n non-negative, all finite.
    pub fn validate(&self) -> Result<(), ModelError> {
        let checks = [
            (Param::M, self.m, true),
            (Param::R, self.r, true),
            (Param::Z, self.z, true),
            (Param::L, self.l, false),
            (Param::N, self.n, false),
        ];
        for (p, v, strictly_positive) in checks {
            let ok = v.is_finite() && if strictly_positive { v > 0.0 } else { v >= 0.0 };
            if !ok {
                let want = if strictly_positive { "a positive number" } else { "a non-negative number" };
                return Err(ModelError(format!("{p} must be {want} (got {v})")));
            }
        }
        Ok(())
    }

    /// f(k): the MS supply with k threads in it, requests per cycle.
    pub fn f(&self, k: f64) -> f64 {
        let k = k.max(0.0);
        if self.l == 0.0 {
            if k > 0.0 {
                self.r
            } else {
                0.0
            }
        } else {
            (k / self.l).min(self.r)
        }
    }

    /// g(x): the MS demand of the CS with x threads in it, requests per cycle.
    pub fn g(&self, x: f64) -> f64 {
        x.max(0.0).min(self.m) / self.z
    }

    /// G(x): CS throughput with x threads in it, instructions per cycle.
    pub fn cs_curve(&self, x: f64) -> f64 {
        x.max(0.0).min(self.m)
    }

    /// δ: the MS transition point, `k = R·L`, and its height `R`.
    pub fn delta(&self) -> (f64, f64) {
        (self.r * self.l, self.r)
    }

    /// π: the CS transition point, `x = M`, and its height `M / Z` (on g).
    pub fn pi(&self) -> (f64, f64) {
        (self.m, self.m / self.z)
    }

    pub fn ceilings(&self) -> Ceilings {
        Ceilings { thread: self.n / (self.l + self.z), memory: self.r, computation: self.m / self.z }
    }

    /// The equilibrium `f(k) = g(n - k)`. Call [`Model::validate`] first; parameters out of range give
    /// meaningless (but finite or NaN, never panicking) results.
    pub fn solve(&self) -> Equilibrium {
        let c = self.ceilings();
        let ms = c.thread.min(c.memory).min(c.computation);
        let f_flat = c.memory <= ms || close(c.memory, ms);
        let g_flat = c.computation <= ms || close(c.computation, ms);
        let n = self.n;
        let (bound, lo, hi) = match (f_flat, g_flat) {
            (false, false) => {
                let k = n * self.l / (self.l + self.z);
                (Bound::Thread, k, k)
            }
            (true, false) => {
                // x threads keep the MS saturated: g(x) = R on the sloping part of g.
                let k = n - self.r * self.z;
                (Bound::Memory, k, k)
            }
            (false, true) => {
                // k threads in the MS carry the CS's peak demand M/Z on the sloping part of f.
                let k = self.l * self.m / self.z;
                (Bound::Computation, k, k)
            }
            (true, true) => {
                // Any k between δ and n - M balances; with exactly enough threads the range is one point.
                let lo = self.r * self.l;
                let hi = (n - self.m).max(lo);
                (Bound::Capacity, lo, hi)
            }
        };
        let lo = lo.clamp(0.0, n);
        let hi = hi.clamp(lo, n);
        let k = 0.5 * (lo + hi);
        Equilibrium { bound, k, x: n - k, k_range: (lo, hi), ms, cs: ms * self.z, ceilings: c }
    }

    /// A copy with one parameter replaced.
    pub fn with(&self, p: Param, value: f64) -> Model {
        let mut m = *self;
        match p {
            Param::N => m.n = value,
            Param::Z => m.z = value,
            Param::M => m.m = value,
            Param::R => m.r = value,
            Param::L => m.l = value,
        }
        m
    }

    pub fn get(&self, p: Param) -> f64 {
        match p {
            Param::N => self.n,
            Param::Z => self.z,
            Param::M => self.m,
            Param::R => self.r,
            Param::L => self.l,
        }
    }

    /// The paper's optimization directions for the present bound, each with how far it goes before the
    /// machine changes bound (the headroom), and the directions that do not help, with why.
    pub fn directions(&self) -> Vec<Direction> {
        let e = self.solve();
        let Ceilings { thread: t, memory: r, computation: c } = e.ceilings;
        let (m, l, z, n) = (self.m, self.l, self.z, self.n);
        let mut out = Vec::new();
        let next_of = |memory: f64, computation: f64| {
            if close(memory, computation) {
                Bound::Capacity
            } else if memory < computation {
                Bound::Memory
            } else {
                Bound::Computation
            }
        };
        match e.bound {
            Bound::Thread => {
                // More threads slide g(x) to the right until the crossing meets a flat part.
                let target = r.min(c);
                let n_star = (l + z) * target;
                out.push(Direction {
                    param: Param::N,
                    helps: true,
                    limit: Some(n_star),
                    next_bound: Some(next_of(r, c)),
                    cs_gain: Some(target / e.ms),
                    why: "the crossing rises along f(k): both MS and CS throughput grow (principles 1 and 2)".into(),
                });
                // Higher Z tilts g(x) down; the crossing stays right of π, so CS throughput grows (principle 3)
                // until π reaches f(k) and the machine becomes computation bound (only possible when n > M).
                let (limit, next, gain) = if n > m {
                    let z_star = l * m / (n - m);
                    let cs_star = m; // M lanes busy
                    (Some(z_star), Some(Bound::Computation), Some(cs_star / e.cs))
                } else {
                    // CS throughput approaches n (every thread always computing) but never a flat part.
                    (None, None, Some(n / e.cs))
                };
                out.push(Direction {
                    param: Param::Z,
                    helps: true,
                    limit,
                    next_bound: next,
                    cs_gain: gain,
                    why: "the crossing is right of π, so higher intensity raises CS throughput while MS throughput \
                          falls (principle 3)"
                        .into(),
                });
                out.push(no(Param::R, "f(k) is on its sloping part; a higher ceiling is not reached"));
                out.push(no(Param::M, "g(x) is on its sloping part; more lanes stay idle"));
            }
            Bound::Memory => {
                // Higher Z: the height stays R, CS = Z·R grows until g(x)'s slope meets δ (thread bound) or its
                // plateau M/Z falls to R (capacity, then computation bound).
                let z_thread = n / r - l;
                let z_comp = m / r;
                let (z_star, next) = if close(z_thread, z_comp) {
                    (z_thread, Bound::Capacity)
                } else if z_thread < z_comp {
                    (z_thread, Bound::Thread)
                } else {
                    // M/Z falls to R (the capacity ridge), then below it: computation bound.
                    (z_comp, Bound::Computation)
                };
                out.push(Direction {
                    param: Param::Z,
                    helps: true,
                    limit: Some(z_star),
                    next_bound: Some(next),
                    cs_gain: Some(z_star / z),
                    why: "the crossing is right of π: CS throughput Z·R grows with Z at the same MS throughput \
                          (principles 1 and 3)"
                        .into(),
                });
                let r_star = t.min(c);
                out.push(Direction {
                    param: Param::R,
                    helps: true,
                    limit: Some(r_star),
                    next_bound: Some(if close(t, c) {
                        Bound::Capacity
                    } else if t < c {
                        Bound::Thread
                    } else {
                        Bound::Computation
                    }),
                    cs_gain: Some(r_star / r),
                    why: "lifting the flat part of f(k) raises the crossing (principles 1 and 2)".into(),
                });
                out.push(no(
                    Param::N,
                    "the crossing stays on the flat part of f(k); more threads only queue for memory",
                ));
                out.push(no(Param::M, "g(x) crosses on its sloping part; more lanes stay idle"));
            }
            Bound::Computation => {
                // More lanes lift g's plateau until π meets f(k)'s plateau or the thread ceiling.
                let m_star = z * r.min(t);
                out.push(Direction {
                    param: Param::M,
                    helps: true,
                    limit: Some(m_star),
                    next_bound: Some(if close(r, t) {
                        Bound::Capacity
                    } else if r < t {
                        Bound::Memory
                    } else {
                        Bound::Thread
                    }),
                    cs_gain: Some(m_star / m),
                    why: "lifting the flat part of g(x) raises the crossing (principles 1 and 2); all M lanes are \
                          already busy, so this is the ideal state for the present machine"
                        .into(),
                });
                out.push(no(Param::Z, "the crossing is left of π: higher intensity does not raise CS throughput"));
                out.push(no(Param::N, "the extra threads wait for a lane"));
                out.push(no(Param::R, "f(k) crosses on its sloping part; memory bandwidth is left over"));
            }
            Bound::Capacity => {
                out.push(no(
                    Param::N,
                    "both systems are saturated; n matters only while it is too small to saturate both",
                ));
                for p in [Param::M, Param::R, Param::Z] {
                    out.push(no(
                        p,
                        "machine balance: raising one of M, R (and n) alone moves the bound without raising CS \
                         throughput much; tune several together",
                    ));
                }
            }
        }
        out
    }
}

fn no(param: Param, why: &str) -> Direction {
    Direction { param, helps: false, limit: None, next_bound: None, cs_gain: None, why: why.into() }
}

/// One optimization direction: raise `param`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Direction {
    pub param: Param,
    /// Whether raising the parameter raises CS throughput.
    pub helps: bool,
    /// The value (in the model's units) at which the machine changes bound; further increase does not help
    /// along this direction. `None` when the gain continues without a change of bound (or it does not help).
    pub limit: Option<f64>,
    /// The bound just beyond the limit.
    pub next_bound: Option<Bound>,
    /// CS throughput at the limit over CS throughput now (the headroom).
    pub cs_gain: Option<f64>,
    pub why: String,
}
