//! Every PTX file of the corpus: compiles (parse, lower, verify), round-trips through the printer to the same
//! IR, and the fast CFG analyses agree with the reference algorithms on every function. The CFG summary of
//! each file is compared with a committed expected file (`BLESS=1` rewrites them).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use graph::{reference, DominatorTree, LoopForest, PostDom, PostDominatorTree};
use ir::liveness::BlockUseDefs;
use ir::{Cfg, Module};

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx")
}

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("corpus directory").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

fn compile(path: &Path, text: &str) -> Module {
    match ir::compile(text) {
        Ok(m) => m,
        Err(diags) => {
            let name = path.display().to_string();
            let rendered: String = diags.iter().take(10).map(|d| d.render(&name, text)).collect();
            panic!("{name} does not compile:\n{rendered}");
        }
    }
}

/// One line per function: its shape and every branch's reconvergence point.
fn summary(module: &Module) -> String {
    let mut out = String::new();
    for func in module.functions.values() {
        let Some(body) = &func.body else {
            let _ = writeln!(out, "{} (declaration)", func.name);
            continue;
        };
        let cfg = Cfg::compute(body);
        let dom = DominatorTree::compute(&cfg);
        let pdom = PostDominatorTree::compute(&cfg);
        let loops = LoopForest::compute(&cfg, &dom);
        let _ = write!(
            out,
            "{} {}: insts={} blocks={} edges={} loops={} regs={}",
            if func.is_kernel() { "entry" } else { "func" },
            func.name,
            body.insts.len(),
            body.blocks.len(),
            cfg.edge_count(),
            loops.len(),
            body.regs.len()
        );
        let mut joins = Vec::new();
        for b in body.blocks.keys() {
            if cfg.succs(b).len() > 1 {
                joins.push(match pdom.ipdom(b) {
                    PostDom::Node(n) => format!("{}->{}", b.as_u32(), n.as_u32()),
                    PostDom::VirtualExit => format!("{}->exit", b.as_u32()),
                    PostDom::Unreachable => format!("{}->unreachable", b.as_u32()),
                });
            }
        }
        let _ = writeln!(out, " reconverge=[{}]", joins.join(" "));
    }
    out
}

/// Names the first part where two modules differ, for a readable failure.
fn first_difference(a: &Module, b: &Module) -> String {
    if a.globals != b.globals {
        for (x, y) in a.globals.values().zip(b.globals.values()) {
            if x != y {
                return format!("global\n{x:?}\nvs\n{y:?}");
            }
        }
        return "global count".into();
    }
    if a.items != b.items {
        return format!("items\n{:?}\nvs\n{:?}", a.items, b.items);
    }
    for (f, g) in a.functions.values().zip(b.functions.values()) {
        if f == g {
            continue;
        }
        let (Some(x), Some(y)) = (&f.body, &g.body) else { return format!("function {}", f.name) };
        for (i, j) in x.insts.values().zip(y.insts.values()) {
            if i != j {
                return format!("{}: instruction\n{i:?}\nvs\n{j:?}", f.name);
            }
        }
        if x.blocks != y.blocks {
            return format!("{}: blocks", f.name);
        }
        if x.locs != y.locs {
            return format!("{}: locs {} vs {}", f.name, x.locs.len(), y.locs.len());
        }
        return format!("{}: header or declarations\n{:?}\nvs\n{:?}", f.name, f.params, g.params);
    }
    format!("module header {:?} {:?}", a.version, b.version)
}

fn check_analyses(path: &Path, module: &Module) {
    for func in module.functions.values() {
        let Some(body) = &func.body else { continue };
        let cfg = Cfg::compute(body);
        let ctx = |e: String| format!("{}: function `{}`: {e}", path.display(), func.name);
        reference::check_all(&cfg).map_err(ctx).unwrap();
        let ud = BlockUseDefs::compute(body);
        reference::check_liveness(&cfg, body.regs.len(), |b: ir::BlockId| {
            (&ud.uses[b.as_u32() as usize], &ud.defs[b.as_u32() as usize])
        })
        .map_err(ctx)
        .unwrap();
    }
}

#[test]
fn corpus_compiles_round_trips_and_analyses_agree() {
    let root = corpus_root();
    let mut files = Vec::new();
    ptx_files(&root, &mut files);
    // CORPUS_FILTER=substring narrows the run while debugging.
    if let Ok(filter) = std::env::var("CORPUS_FILTER") {
        files.retain(|p| p.to_string_lossy().contains(&filter));
    }
    assert!(
        files.len() >= 20 || std::env::var_os("CORPUS_FILTER").is_some(),
        "the corpus looks incomplete: {} files under {}",
        files.len(),
        root.display()
    );
    let bless = std::env::var_os("BLESS").is_some();
    let expected_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected");
    let mut mismatches = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let module = compile(path, &text);

        let printed = ir::print(&module);
        let again = compile(&path.with_extension("printed.ptx"), &printed);
        let (a, b) = (module.without_source_positions(), again.without_source_positions());
        assert!(a == b, "{}: print → parse does not give the same IR: {}", path.display(), first_difference(&a, &b));
        assert_eq!(ir::print(&again), printed, "{}: printing is not idempotent", path.display());

        check_analyses(path, &module);

        let rel = path.strip_prefix(&root).unwrap();
        let expected_path = expected_root.join(rel).with_extension("cfg.txt");
        let actual = summary(&module);
        if bless {
            std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
            std::fs::write(&expected_path, &actual).unwrap();
        } else {
            match std::fs::read_to_string(&expected_path) {
                Ok(expected) if expected == actual => {}
                Ok(_) => mismatches.push(format!("{} differs from {}", rel.display(), expected_path.display())),
                Err(_) => {
                    mismatches.push(format!("{} has no expected file {}", rel.display(), expected_path.display()))
                }
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "CFG summaries changed (rerun with BLESS=1 if intended):\n{}",
        mismatches.join("\n")
    );
}
