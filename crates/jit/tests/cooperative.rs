//! Cooperative launches (`Backend::launch_cooperative`) on the emulator and the JIT, with nvcc's
//! `this_grid().sync()` (`fixtures/grid_sync.cu`): every CTA resident at once, so the grid barrier
//! completes; a CTA that fails or exits without reaching the barrier ends the launch with an error instead of
//! leaving the others waiting; in an ordinary launch the workspace is null and the kernel traps, as on a GPU.

mod common;

use common::{launch_with, Arg};
use device::{Backend, Dim3};

fn module() -> ir::Module {
    ir::compile(include_str!("fixtures/grid_sync.sm_80.ptx")).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The engines: the emulator and the JIT (one pool worker: a cooperative launch does not use the pool).
fn engines() -> Vec<(&'static str, Box<dyn Backend>)> {
    vec![
        ("emulator", Box::new(emu::Emulator::new())),
        ("JIT", Box::new(jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() }))),
    ]
}

/// `rotate(a, b, trap_cta, skip_cta)` on `ctas` CTAs of 64 threads: `b` as words.
fn rotate(engine: &mut dyn Backend, ctas: u32, trap: i32, skip: i32, cooperative: bool) -> Result<Vec<u32>, String> {
    let n = ctas as usize;
    let args = [
        Arg::Buf(vec![0; 4 * n]),
        Arg::Buf(vec![0; 4 * n]),
        Arg::Scalar(trap.to_le_bytes().to_vec()),
        Arg::Scalar(skip.to_le_bytes().to_vec()),
    ];
    let (grid, block) = (Dim3::new(ctas, 1, 1), Dim3::new(64, 1, 1));
    let (out, _) = launch_with(engine, &module(), "rotate", grid, block, 0, &args, cooperative)?;
    Ok(out[1].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
fn every_cta_sees_what_the_others_wrote_before_the_grid_barrier() {
    for ctas in [1u32, 3, 16] {
        // CTA k wrote k + 100 before the barrier and reads its right neighbour's after it.
        let want: Vec<u32> = (0..ctas).map(|k| (k + 1) % ctas + 100).collect();
        for (name, mut engine) in engines() {
            let got = rotate(&mut *engine, ctas, -1, -1, true).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got, want, "{name}, {ctas} CTAs");
        }
    }
}

#[test]
fn a_cta_that_fails_stops_the_ones_waiting_for_it() {
    for (name, mut engine) in engines() {
        let e = rotate(&mut *engine, 8, 5, -1, true).expect_err(name);
        assert!(e.contains("trap") && e.contains("block (5,0,0)"), "{name}: {e}");
    }
}

#[test]
fn a_cta_that_never_reaches_the_grid_barrier_is_a_deadlock_not_a_hang() {
    for (name, mut engine) in engines() {
        let e = rotate(&mut *engine, 4, -1, 2, true).expect_err(name);
        assert!(e.contains("deadlock"), "{name}: {e}");
    }
}

#[test]
fn an_ordinary_launch_has_no_grid_workspace() {
    // cooperative_groups traps at `sync()` when the workspace address is null.
    for (name, mut engine) in engines() {
        let e = rotate(&mut *engine, 2, -1, -1, false).expect_err(name);
        assert!(e.contains("trap"), "{name}: {e}");
    }
}

#[test]
fn a_grid_larger_than_the_engines_co_schedule_is_refused_before_running() {
    let ctas = device::MAX_COOPERATIVE_CTAS as u32 + 1;
    for (name, mut engine) in engines() {
        let e = rotate(&mut *engine, ctas, -1, -1, true).expect_err(name);
        assert!(e.contains("at most 4096 can be resident"), "{name}: {e}");
    }
}
