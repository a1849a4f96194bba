//! Reference functions missing from Rust's standard library, and error bookkeeping for results that are sums
//! of approximated terms.

/// The error function, to about 1e-16 relative: `2/sqrt(pi) * exp(-x^2) * sum x^(2n+1) 2^n / (2n+1)!!`, a
/// series of positive terms (no cancellation); `±1` beyond |x| = 6 (erfc(6) < 3e-17).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() > 6.0 {
        return x.signum();
    }
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    loop {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
        if term.abs() <= sum.abs() * 1e-17 {
            break;
        }
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum
}

/// `ln |Gamma(x)|`, to about 1e-15 absolute for moderate arguments: the recurrence moves the argument
/// above 15, then Stirling's series; the reflection formula handles negative arguments.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY;
    }
    if x < 0.5 {
        // Gamma(x) Gamma(1-x) = pi / sin(pi x)
        let s = (std::f64::consts::PI * x).sin().abs();
        return (std::f64::consts::PI / s).ln() - lgamma(1.0 - x);
    }
    let mut y = x;
    let mut shift = 0.0;
    let mut prod = 1.0;
    while y < 15.0 {
        prod *= y;
        if prod > 1e280 {
            shift += prod.ln();
            prod = 1.0;
        }
        y += 1.0;
    }
    shift += prod.ln();
    let inv = 1.0 / y;
    let inv2 = inv * inv;
    // Bernoulli terms B_2k / (2k (2k-1) y^(2k-1))
    let series = inv
        * (1.0 / 12.0
            + inv2
                * (-1.0 / 360.0
                    + inv2
                        * (1.0 / 1260.0
                            + inv2 * (-1.0 / 1680.0 + inv2 * (1.0 / 1188.0 + inv2 * (-691.0 / 360360.0))))));
    (y - 0.5) * y.ln() - y + 0.5 * (2.0 * std::f64::consts::PI).ln() + series - shift
}

/// A value computed as a sum of terms, each known to within a relative error: the expected sum and the
/// absolute tolerance a device result may differ by (the terms' errors plus the rounding of each addition
/// in `precision`, whose unit roundoff is `u`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Approx {
    pub value: f64,
    pub err: f64,
}

impl Approx {
    pub fn exact(value: f64) -> Approx {
        Approx { value, err: 0.0 }
    }

    /// A term known to within `rel` relative plus `abs` absolute error.
    pub fn term(value: f64, rel: f64, abs: f64) -> Approx {
        Approx { value, err: value.abs() * rel + abs }
    }

    /// Adds two approximations; the addition itself is rounded with unit roundoff `u`.
    pub fn add(self, other: Approx, u: f64) -> Approx {
        let value = self.value + other.value;
        Approx { value, err: self.err + other.err + (self.value.abs() + other.value.abs()) * u }
    }

    /// The tolerance for comparing (absolute, with a floor so exact zeros compare).
    pub fn tol(&self) -> crate::compare::Tol {
        crate::compare::Tol::Abs(self.err.max(f64::MIN_POSITIVE))
    }
}

/// Unit roundoff of f32 / f64.
pub const U32: f64 = f32::EPSILON as f64 / 2.0;
pub const U64: f64 = f64::EPSILON / 2.0;

/// Sums approximations left to right with unit roundoff `u`.
pub fn sum(terms: &[Approx], u: f64) -> Approx {
    let mut it = terms.iter();
    let first = it.next().copied().unwrap_or_default();
    it.fold(first, |acc, &t| acc.add(t, u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_lgamma_values() {
        assert!((erf(0.5) - 0.5204998778130465).abs() < 3e-16, "{}", erf(0.5));
        assert!((erf(-1.5) + 0.9661051464753108).abs() < 1e-15);
        assert!((erf(3.0) - 0.9999779095030014).abs() < 1e-15);
        assert!((lgamma(0.5) - 0.5723649429247001).abs() < 1e-14);
        assert!((lgamma(10.0) - 12.801827480081469).abs() < 1e-13);
        assert!(lgamma(1.0).abs() < 1e-14 && lgamma(2.0).abs() < 1e-14);
        assert!((lgamma(-0.5) - 1.2655121234846454).abs() < 1e-14);
        assert!((lgamma(100.5) - 361.4355404677776).abs() < 1e-11);
    }
}
