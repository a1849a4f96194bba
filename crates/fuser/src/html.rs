//! A self-contained HTML report: the tables of the terminal report and SVG charts drawn here (per-function
//! efficiency, the warp-size sweep, memory divergence). No scripts, no external resources.

use std::fmt::Write as _;

use crate::memory::Segment;
use crate::report::Report;

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "&ndash;".into(), |v| format!("{:.1}%", v * 100.0))
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "&ndash;".into(), |v| format!("{v:.2}"))
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    let first = s.len() % 3;
    for (i, c) in s.chars().enumerate() {
        if i > 0 && i >= first && (i - first).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:.9em}td,th{padding:.2em .6em;border-bottom:1px solid #eee}\
th{text-align:left;background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.summary td:first-child{font-weight:600}svg{display:block;margin:1em 0}\
svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#222}.note{color:#666;font-size:.85em}";

/// Horizontal bars: `(label, value in 0..=max)`.
fn bar_chart(title: &str, rows: &[(String, f64)], max: f64, fmt: &dyn Fn(f64) -> String) -> String {
    let label_w = 260.0;
    let bar_w = 420.0;
    let row_h = 20.0;
    let h = 30.0 + row_h * rows.len() as f64;
    let w = label_w + bar_w + 80.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" \
         aria-label=\"{}\"><text x=\"0\" y=\"14\" font-weight=\"600\">{}</text>",
        escape(title),
        escape(title)
    );
    for (i, (label, v)) in rows.iter().enumerate() {
        let y = 24.0 + row_h * i as f64;
        let len = if max > 0.0 { (v / max).clamp(0.0, 1.0) * bar_w } else { 0.0 };
        let short: String = if label.chars().count() > 40 {
            label.chars().take(39).chain(std::iter::once('…')).collect()
        } else {
            label.clone()
        };
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{bar_w}\" height=\"{}\" fill=\"#eef\"/>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{len:.1}\" height=\"{}\" fill=\"#4a7bd0\"/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            label_w - 6.0,
            y + 13.0,
            escape(&short),
            row_h - 4.0,
            row_h - 4.0,
            label_w + bar_w + 6.0,
            y + 13.0,
            escape(&fmt(*v))
        );
    }
    s.push_str("</svg>");
    s
}

/// Efficiency against warp size, one point per report.
fn sweep_chart(reports: &[Report]) -> String {
    let (w, h) = (520.0, 260.0);
    let (x0, y0, x1, y1) = (50.0, 20.0, w - 20.0, h - 40.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\" \
         aria-label=\"SIMT efficiency by warp size\">"
    );
    // Axes and grid.
    for k in 0..=4 {
        let v = k as f64 / 4.0;
        let y = y1 - v * (y1 - y0);
        let _ = write!(
            s,
            "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}%</text>",
            x0 - 6.0,
            y + 4.0,
            k * 25
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{x0}\" y1=\"{y1}\" x2=\"{x1}\" y2=\"{y1}\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">warp size</text>",
        (x0 + x1) / 2.0,
        h - 6.0
    );
    let n = reports.len().max(1);
    let step = (x1 - x0) / n as f64;
    let mut pts = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        let x = x0 + step * (i as f64 + 0.5);
        let e = r.simt_efficiency.unwrap_or(0.0);
        let y = y1 - e * (y1 - y0);
        pts.push(format!("{x:.1},{y:.1}"));
        let _ = write!(
            s,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#d0574a\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{:.1}%</text>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            y - 8.0,
            e * 100.0,
            y1 + 16.0,
            r.warp_size
        );
    }
    let _ = write!(s, "<polyline points=\"{}\" fill=\"none\" stroke=\"#d0574a\" stroke-width=\"2\"/>", pts.join(" "));
    s.push_str("</svg>");
    s
}

