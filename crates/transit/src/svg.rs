//! The transit figure as a self-contained SVG: f(k) against k, g(x) against the reversed axis x = n − k, the
//! equilibrium where they cross, the transition points δ and π, and what-if overlays. A panel on the right
//! holds the legend, the machine state and what lies off the plot.
//!
//! Elements carry ids and `data-*` attributes (`#f`, `#g`, `#equilibrium` with `data-k` and `data-gbs`,
//! `#delta`, `#pi`, `.whatif`) so tests and scripts can read the figure back.

use std::fmt::Write as _;

use crate::analysis::{short, Analysis, Scenario};
use crate::model::Model;
use crate::profile::{Profile, Scale};

const W: f64 = 1060.0;
const H: f64 = 560.0;
const LEFT: f64 = 86.0;
/// Right edge of the plot; the panel is to its right.
const PLOT_RIGHT: f64 = 760.0;
const PANEL: f64 = 790.0;
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
        LEFT + (k / self.k_max) * (PLOT_RIGHT - LEFT)
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

/// Text lines of the side panel, drawn top-down from `y`; returns the y below them.
struct Panel {
    o: String,
    y: f64,
}

impl Panel {
    fn heading(&mut self, text: &str) {
        self.y += 8.0;
        let _ = writeln!(self.o, r#"<text x="{PANEL}" y="{:.1}" font-weight="bold">{}</text>"#, self.y, esc(text));
        self.y += 18.0;
    }
    fn line(&mut self, text: &str, color: &str, id: Option<&str>) {
        let id = id.map(|i| format!(r#" id="{i}""#)).unwrap_or_default();
        let _ = writeln!(self.o, r#"<text{id} x="{PANEL}" y="{:.1}" fill="{color}">{}</text>"#, self.y, esc(text));
        self.y += 16.0;
    }
    fn key(&mut self, color: &str, dashed: bool, text: &str) {
        let dash = if dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = writeln!(
            self.o,
            r#"<line x1="{PANEL}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.5"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
            self.y - 4.0,
            PANEL + 22.0,
            self.y - 4.0,
            PANEL + 28.0,
            self.y,
            esc(text)
        );
        self.y += 16.0;
    }
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
    let (x0, x1, y0, y1) = (LEFT, PLOT_RIGHT, TOP, H - BOTTOM);
    let mut panel = Panel { o: String::new(), y: TOP - 10.0 };
    let mut off_plot: Vec<(String, &str, &str)> = Vec::new();

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" data-bound="{}">"#,
        a.bound
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<defs><clipPath id="plot-area"><rect x="{x0}" y="{y0}" width="{}" height="{}"/></clipPath></defs>"#,
        x1 - x0,
        y1 - y0
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
        r##"<text id="params" x="{LEFT}" y="44" fill="#333">Z = {} {} instructions per {}-byte request, n = {} threads{per_unit}; M = {} lanes, R = {} GB/s{per_unit}, δ at {} threads</text>"##,
        short(a.z),
        a.machine.instruction.name(),
        short(a.machine.request_bytes),
        short(a.n),
        short(a.machine.lanes),
        short(a.machine.peak_gb_per_s),
        short(a.machine.knee_threads),
    );

    // Axes, grid and ticks.
    let _ = writeln!(o, r##"<g id="axes" stroke="#444" stroke-width="1">"##);
    let _ = writeln!(
        o,
        r#"<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>"#
    );
    let _ = writeln!(
        o,
        r#"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/><line x1="{x1}" y1="{y0}" x2="{x1}" y2="{y1}"/>"#
    );
    let _ = writeln!(o, "</g>");
    let _ = writeln!(o, r##"<g id="ticks" fill="#333">"##);
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
    let measured = !profile.ms.curve.is_empty();
    if measured {
        let _ = writeln!(o, r##"<g id="measured" fill="#777">"##);
        for p in &profile.ms.curve {
            let _ = writeln!(
                o,
                r#"<rect x="{:.2}" y="{:.2}" width="7" height="7"><title>measured: {} threads, {} GB/s</title></rect>"#,
                fr.px(p.threads) - 3.5,
                fr.py(p.gb_per_s) - 3.5,
                short(p.threads),
                short(p.gb_per_s)
            );
        }
        let _ = writeln!(o, "</g>");
        if profile.ms.curve.iter().any(|p| p.threads > k_max) {
            off_plot.push(("measured points beyond n are not shown".into(), "#777", "measured-off"));
        }
    }
    // What-if overlays under the base curves.
    for (i, s) in a.what_if.iter().enumerate() {
        overlay(&mut o, &fr, i, s, base);
    }
    polyline(&mut o, &fr, &f_points(base, &fr), &format!(r#"id="f" stroke="{F_COLOR}" stroke-width="2.5""#));
    polyline(&mut o, &fr, &g_points(base, &fr), &format!(r#"id="g" stroke="{G_COLOR}" stroke-width="2.5""#));
    let _ = writeln!(o, "</g>");

    // Transition points: on the plot when they fall on it, in the panel when not.
    let (dk, dr) = base.delta();
    if dk <= k_max {
        let (x, y) = (fr.px(dk), fr.py(gbs(dr)));
        let (tx, ty, anchor) = if x > x1 - 140.0 { (x - 8.0, y - 10.0, "end") } else { (x + 8.0, y + 18.0, "start") };
        let _ = writeln!(
            o,
            r##"<circle id="delta" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{F_COLOR}" stroke-width="2"/><text x="{tx:.2}" y="{ty:.2}" text-anchor="{anchor}" fill="{F_COLOR}"><tspan font-weight="bold">δ</tspan> <tspan font-size="10">({}, {})</tspan></text>"##,
            short(dk),
            short(gbs(dr))
        );
    } else {
        off_plot.push((format!("δ at k = {} > n: f(k) is still rising", short(dk)), F_COLOR, "delta"));
    }
    let (pm, pg) = base.pi();
    if n >= pm && gbs(pg) <= y_max {
        let (x, y) = (fr.px(n - pm), fr.py(gbs(pg)));
        let (tx, anchor) = if x > x1 - 160.0 { (x - 8.0, "end") } else { (x + 8.0, "start") };
        let _ = writeln!(
            o,
            r##"<circle id="pi" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{G_COLOR}" stroke-width="2"/><text x="{tx:.2}" y="{:.2}" text-anchor="{anchor}" fill="{G_COLOR}"><tspan font-weight="bold">π</tspan> <tspan font-size="10">(x = {}, {})</tspan></text>"##,
            y - 9.0,
            short(pm),
            short(gbs(pg))
        );
    } else if n >= pm {
        off_plot.push((
            format!("π at x = {}: g's plateau M/Z = {} GB/s is above the plot", short(pm), short(gbs(pg))),
            G_COLOR,
            "pi",
        ));
    } else {
        off_plot.push((format!("π at x = M = {} > n: g(x) never flattens", short(pm)), G_COLOR, "pi"));
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
            r#"<line id="capacity-range" x1="{:.2}" y1="{ey:.2}" x2="{:.2}" y2="{ey:.2}" stroke="{EQ_COLOR}" stroke-width="6" stroke-opacity="0.45"/>"#,
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

    // The panel: legend, state, what-ifs, what is off the plot.
    panel.heading("Legend");
    panel.key(F_COLOR, false, "f(k): memory-system supply");
    panel.key(G_COLOR, false, "g(x): demand of the CS");
    for (i, s) in a.what_if.iter().enumerate() {
        panel.key(WHATIF_COLORS[i % WHATIF_COLORS.len()], true, &format!("what if {}", s.label));
    }
    if measured {
        let _ = writeln!(
            panel.o,
            r##"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="#777"/><text x="{:.1}" y="{:.1}">measured MS throughput</text>"##,
            PANEL + 7.5,
            panel.y - 8.0,
            PANEL + 28.0,
            panel.y
        );
        panel.y += 16.0;
    }
    panel.heading("Machine state");
    panel.line(&format!("{} bound", a.bound), EQ_COLOR, Some("bound-label"));
    panel.line(&format!("k = {} threads in the MS", short(e.k)), EQ_COLOR, None);
    panel.line(&format!("x = {} threads in the CS", short(e.x)), EQ_COLOR, None);
    panel.line(&format!("MS {} GB/s{per_unit}", short(a.ms_gb_per_s_per_unit)), EQ_COLOR, None);
    panel.line(&format!("CS {} Ginstr/s{per_unit}", short(a.cs_ginstr_per_s_per_unit)), EQ_COLOR, None);
    if e.k_range.1 > e.k_range.0 {
        panel.line(&format!("any k in {}..{} balances", short(e.k_range.0), short(e.k_range.1)), EQ_COLOR, None);
    }
    if !a.what_if.is_empty() {
        panel.heading("What if");
        for (i, s) in a.what_if.iter().enumerate() {
            let gain = if a.cs_throughput > 0.0 { s.cs_throughput / a.cs_throughput } else { 0.0 };
            panel.line(
                &format!("{}: {} bound, CS ×{}", s.label, s.bound, short(gain)),
                WHATIF_COLORS[i % WHATIF_COLORS.len()],
                None,
            );
        }
    }
    if !off_plot.is_empty() {
        panel.heading("Off the plot");
        for (text, color, id) in &off_plot {
            panel.line(text, color, Some(id));
        }
    }
    o.push_str(&panel.o);
    let _ = writeln!(o, "</svg>");
    o
}

fn overlay(o: &mut String, fr: &Frame, i: usize, s: &Scenario, base: &Model) {
    let color = WHATIF_COLORS[i % WHATIF_COLORS.len()];
    let m = &s.model;
    let _ =
        writeln!(o, r#"<g class="whatif" id="whatif-{i}" data-label="{}" data-bound="{}">"#, esc(&s.label), s.bound);
    let attrs = |class: &str| format!(r#"class="{class}" stroke="{color}" stroke-width="2" stroke-dasharray="6 4""#);
    if m.r != base.r || m.l != base.l {
        polyline(o, fr, &f_points(m, fr), &attrs("f"));
    }
    if m.n != base.n || m.z != base.z || m.m != base.m {
        polyline(o, fr, &g_points(m, fr), &attrs("g"));
    }
    let e = &s.equilibrium;
    let (x, y) = (fr.px(e.k), fr.py(fr.gbs(e.ms)));
    let _ = writeln!(
        o,
        r#"<circle class="equilibrium" cx="{x:.2}" cy="{y:.2}" r="5" fill="white" stroke="{color}" stroke-width="2.5" data-k="{}" data-gbs="{}"/>"#,
        e.k,
        fr.gbs(e.ms)
    );
    let _ = writeln!(o, "</g>");
}
