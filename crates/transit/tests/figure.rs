//! The transit figure's content: both curves, the equilibrium on both of them, δ and π where the model puts
//! them, labels, and the what-if overlays.

use transit::analysis::Analysis;
use transit::profile::Profile;
use transit::{WhatIf, Workload};

fn analysis(machine: &str, z: f64, n: f64, what_if: &[&str]) -> (Analysis, Profile) {
    let p = Profile::builtin(machine).unwrap();
    let r = Workload::manual(z, n).resolve(&p).unwrap();
    let w: Vec<WhatIf> = what_if.iter().map(|s| WhatIf::parse(s).unwrap()).collect();
    (Analysis::new(&p, &r, "test", &w).unwrap(), p)
}

/// The value of `attr` in the first element that has `id="{id}"`.
fn attr(svg: &str, id: &str, attr: &str) -> Option<String> {
    let at = svg.find(&format!(r#"id="{id}""#))?;
    let start = svg[..at].rfind('<')?;
    let end = at + svg[at..].find('>')?;
    let element = &svg[start..end];
    let key = format!(r#" {attr}=""#);
    let v = element.find(&key)? + key.len();
    Some(element[v..v + element[v..].find('"')?].to_string())
}

fn num(svg: &str, id: &str, a: &str) -> f64 {
    attr(svg, id, a).unwrap_or_else(|| panic!("#{id} has no {a}")).parse().unwrap()
}

fn points(svg: &str, id: &str) -> Vec<(f64, f64)> {
    let p = attr(svg, id, "points").unwrap_or_else(|| panic!("no polyline #{id}"));
    p.split_whitespace()
        .map(|xy| {
            let (x, y) = xy.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// The y of a polyline at pixel x (linear between its points).
fn y_at(line: &[(f64, f64)], x: f64) -> f64 {
    for w in line.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x >= x0 - 1e-6 && x <= x1 + 1e-6 {
            return if x1 == x0 { y0 } else { y0 + (y1 - y0) * (x - x0) / (x1 - x0) };
        }
    }
    panic!("x = {x} outside {line:?}")
}

fn well_formed(svg: &str) {
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // Every element opened is closed (the figure uses no CDATA or comments).
    let opens = svg.matches("<g").count() - svg.matches("<g/").count();
    assert_eq!(opens, svg.matches("</g>").count());
    assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "non-finite coordinates");
}

#[test]
fn the_equilibrium_lies_on_both_curves() {
    for (machine, z, n) in [
        ("c2075-sp", 10.0, 1536.0),
        ("c2075-sp", 2.0, 1536.0),
        ("c2075-dp", 200.0, 1536.0),
        ("gtx690-sp", 40.0, 2048.0),
    ] {
        let (a, p) = analysis(machine, z, n, &[]);
        let svg = transit::svg::render(&a, &p);
        well_formed(&svg);
        let (cx, cy) = (num(&svg, "equilibrium", "cx"), num(&svg, "equilibrium", "cy"));
        let f = points(&svg, "f");
        let g = points(&svg, "g");
        assert!((y_at(&f, cx) - cy).abs() < 0.05, "{machine} Z={z}: not on f: {cy} vs {}", y_at(&f, cx));
        assert!((y_at(&g, cx) - cy).abs() < 0.05, "{machine} Z={z}: not on g: {cy} vs {}", y_at(&g, cx));
        // The data attributes are the model's numbers.
        assert!((num(&svg, "equilibrium", "data-k") - a.k).abs() < 1e-9);
        assert!((num(&svg, "equilibrium", "data-gbs") - a.ms_gb_per_s_per_unit).abs() < 1e-9);
        assert_eq!(attr(&svg, "equilibrium", "data-bound").unwrap(), a.bound.name());
        // Labels: title with the bound, axes, the state panel.
        assert!(svg.contains(&format!("{} bound</text>", a.bound)));
        assert!(svg.contains("k: threads in the memory system") && svg.contains("x = n − k"));
        assert!(svg.contains("memory-system throughput (GB/s per SM)"));
        assert!(svg.contains("f(k): memory-system supply") && svg.contains("g(x): demand"));
        // f starts at the origin; g ends at (n, 0), the right end of the axis.
        let (x0, y0) = f[0];
        let (gx, gy) = *g.last().unwrap();
        assert!((gy - y0).abs() < 1e-9 && gx > x0);
    }
}

#[test]
fn delta_and_pi_sit_on_their_curves() {
    // c2075-sp, Z = 5, n = 1536: δ at k = 1536 (the right edge) and π at k = n − M = 960.
    let (a, p) = analysis("c2075-sp", 5.0, 1536.0, &[]);
    let svg = transit::svg::render(&a, &p);
    let (dx, dy) = (num(&svg, "delta", "cx"), num(&svg, "delta", "cy"));
    let (px, py) = (num(&svg, "pi", "cx"), num(&svg, "pi", "cy"));
    let f = points(&svg, "f");
    let g = points(&svg, "g");
    assert!((y_at(&f, dx) - dy).abs() < 0.05);
    assert!((y_at(&g, px) - py).abs() < 0.05);
    // π is the knee of g: the g polyline has a vertex there; δ is f's knee (here the right end).
    assert!(g.iter().any(|&(x, y)| (x - px).abs() < 0.01 && (y - py).abs() < 0.01));
    assert!(f.iter().any(|&(x, y)| (x - dx).abs() < 0.01 && (y - dy).abs() < 0.01));
    // The k axis: 1536 threads map to the right end, where g reaches 0.
    let (gx, _) = *g.last().unwrap();
    assert!((gx - dx).abs() < 0.01);
    // π left of δ on the k axis (π at k = 960).
    assert!(px < dx);
    assert!(svg.contains("δ</tspan>") && svg.contains("π</tspan>"));
}

#[test]
fn off_plot_points_are_named_in_the_panel() {
    // gtx690-sp with n = 1024 < M = 2048: π is beyond n and δ beyond n too.
    let (a, p) = analysis("gtx690-sp", 40.0, 1024.0, &[]);
    let svg = transit::svg::render(&a, &p);
    assert!(svg.contains("Off the plot"));
    assert!(svg.contains("g(x) never flattens"), "{svg}");
    assert!(svg.contains("δ at k = 2048 &gt; n"));
    // A g plateau far above the memory ceiling is cut off and named.
    let (a, p) = analysis("c2075-sp", 2.0, 1536.0, &[]);
    let svg = transit::svg::render(&a, &p);
    assert!(svg.contains("plateau M/Z = 49.6 GB/s is above the plot"), "{svg}");
}

#[test]
fn what_if_overlays_are_drawn() {
    let (a, p) = analysis("c2075-sp", 10.0, 1536.0, &["z=4x", "n=768", "r=2x"]);
    let svg = transit::svg::render(&a, &p);
    well_formed(&svg);
    assert_eq!(svg.matches(r#"class="whatif""#).count(), 3);
    assert_eq!(attr(&svg, "whatif-0", "data-label").unwrap(), "Z = 40");
    assert_eq!(attr(&svg, "whatif-1", "data-label").unwrap(), "n = 768");
    // Changing Z or n redraws g, changing R redraws f; each overlay marks its own equilibrium.
    let group = |i: usize| {
        let start = svg.find(&format!(r#"id="whatif-{i}""#)).unwrap();
        let end = start + svg[start..].find("</g>").unwrap();
        svg[start..end].to_string()
    };
    assert!(group(0).contains(r#"class="g""#) && !group(0).contains(r#"class="f""#));
    assert!(group(1).contains(r#"class="g""#));
    assert!(group(2).contains(r#"class="f""#) && !group(2).contains(r#"class="g""#));
    for i in 0..3 {
        let g = group(i);
        let k: f64 = {
            let key = "data-k=\"";
            let at = g.find(key).unwrap() + key.len();
            g[at..at + g[at..].find('"').unwrap()].parse().unwrap()
        };
        assert!((k - a.what_if[i].k).abs() < 1e-9);
    }
    // Z = 40 makes this machine computation bound; the legend and the panel say so.
    assert_eq!(attr(&svg, "whatif-0", "data-bound").unwrap(), "computation");
    assert!(svg.contains("what if Z = 40") && svg.contains("Z = 40: computation bound"));
}

#[test]
fn capacity_bound_draws_the_balanced_range() {
    // c2075-sp: M/Z = R when Z = 24.8e9 / (8.93e9 / 4) per 4-byte request; both systems saturate only with
    // more than δ + M = 2112 threads (more than an SM holds: a what-if machine).
    let z = 24.8 / (8.93 / 4.0);
    let (a, p) = analysis("c2075-sp", z, 3000.0, &[]);
    assert_eq!(a.bound, transit::Bound::Capacity);
    let svg = transit::svg::render(&a, &p);
    assert!(svg.contains(r#"id="capacity-range""#));
    assert!(svg.contains("any k in"));
}
