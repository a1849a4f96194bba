//! The transit figure as a self-contained SVG: f(k) against k, g(x) against the reversed axis x = n − k, the
//! equilibrium where they cross, the transition points δ and π, and what-if overlays.
//!
//! Elements carry ids and `data-*` attributes (`#f`, `#g`, `#equilibrium` with `data-k` and `data-gbs`,
//! `#delta`, `#pi`, `.whatif`) so tests and scripts can read the figure back.

use std::fmt::Write as _;

use crate::analysis::{short, Analysis, Scenario};
use crate::model::Model;
use crate::profile::{Profile, Scale};

const W: f64 = 820.0;
const H: f64 = 560.0;
const LEFT: f64 = 86.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 96.0;
const BOTTOM: f64 = 70.0;

const F_COLOR: &str = "#1f77b4";
const G_COLOR: &str = "#e8710a";
const EQ_COLOR: &str = "#d62728";
const WHATIF_COLORS: [&str; 4] = ["#2ca02c", "#9467bd", "#8c564b", "#e377c2"];

struct Frame {
    k_max: f64,
    y_max: f64,
    scale: Scale,
}

impl Frame {
    fn px(&self, k: f64) -> f64 {
        LEFT + (k / self.k_max) * (W - LEFT - RIGHT)
    }
    fn py(&self, gbs: f64) -> f64 {
        H - BOTTOM - (gbs / self.y_max) * (H - TOP - BOTTOM)
    }
    /// Requests per cycle → GB/s per unit.
    fn gbs(&self, req: f64) -> f64 {
        self.scale.bytes_per_s(req) / 1e9
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A step of 1, 2 or 5 × 10^e that cuts `max` into about five pieces.
fn nice_step(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let raw = max / 5.0;
    let e = 10f64.powf(raw.log10().floor());
    let m = raw / e;
    let f = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    f * e
}

fn f_points(m: &Model, fr: &Frame) -> Vec<(f64, f64)> {
    let (dk, r) = m.delta();
    let mut pts = vec![(0.0, 0.0)];
    if dk < fr.k_max {
        pts.push((dk, r));
    }
    pts.push((fr.k_max, m.f(fr.k_max)));
    pts.into_iter().map(|(k, y)| (k, fr.gbs(y))).collect()
}

/// g(n − k) for k in [0, n].
fn g_points(m: &Model, fr: &Frame) -> Vec<(f64, f64)> {
    let n = m.n;
    let mut pts = vec![(0.0, m.g(n))];
    if n > m.m {
        pts.push((n - m.m, m.m / m.z));
    }
    pts.push((n, 0.0));
    pts.into_iter().map(|(k, y)| (k, fr.gbs(y))).collect()
}

fn polyline(o: &mut String, fr: &Frame, pts: &[(f64, f64)], attrs: &str) {
    let coords: Vec<String> = pts.iter().map(|&(k, y)| format!("{:.2},{:.2}", fr.px(k), fr.py(y))).collect();
    let _ = writeln!(o, r#"<polyline points="{}" fill="none" {attrs}/>"#, coords.join(" "));
}

/// Renders the figure of `a` (made from `profile`).
pub fn render(a: &Analysis, profile: &Profile) -> String {
    let base = &a.model;
    let scale = a.scale;
    let gbs = |req: f64| scale.bytes_per_s(req) / 1e9;
    let mut models: Vec<&Model> = vec![base];
    models.extend(a.what_if.iter().map(|s| &s.model));
    let k_max = models.iter().map(|m| m.n).fold(0.0, f64::max).max(1e-9);
    // The y range shows every ceiling that matters; a g plateau far above the memory ceiling is cut off
    // (and said so) rather than squashing the rest.
    let r_max = models.iter().map(|m| gbs(m.r)).fold(0.0, f64::max);
    let mut y_data: f64 = 0.0;
    for m in &models {
        let e = m.solve();
        y_data = y_data.max(gbs(m.r)).max(gbs(e.ms)).max(gbs(m.g(m.n)).min(2.5 * r_max));
    }
    for p in &profile.ms.curve {
        if p.threads <= k_max {
            y_data = y_data.max(p.gb_per_s);
        }
    }
    let y_step = nice_step(y_data * 1.12);
    let y_max = ((y_data * 1.12) / y_step).ceil().max(1.0) * y_step;
    let fr = Frame { k_max, y_max, scale };
    let unit = &a.machine.unit_name;
    let per_unit = if a.machine.units > 1 { format!(" per {unit}") } else { String::new() };

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" data-bound="{}">"#,
        a.bound
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<defs><clipPath id="plot-area"><rect x="{LEFT}" y="{TOP}" width="{}" height="{}"/></clipPath></defs>"#,
        W - LEFT - RIGHT,
        H - TOP - BOTTOM
    );
    // Title and parameters.
    let _ = writeln!(
        o,
        r#"<text id="title" x="{LEFT}" y="24" font-size="16" font-weight="bold">Transit figure: {} — {} bound</text>"#,
        esc(&a.machine.name),
        a.bound
    );
    let _ = writeln!(
        o,
        r##"<text id="params" x="{LEFT}" y="44" fill="#333">Z = {} {} instr/request ({} B), n = {} threads{per_unit}; M = {} lanes, R = {} GB/s{per_unit}, δ at {} threads</text>"##,
        short(a.z),
        a.machine.instruction.name(),
        short(a.machine.request_bytes),
        short(a.n),
        short(a.machine.lanes),
        short(a.machine.peak_gb_per_s),
        short(a.machine.knee_threads),
    );

    // Axes, grid and ticks.
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let _ = writeln!(o, r##"<g id="axes" stroke="#444" stroke-width="1">"##);
    let _ = writeln!(
        o,
        r#"<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>"#
    );
    let _ = writeln!(o, r#"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/>"#);
    let _ = writeln!(o, "</g>");
    let _ = writeln!(o, r##"<g id="ticks" fill="#333">"##);
    let k_step = nice_step(k_max);
    let mut t = 0.0;
    while t <= k_max * (1.0 + 1e-9) {
        let x = fr.px(t);
        let _ = writeln!(
            o,
            r##"<line x1="{x:.2}" y1="{y1}" x2="{x:.2}" y2="{:.2}" stroke="#444"/><text x="{x:.2}" y="{:.2}" text-anchor="middle">{}</text>"##,
            y1 + 5.0,
            y1 + 18.0,
            short(t)
        );
        t += k_step;
    }
    // The reversed x axis on top, for the base n.
    let n = base.n;
    let mut t = 0.0;
    while t <= n * (1.0 + 1e-9) && n > 0.0 {
        let x = fr.px(n - t);
        let _ = writeln!(
            o,
            r##"<line x1="{x:.2}" y1="{y0}" x2="{x:.2}" y2="{:.2}" stroke="#444"/><text x="{x:.2}" y="{:.2}" text-anchor="middle">{}</text>"##,
            y0 - 5.0,
            y0 - 9.0,
            short(t)
        );
        t += nice_step(n);
    }
    let mut t = 0.0;
    while t <= y_max * (1.0 + 1e-9) {
        let y = fr.py(t);
        let _ = writeln!(
            o,
            r##"<line x1="{x0}" y1="{y:.2}" x2="{x1}" y2="{y:.2}" stroke="#e4e4e4"/><text x="{:.2}" y="{:.2}" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            y + 4.0,
            short(t)
        );
        t += y_step;
    }
    let _ = writeln!(o, "</g>");
    let _ = writeln!(
        o,
        r#"<text id="k-label" x="{:.1}" y="{:.1}" text-anchor="middle">k: threads in the memory system{per_unit} →</text>"#,
        (x0 + x1) / 2.0,
        H - 22.0
    );
    let _ = writeln!(
        o,
        r#"<text id="x-label" x="{:.1}" y="{:.1}" text-anchor="middle">← x = n − k: threads in the computation system{per_unit}</text>"#,
        (x0 + x1) / 2.0,
        y0 - 26.0
    );
    let _ = writeln!(
        o,
        r#"<text id="y-label" transform="translate(22,{:.1}) rotate(-90)" text-anchor="middle">memory-system throughput (GB/s{per_unit})</text>"#,
        (y0 + y1) / 2.0
    );

    let _ = writeln!(o, r#"<g clip-path="url(#plot-area)">"#);
    // Measured points of the MS curve, when the profile has them.
    if !profile.ms.curve.is_empty() {
        let _ = writeln!(o, r##"<g id="measured" fill="#888">"##);
        for p in &profile.ms.curve {
            let _ = writeln!(
                o,
                r#"<rect x="{:.2}" y="{:.2}" width="6" height="6"><title>measured: {} threads, {} GB/s</title></rect>"#,
                fr.px(p.threads) - 3.0,
                fr.py(p.gb_per_s) - 3.0,
                short(p.threads),
                short(p.gb_per_s)
            );
        }
        let _ = writeln!(o, "</g>");
    }
    // What-if overlays under the base curves.
    for (i, s) in a.what_if.iter().enumerate() {
        overlay(&mut o, &fr, i, s, base);
    }
    polyline(&mut o, &fr, &f_points(base, &fr), &format!(r#"id="f" stroke="{F_COLOR}" stroke-width="2.5""#));
    polyline(&mut o, &fr, &g_points(base, &fr), &format!(r#"id="g" stroke="{G_COLOR}" stroke-width="2.5""#));
    let _ = writeln!(o, "</g>");

    // Transition points.
    let (dk, dr) = base.delta();
    if dk <= k_max {
        let (x, y) = (fr.px(dk), fr.py(gbs(dr)));
        let _ = writeln!(
            o,
            r##"<circle id="delta" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{F_COLOR}" stroke-width="2"/><text x="{:.2}" y="{:.2}" fill="{F_COLOR}" font-weight="bold">δ</text><text x="{:.2}" y="{:.2}" fill="{F_COLOR}" font-size="10">({}, {})</text>"##,
            x + 7.0,
            y - 8.0,
            x + 18.0,
            y - 8.0,
            short(dk),
            short(gbs(dr))
        );
    } else {
        let _ = writeln!(
            o,
            r#"<text id="delta" x="{:.2}" y="{:.2}" text-anchor="end" fill="{F_COLOR}">δ at k = {} → (beyond n)</text>"#,
            x1 - 4.0,
            fr.py(fr.gbs(base.f(k_max))).max(y0 + 14.0) + 16.0,
            short(dk)
        );
    }
    let (pm, pg) = base.pi();
    if n > pm {
        let k = n - pm;
        let (x, y) = (fr.px(k), fr.py(gbs(pg)));
        if gbs(pg) <= y_max {
            let _ = writeln!(
                o,
                r##"<circle id="pi" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{G_COLOR}" stroke-width="2"/><text x="{:.2}" y="{:.2}" fill="{G_COLOR}" font-weight="bold">π</text><text x="{:.2}" y="{:.2}" fill="{G_COLOR}" font-size="10">(x = {}, {})</text>"##,
                x + 7.0,
                y - 8.0,
                x + 18.0,
                y - 8.0,
                short(pm),
                short(gbs(pg))
            );
        } else {
            let _ = writeln!(
                o,
                r#"<text id="pi" x="{:.2}" y="{:.2}" fill="{G_COLOR}">π (x = {}): g(x) plateau M/Z = {} GB/s, above the top ↑</text>"#,
                x.min(x1 - 300.0).max(x0 + 4.0),
                y0 + 16.0,
                short(pm),
                short(gbs(pg))
            );
        }
    } else {
        let _ = writeln!(
            o,
            r#"<text id="pi" x="{:.2}" y="{:.2}" text-anchor="end" fill="{G_COLOR}">π at x = M = {} &gt; n: g(x) never flattens</text>"#,
            x1 - 4.0,
            y0 + 16.0,
            short(pm)
        );
    }

    // The equilibrium.
    let e = &a.equilibrium;
    let (ex, ey) = (fr.px(e.k), fr.py(gbs(e.ms)));
    let _ = writeln!(
        o,
        r##"<g id="equilibrium-guides" stroke="{EQ_COLOR}" stroke-dasharray="4 3" stroke-width="1"><line x1="{ex:.2}" y1="{ey:.2}" x2="{ex:.2}" y2="{y1}"/><line x1="{x0}" y1="{ey:.2}" x2="{ex:.2}" y2="{ey:.2}"/></g>"##
    );
    if e.k_range.1 > e.k_range.0 {
        let _ = writeln!(
            o,
            r#"<line id="capacity-range" x1="{:.2}" y1="{ey:.2}" x2="{:.2}" y2="{ey:.2}" stroke="{EQ_COLOR}" stroke-width="5" stroke-opacity="0.5"/>"#,
            fr.px(e.k_range.0),
            fr.px(e.k_range.1)
        );
    }
    let _ = writeln!(
        o,
        r#"<circle id="equilibrium" cx="{ex:.2}" cy="{ey:.2}" r="6" fill="{EQ_COLOR}" data-k="{}" data-x="{}" data-gbs="{}" data-bound="{}"/>"#,
        e.k,
        e.x,
        gbs(e.ms),
        e.bound
    );
    let label_left = ex > (x0 + x1) / 2.0;
    let (lx, anchor) = if label_left { (ex - 10.0, "end") } else { (ex + 10.0, "start") };
    let ly = if ey > y0 + 60.0 { ey - 30.0 } else { ey + 24.0 };
    let _ = writeln!(
        o,
        r#"<text id="equilibrium-label" x="{lx:.2}" y="{ly:.2}" text-anchor="{anchor}" fill="{EQ_COLOR}"><tspan font-weight="bold">{} bound</tspan><tspan x="{lx:.2}" dy="14">k = {}, x = {}; MS {} GB/s, CS {} Ginstr/s{per_unit}</tspan></text>"#,
        a.bound,
        short(e.k),
        short(e.x),
        short(a.ms_gb_per_s_per_unit),
        short(a.cs_ginstr_per_s_per_unit)
    );

    // Legend.
    let mut items: Vec<(String, String, bool)> = vec![
        (F_COLOR.into(), "f(k): memory-system supply".into(), false),
        (G_COLOR.into(), "g(x): demand of the computation system".into(), false),
    ];
    for (i, s) in a.what_if.iter().enumerate() {
        items.push((
            WHATIF_COLORS[i % WHATIF_COLORS.len()].into(),
            format!("what if {}: {} bound", s.label, s.bound),
            true,
        ));
    }
    let lx = x0 + 10.0;
    let mut ly = y0 + 16.0;
    let box_w = 300.0;
    let _ = writeln!(
        o,
        r##"<g id="legend"><rect x="{:.1}" y="{:.1}" width="{box_w}" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#ccc"/>"##,
        lx - 6.0,
        ly - 12.0,
        items.len() as f64 * 16.0 + 6.0
    );
    for (color, text, dashed) in &items {
        let dash = if *dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = writeln!(
            o,
            r#"<line x1="{lx:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5"{dash}/><text x="{:.1}" y="{ly:.1}">{}</text>"#,
            ly - 4.0,
            lx + 22.0,
            ly - 4.0,
            lx + 28.0,
            esc(text)
        );
        ly += 16.0;
    }
    let _ = writeln!(o, "</g>");
    let _ = writeln!(o, "</svg>");
    o
}

fn overlay(o: &mut String, fr: &Frame, i: usize, s: &Scenario, base: &Model) {
    let color = WHATIF_COLORS[i % WHATIF_COLORS.len()];
    let m = &s.model;
    let _ =
        writeln!(o, r#"<g class="whatif" id="whatif-{i}" data-label="{}" data-bound="{}">"#, esc(&s.label), s.bound);
    let attrs = format!(r#"class="{{}}" stroke="{color}" stroke-width="2" stroke-dasharray="6 4""#);
    if m.r != base.r || m.l != base.l {
        polyline(o, fr, &f_points(m, fr), &attrs.replace("{}", "f"));
    }
    if m.n != base.n || m.z != base.z || m.m != base.m {
        polyline(o, fr, &g_points(m, fr), &attrs.replace("{}", "g"));
    }
    let e = &s.equilibrium;
    let (x, y) = (fr.px(e.k), fr.py(fr.gbs(e.ms)));
    let _ = writeln!(
        o,
        r#"<circle class="equilibrium" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{color}" stroke-width="2.5" data-k="{}" data-gbs="{}"/>"#,
        e.k,
        fr.gbs(e.ms)
    );
    let _ = writeln!(
        o,
        r#"<text x="{:.2}" y="{:.2}" fill="{color}" font-size="11">{}</text>"#,
        x + 8.0,
        y + 16.0,
        esc(&s.label)
    );
    let _ = writeln!(o, "</g>");
}
