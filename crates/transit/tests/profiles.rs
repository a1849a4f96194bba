//! Machine profiles (built-in, parsed, written back, rejected with the file and the line or field) and
//! workloads from the other engines' JSON.

use transit::analysis::Analysis;
use transit::profile::{InstructionKind, Profile};
use transit::workload::{Threads, Workload};
use transit::Bound;

#[test]
fn builtins_parse_and_match_the_paper() {
    let names = Profile::builtin_names();
    assert_eq!(names, ["c2075-sp", "c2075-dp", "gtx690-sp", "gtx690-dp"]);
    // (name, δ threads, δ GB/s, π threads, π Ginstr/s, SMs, resident threads per SM)
    let expected = [
        ("c2075-sp", 1536.0, 8.93, 576.0, 24.8, 14, 1536.0),
        ("c2075-dp", 768.0, 9.29, 384.0, 14.0, 14, 1536.0),
        ("gtx690-sp", 2048.0, 16.25, 2048.0, 80.0, 8, 2048.0),
        ("gtx690-dp", 1024.0, 18.86, 384.0, 8.0, 8, 2048.0),
    ];
    for (name, dk, dr, pm, pp, units, max) in expected {
        let p = Profile::builtin(name).unwrap();
        assert_eq!(p.name, name);
        assert_eq!(p.knee_threads(), dk);
        assert_eq!(p.ms.peak_gb_per_s, dr);
        assert_eq!(p.cs.lanes, pm);
        assert_eq!(p.cs.peak_ginstr_per_s, pp);
        assert_eq!(p.units, units);
        assert_eq!(p.max_threads, max);
        assert_eq!(p.cs.instruction, InstructionKind::Thread);
        assert_eq!(p.source, transit::profile::paper_source());
        // Written and read back: the same profile.
        let again = Profile::parse(&p.to_toml(), "round trip").unwrap();
        assert_eq!(again, p);
        // Loading by name works too.
        assert_eq!(Profile::load(name).unwrap(), p);
    }
}

#[test]
fn the_model_reproduces_the_transition_points() {
    // The normalized model of a profile has δ and π where the profile says, in the profile's units.
    for name in Profile::builtin_names() {
        let p = Profile::builtin(name).unwrap();
        let z = 10.0;
        let m = p.model(z, p.max_threads);
        let s = p.scale();
        let (dk, dr) = m.delta();
        assert!((dk - p.knee_threads()).abs() < 1e-9 * dk);
        assert!((s.bytes_per_s(dr) / 1e9 - p.ms.peak_gb_per_s).abs() < 1e-9);
        let (pm, _) = m.pi();
        assert_eq!(pm, p.cs.lanes);
        // All lanes busy retire the CS peak.
        assert!((s.instr_per_s(m.cs_curve(pm)) / 1e9 - p.cs.peak_ginstr_per_s).abs() < 1e-9);
    }
}

fn parse_err(text: &str) -> String {
    Profile::parse(text, "my.toml").unwrap_err().to_string()
}

const GOOD: &str = r#"
format = 1
name = "test"
max_threads = 64

[cs]
lanes = 8
peak_ginstr_per_s = 16

[ms]
peak_gb_per_s = 20
latency_ns = 100
request_bytes = 64
"#;

#[test]
fn a_minimal_profile_and_its_defaults() {
    let p = Profile::parse(GOOD, "my.toml").unwrap();
    assert_eq!(p.units, 1);
    assert_eq!(p.unit_name, "unit");
    assert_eq!(p.cs.instruction, InstructionKind::Thread);
    // The knee from Little's law: 20 GB/s × 100 ns / 64 B = 31.25 threads.
    assert!((p.knee_threads() - 31.25).abs() < 1e-12);
    assert!((p.effective_latency_ns() - 100.0).abs() < 1e-9);
}