/// The page. `reports` are the analyses of one trace at several warp sizes (a sweep) or one; `main` is the one
/// the tables show.
pub fn render(reports: &[Report], main: usize) -> String {
    let r = &reports[main.min(reports.len() - 1)];
    let mut o = String::new();
    let prog =
        std::iter::once(r.program.as_str()).chain(r.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lockstep analyze: {}</title>\
         <style>{STYLE}</style></head><body><h1>SIMT analysis of <code>{}</code></h1>",
        escape(&prog),
        escape(&prog)
    );
    // Summary.
    let _ = write!(o, "<table class=\"summary\">");
    let rows: Vec<(&str, String)> = vec![
        ("trace", escape(&r.trace_status)),
        ("warps", format!("{} of {} lanes ({} batching)", thousands(r.warps as u64), r.warp_size, r.batch)),
        ("SIMT threads", thousands(r.simt_threads as u64)),
        ("thread instructions", thousands(r.thread_instructions)),
        ("warp instructions", thousands(r.warp_instructions)),
        ("SIMT efficiency", pct(r.simt_efficiency)),
        ("active lanes per warp instruction", num(r.active_lanes)),
        (
            "memory divergence",
            format!(
                "{} transactions of {} bytes per warp access",
                num(r.memory.total.transactions_per_access),
                r.transaction_bytes
            ),
        ),
        (
            "skipped",
            format!(
                "{} thread instructions ({:.2}%): {} in {} system calls, {} in {} excluded calls, {} in {} \
                 spinning lock calls",
                thousands(r.skipped.total),
                r.skipped.fraction * 100.0,
                thousands(r.skipped.syscall),
                thousands(r.skipped.syscall_regions),
                thousands(r.skipped.excluded),
                thousands(r.skipped.excluded_regions),
                thousands(r.skipped.lock_spin),
                thousands(r.skipped.lock_spin_regions)
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = write!(o, "<tr><td>{k}</td><td>{v}</td></tr>");
    }
    o.push_str("</table>");
    // Charts.
    o.push_str(
        "<h2>Per-function SIMT efficiency</h2><p class=\"note\">Own instructions, callees excluded; the \
                functions with the most warp instructions.</p>",
    );
    let top: Vec<(String, f64)> = {
        let mut f: Vec<_> = r.functions.iter().filter(|f| f.warp_instructions > 0).collect();
        f.sort_by_key(|f| std::cmp::Reverse(f.warp_instructions));
        f.iter().take(20).map(|f| (f.name.clone(), f.simt_efficiency.unwrap_or(0.0))).collect()
    };
    o.push_str(&bar_chart("SIMT efficiency", &top, 1.0, &|v| format!("{:.1}%", v * 100.0)));
    o.push_str("<h2>Warp-size sweep</h2>");
    o.push_str(&sweep_chart(reports));
    o.push_str(
        "<h2>Memory divergence</h2><p class=\"note\">32 is the worst case at warp 32 with 32-byte \
                transactions; 4 (8 for 8-byte words) is perfect coalescing. <em>stack_local</em> lays every \
                SIMT thread's stack out as GPU local memory.</p>",
    );
    let segs: Vec<(String, f64)> = Segment::ALL
        .iter()
        .map(|&s| (s.name().to_string(), r.memory.get(s).transactions_per_access.unwrap_or(0.0)))
        .collect();
    let max = segs.iter().map(|s| s.1).fold(1.0, f64::max);
    o.push_str(&bar_chart("transactions per warp access", &segs, max, &|v| format!("{v:.2}")));
    // Tables.
    o.push_str(
        "<table><tr><th>segment</th><th>warp accesses</th><th>transactions</th><th>per access</th>\
                <th>loads</th><th>stores</th></tr>",
    );
    for s in Segment::ALL {
        let x = r.memory.get(s);
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            s.name(),
            thousands(x.warp_accesses),
            thousands(x.transactions),
            num(x.transactions_per_access),
            thousands(x.loads.warp_accesses),
            thousands(x.stores.warp_accesses)
        );
    }
    o.push_str("</table>");
    if reports.len() > 1 {
        o.push_str(
            "<table><tr><th>warp size</th><th>warps</th><th>warp instructions</th><th>efficiency</th>\
                    <th>transactions per access</th></tr>",
        );
        for x in reports {
            let _ = write!(
                o,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td></tr>",
                x.warp_size,
                thousands(x.warps as u64),
                thousands(x.warp_instructions),
                pct(x.simt_efficiency),
                num(x.memory.total.transactions_per_access)
            );
        }
        o.push_str("</table>");
    }
    o.push_str(
        "<h2>Functions</h2><table><tr><th>function</th><th>module</th><th>thread instructions</th>\
                <th>warp instructions</th><th>efficiency</th><th>heap tx/access</th><th>stack tx/access</th>\
                <th>local tx/access</th></tr>",
    );
    for f in r.functions.iter().take(200) {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&f.name),
            escape(&f.module),
            thousands(f.thread_instructions),
            thousands(f.warp_instructions),
            pct(f.simt_efficiency),
            num(f.memory.heap.transactions_per_access),
            num(f.memory.stack.transactions_per_access),
            num(f.memory.stack_local.transactions_per_access)
        );
    }
    o.push_str("</table>");
    if !r.blocks.is_empty() {
        o.push_str(
            "<h2>Hottest basic blocks</h2><table><tr><th>function</th><th>address</th>\
                    <th>thread instructions</th><th>warp instructions</th><th>efficiency</th></tr>",
        );
        for b in &r.blocks {
            let _ = write!(
                o,
                "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td></tr>",
                escape(&b.function),
                escape(&b.address),
                thousands(b.thread_instructions),
                thousands(b.warp_instructions),
                pct(b.simt_efficiency)
            );
        }
        o.push_str("</table>");
    }
    if !r.locks.is_empty() {
        o.push_str(
            "<h2>Lock sites</h2><table><tr><th>function</th><th>site</th><th>kind</th><th>locks</th>\
                    <th>acquisitions</th><th>contended</th><th>most lanes serialized</th>\
                    <th>serialized warp instructions</th></tr>",
        );
        for l in &r.locks {
            let _ = write!(
                o,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(&l.function),
                escape(&l.site),
                l.kind.name(),
                l.locks,
                thousands(l.acquisitions),
                thousands(l.contended),
                l.max_serialized_lanes,
                thousands(l.serialized_warp_instructions)
            );
        }
        o.push_str("</table>");
    }
    if !r.errors.is_empty() {
        o.push_str("<h2>Problems</h2><ul>");
        for e in &r.errors {
            let _ = write!(o, "<li>{}</li>", escape(e));
        }
        o.push_str("</ul>");
    }
    let _ = writeln!(o, "<p class=\"note\">{}</p></body></html>", escape(&r.segments_note));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_groups() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(123456), "123,456");
        assert_eq!(thousands(12), "12");
    }

    #[test]
    fn bars_are_svg() {
        let s = bar_chart("t", &[("f<g>".into(), 0.5)], 1.0, &|v| format!("{v}"));
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("f&lt;g&gt;"));
        assert!(s.contains("width=\"210.0\""), "{s}");
    }
}
