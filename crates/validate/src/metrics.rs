//! The paper's two accuracy measures (ThreadFuser, Section IV): mean absolute error and Pearson's correlation.

/// Mean of `|p - g|` over the pairs; `None` when there are none.
pub fn mae(pairs: &[(f64, f64)]) -> Option<f64> {
    (!pairs.is_empty()).then(|| pairs.iter().map(|(p, g)| (p - g).abs()).sum::<f64>() / pairs.len() as f64)
}

/// Mean of `|p - g| / g`: the error relative to the ground truth (memory transactions span orders of
/// magnitude, so the paper reports their error in percent of the hardware's value). Pairs with `g == 0` are
/// left out.
pub fn relative_mae(pairs: &[(f64, f64)]) -> Option<f64> {
    let r: Vec<(f64, f64)> = pairs.iter().filter(|(_, g)| *g != 0.0).map(|(p, g)| ((p - g) / g, 0.0)).collect();
    mae(&r)
}

/// Pearson's correlation coefficient of the predictions with the ground truth; `None` with fewer than two
/// pairs or when either side is constant (the coefficient is undefined).
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as f64;
    if pairs.len() < 2 {
        return None;
    }
    let (mp, mg) = (pairs.iter().map(|x| x.0).sum::<f64>() / n, pairs.iter().map(|x| x.1).sum::<f64>() / n);
    let (mut spg, mut spp, mut sgg) = (0.0, 0.0, 0.0);
    for (p, g) in pairs {
        spg += (p - mp) * (g - mg);
        spp += (p - mp) * (p - mp);
        sgg += (g - mg) * (g - mg);
    }
    (spp > 0.0 && sgg > 0.0).then(|| spg / (spp * sgg).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn mae_by_hand() {
        assert_eq!(mae(&[]), None);
        assert!(close(mae(&[(1.0, 0.5), (0.25, 0.5), (0.7, 0.7)]).unwrap(), 0.25));
        // Relative: |2-1|/1 = 1, |3-4|/4 = 0.25, a zero ground truth is left out.
        assert!(close(relative_mae(&[(2.0, 1.0), (3.0, 4.0), (5.0, 0.0)]).unwrap(), 0.625));
    }

    #[test]
    fn pearson_by_hand() {
        // Perfectly linear (any positive slope and offset): 1; reversed: -1.
        let up: Vec<(f64, f64)> = (0..5).map(|i| (2.0 * i as f64 + 3.0, i as f64)).collect();
        assert!(close(pearson(&up).unwrap(), 1.0));
        let down: Vec<(f64, f64)> = (0..5).map(|i| (-(i as f64), i as f64)).collect();
        assert!(close(pearson(&down).unwrap(), -1.0));
        // x = 1,2,3, y = 1,3,2: r = 0.5 (cov 1/3 ... computed by hand: sxy = 1, sxx = 2, syy = 2).
        assert!(close(pearson(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)]).unwrap(), 0.5));
        assert_eq!(pearson(&[(1.0, 1.0)]), None);
        assert_eq!(pearson(&[(1.0, 1.0), (1.0, 2.0)]), None, "a constant side has no correlation");
    }
}
