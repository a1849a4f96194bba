//! The paper's Fig. 5 as SVG: prediction against ground truth, one colour per optimization level, the diagonal
//! drawn. Hand-written: a scatter plot is a few dozen elements.

use std::fmt::Write;

/// One series: a label and its (ground truth, prediction) points.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Copy)]
pub enum Scale {
    /// From `lo` to `hi`, ticks every `step`, values shown as percentages when `percent`.
    Linear { lo: f64, hi: f64, step: f64, percent: bool },
    /// Base-10 logarithmic from `lo` to `hi` (both > 0), ticks at powers of two.
    Log { lo: f64, hi: f64 },
}

impl Scale {
    fn frac(self, v: f64) -> f64 {
        match self {
            Scale::Linear { lo, hi, .. } => (v - lo) / (hi - lo),
            Scale::Log { lo, hi } => (v.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln()),
        }
    }

    fn ticks(self) -> Vec<(f64, String)> {
        match self {
            Scale::Linear { lo, hi, step, percent } => {
                let n = ((hi - lo) / step).round() as usize;
                (0..=n)
                    .map(|i| {
                        let v = lo + step * i as f64;
                        (v, if percent { format!("{:.0}%", v * 100.0) } else { format!("{v}") })
                    })
                    .collect()
            }
            Scale::Log { lo, hi } => {
                let mut v = 2f64.powf(lo.log2().ceil());
                let mut out = Vec::new();
                while v <= hi * 1.0001 {
                    out.push((v, format!("{v}")));
                    v *= 2.0;
                }
                out
            }
        }
    }

    /// A log scale over powers of two that holds every value.
    pub fn log_for(values: impl Iterator<Item = f64>) -> Scale {
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        for v in values.filter(|v| *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi == 0.0 {
            return Scale::Log { lo: 1.0, hi: 32.0 };
        }
        let lo = 2f64.powf(lo.log2().floor()).min(1.0);
        let hi = 2f64.powf(hi.log2().ceil()).max(lo * 2.0);
        Scale::Log { lo, hi }
    }
}

const COLOURS: [&str; 6] = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The plot: ground truth on x, prediction on y, both on `scale`.
pub fn scatter(title: &str, x_label: &str, y_label: &str, scale: Scale, series: &[Series]) -> String {
    let (w, h, left, right, top, bottom) = (560.0, 520.0, 70.0, 150.0, 40.0, 60.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let px = |v: f64| left + scale.frac(v).clamp(0.0, 1.0) * pw;
    let py = |v: f64| top + ph - scale.frac(v).clamp(0.0, 1.0) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        left + pw / 2.0,
        esc(title)
    );
    for (v, label) in scale.ticks() {
        let (x, y) = (px(v), py(v));
        let _ = writeln!(s, r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/>"##, top + ph);
        let _ = writeln!(s, r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/>"##, left + pw);
        let _ = writeln!(s, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#, top + ph + 16.0);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#, left - 6.0, y + 4.0);
    }
    let _ = writeln!(s, r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##);
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{top}" stroke="#888" stroke-dasharray="4 3"/>"##,
        top + ph,
        left + pw
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        h - 18.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        top + ph / 2.0,
        esc(y_label)
    );
    for (i, series) in series.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        for &(g, p) in &series.points {
            let _ =
                writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{c}" fill-opacity="0.75"/>"#, px(g), py(p));
        }
        let ly = top + 10.0 + 20.0 * i as f64;
        let lx = left + pw + 16.0;
        let _ = writeln!(s, r#"<circle cx="{lx}" cy="{ly}" r="5" fill="{c}"/>"#);
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, lx + 10.0, ly + 4.0, esc(&series.label));
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_diagonal_land_where_they_should() {
        let scale = Scale::Linear { lo: 0.0, hi: 1.0, step: 0.25, percent: true };
        let svg =
            scatter("t", "x", "y", scale, &[Series { label: "-O1".into(), points: vec![(0.5, 0.5), (1.0, 0.0)] }]);
        // Plot area 70..410 x 40..460: (0.5, 0.5) at its centre, (1, 0) at the bottom right.
        assert!(svg.contains(r#"cx="240.0" cy="250.0""#), "{svg}");
        assert!(svg.contains(r#"cx="410.0" cy="460.0""#));
        assert!(svg.contains(">100%<") && svg.contains(">-O1<"));
        let log = Scale::log_for([1.5, 6.0].into_iter());
        assert!(matches!(log, Scale::Log { lo, hi } if lo == 1.0 && hi == 8.0));
        assert_eq!(log.ticks().len(), 4);
    }
}