#[test]
fn bad_profiles_name_the_file_and_the_line_or_field() {
    // Syntax: the line.
    let e = parse_err("format = 1\nname = \"x\nmax_threads = 3\n");
    assert!(e.starts_with("my.toml: ") && e.contains("line 2"), "{e}");
    // A misspelled field: its name and line.
    let e = parse_err(&GOOD.replace("lanes = 8", "lane = 8"));
    assert!(e.contains("my.toml") && e.contains("lane") && e.contains("line"), "{e}");
    // A missing field.
    let e = parse_err(&GOOD.replace("peak_gb_per_s = 20\n", ""));
    assert!(e.contains("peak_gb_per_s"), "{e}");
    // A wrong type: the line.
    let e = parse_err(&GOOD.replace("lanes = 8", "lanes = \"eight\""));
    assert!(e.contains("line 7") || e.contains("lanes"), "{e}");
    // Values: the field.
    for (from, to, field) in [
        ("lanes = 8", "lanes = 0", "cs.lanes"),
        ("peak_gb_per_s = 20", "peak_gb_per_s = -3", "ms.peak_gb_per_s"),
        ("request_bytes = 64", "request_bytes = nan", "ms.request_bytes"),
        ("max_threads = 64", "max_threads = inf", "max_threads"),
        ("format = 1", "format = 2", "format"),
        ("latency_ns = 100", "", "knee_threads"),
    ] {
        let e = parse_err(&GOOD.replace(from, to));
        assert!(e.starts_with("my.toml: ") && e.contains(field), "{from} → {to}: {e}");
    }
    // Unknown names and files.
    let e = Profile::load("no-such-machine").unwrap_err().to_string();
    assert!(e.contains("no-such-machine") && e.contains("c2075-sp"), "{e}");
    let e = Profile::load("/nonexistent/cpu.toml").unwrap_err().to_string();
    assert!(e.contains("/nonexistent/cpu.toml") && e.contains("no such file"), "{e}");
}

const RUN_JSON: &str = r#"{
  "kernel": "vector_add", "file": "w.ptx", "backend": "emu",
  "stats": {
    "kernel": "vector_add", "warp_size": 32, "threads": 2048,
    "thread_instructions": 45056, "warp_instructions": 1408,
    "memory": {
      "transaction_bytes": 32,
      "global_loads": {"warp_accesses": 128, "transactions": 512, "bytes": 16384},
      "global_stores": {"warp_accesses": 64, "transactions": 256, "bytes": 8192},
      "global_atomics": {"warp_accesses": 0, "transactions": 0, "bytes": 0}
    },
    "transit": {"instructions_per_transaction": 1.8333, "thread_instructions_per_transaction": 58.667,
                "resident_threads": 2048, "threads_per_cta": 256}
  }
}"#;

#[test]
fn kernel_stats_give_z_and_n() {
    let w = Workload::from_kernel_stats(RUN_JSON, "va.json").unwrap();
    assert_eq!(w.threads, Threads::Total { threads: 2048.0, group: 256.0 });
    assert!(w.source.contains("va.json") && w.source.contains("vector_add"));
    // 45056 thread instructions over 768 × 32 bytes; per 4-byte request of c2075-sp: 45056 / 6144 = 7.333.
    let p = Profile::builtin("c2075-sp").unwrap();
    let r = w.resolve(&p).unwrap();
    assert!((r.z - 45056.0 / 6144.0).abs() < 1e-12, "{r:?}");
    // 8 CTAs of 256 threads: 8 of the 14 SMs busy, 256 threads each.
    assert_eq!((r.n, r.units), (256.0, 8));
    assert!(r.notes.iter().any(|n| n.contains("8 of the 14 SMs")), "{:?}", r.notes);
    // The stats object alone works too.
    let stats = serde_json::from_str::<serde_json::Value>(RUN_JSON).unwrap()["stats"].to_string();
    assert_eq!(Workload::from_kernel_stats(&stats, "s.json").unwrap().intensity, w.intensity);
    // A big launch is capped at the resident threads of an SM.
    let big = RUN_JSON.replace("\"resident_threads\": 2048", "\"resident_threads\": 1048576");
    let r = Workload::from_kernel_stats(&big, "big.json").unwrap().resolve(&p).unwrap();
    assert_eq!((r.n, r.units), (1536.0, 14));
    assert!(r.notes.iter().any(|n| n.contains("capped")), "{:?}", r.notes);
    // A profile counting warp instructions gets warp instructions per request.
    let mut warp = p.clone();
    warp.cs.instruction = InstructionKind::Warp;
    let r = Workload::from_kernel_stats(RUN_JSON, "va.json").unwrap().resolve(&warp).unwrap();
    assert!((r.z - 1408.0 / 6144.0).abs() < 1e-12);
}

#[test]
fn bad_kernel_stats_name_the_file_and_field() {
    let err = |text: &str| Workload::from_kernel_stats(text, "k.json").unwrap_err().to_string();
    let e = err("{ not json");
    assert!(e.starts_with("k.json: not JSON"), "{e}");
    let e = err(&RUN_JSON.replace("\"warp_instructions\": 1408,", ""));
    assert!(e.starts_with("k.json: ") && e.contains("`warp_instructions`"), "{e}");
    let e = err(&RUN_JSON.replace("\"transaction_bytes\": 32,", ""));
    assert!(e.contains("`memory.transaction_bytes`"), "{e}");
    let e = err(&RUN_JSON.replace("\"resident_threads\": 2048", "\"resident_threads\": \"many\""));
    assert!(e.contains("`transit.resident_threads` is not a number"), "{e}");
    let e = err(&RUN_JSON.replace("\"threads_per_cta\": 256", "\"tpc\": 256"));
    assert!(e.contains("`transit.threads_per_cta`"), "{e}");
    let e = err(r#"{"kernel": "k", "stats": null}"#);
    assert!(e.contains("k.json") && e.contains("null"), "{e}");
    let e = err(r#"{"kernel": "k"}"#);
    assert!(e.contains("missing field `stats`"), "{e}");
    let e = err("[]");
    assert!(e.contains("array"), "{e}");
    let no_memory = RUN_JSON
        .replace("\"transactions\": 512", "\"transactions\": 0")
        .replace("\"transactions\": 256", "\"transactions\": 0");
    let e = err(&no_memory);
    assert!(e.contains("no global-memory transactions"), "{e}");
}

const ANALYZE_JSON: &str = r#"{
  "program": "./pool", "warp_size": 32, "transaction_bytes": 32, "simt_threads": 64, "warps": 2,
  "thread_instructions": 640000, "warp_instructions": 25000,
  "memory": {"total": {"warp_accesses": 1000, "transactions": 5000, "bytes": 100000}}
}"#;

#[test]
fn trace_reports_give_z_and_n() {
    let w = Workload::from_trace_report(ANALYZE_JSON, "pool.json").unwrap();
    assert_eq!(w.threads, Threads::Total { threads: 64.0, group: 32.0 });
    let p = Profile::parse(GOOD, "my.toml").unwrap();
    let r = w.resolve(&p).unwrap();
    assert_eq!(r.units, 1);
    // 640000 thread instructions over 5000 × 32 bytes, per 64-byte request: 256.
    assert!((r.z - 256.0).abs() < 1e-9);
    assert_eq!(r.n, 64.0);
    // A sweep: the report for warps of 32 is used.
    let sweep = format!("[{}, {}]", ANALYZE_JSON.replace("\"warp_size\": 32", "\"warp_size\": 8"), ANALYZE_JSON);
    assert!(Workload::from_trace_report(&sweep, "s.json").unwrap().source.contains("warps of 32"));
    let e = Workload::from_trace_report("{}", "t.json").unwrap_err().to_string();
    assert!(e.starts_with("t.json: missing field `thread_instructions`"), "{e}");
    let e = Workload::from_trace_report(&ANALYZE_JSON.replace("\"total\"", "\"totals\""), "t.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`memory.total.transactions`"), "{e}");
}

#[test]
fn analysis_in_profile_units() {
    // c2075-sp with Z = 10 per 4-byte request, 1536 threads: the least ceiling is n/(L+Z).
    let p = Profile::builtin("c2075-sp").unwrap();
    let r = Workload::manual(10.0, 1536.0).resolve(&p).unwrap();
    let what_if = [transit::WhatIf::parse("z=4x").unwrap(), transit::WhatIf::parse("r=20").unwrap()];
    let a = Analysis::new(&p, &r, "test", &what_if).unwrap();
    assert_eq!(a.bound, Bound::Thread);
    // L = 1536 threads × 4 B / 8.93 GB/s = 688 ns; the lane rate 24.8e9 / 576; one round trip of a thread
    // takes L + Z / rate; the MS throughput is n × 4 B per round trip.
    let lane_rate = 24.8e9 / 576.0;
    let l = 1536.0 * 4.0 / 8.93e9;
    let per_sm = 1536.0 * 4.0 / (l + 10.0 / lane_rate);
    assert!((a.ms_throughput - 14.0 * per_sm).abs() < 1e-6 * a.ms_throughput, "{} {}", a.ms_throughput, per_sm);
    assert!((a.cs_throughput - a.ms_throughput / 4.0 * 10.0).abs() < 1e-6 * a.cs_throughput);
    assert!((a.k + a.x - 1536.0).abs() < 1e-9);
    assert_eq!(a.what_if.len(), 2);
    assert_eq!(a.what_if[0].label, "Z = 40");
    assert!((a.what_if[1].model.r - p.scale().requests_per_cycle(20e9)).abs() < 1e-12);
    // Directions come in profile units: the n limit in threads, the R limit in GB/s.
    assert!(a.directions.iter().any(|d| d.param == transit::Param::N && d.helps));
    // The JSON carries what scripts need.
    let v = serde_json::to_value(&a).unwrap();
    for key in ["bound", "k", "x", "ms_throughput", "cs_throughput", "directions", "what_if", "machine"] {
        assert!(v.get(key).is_some(), "JSON lacks {key}");
    }
    assert_eq!(v["bound"], "thread");
    // Bad what-ifs.
    for bad in ["q=2", "n", "z=abc", "m=-1", "r=0x"] {
        assert!(transit::WhatIf::parse(bad).is_err(), "{bad}");
    }
}
