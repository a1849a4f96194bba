//! Cooperative launches on the emulator: every CTA of the grid is resident at once and the CTAs take turns
//! in rounds, so that a CTA spinning on a grid-wide barrier (`this_grid().sync()`: an atomic add on a word
//! of the grid workspace, then strong loads of it until its top bit flips) lets the others arrive. A spin
//! load ends its CTA's turn; a run of rounds in which no CTA did anything but spin, and nothing was written,
//! is a located deadlock rather than a hang.

use device::{Dim3, ErrorKind, ExecError, Location};
use ir::FuncId;

use super::{Cta, Machine, Round};

/// Grid rounds in a row without progress before the launch fails as a deadlock.
const IDLE_GRID_ROUNDS: u32 = 4 * program::mbarrier::IDLE_ROUNDS;

/// A cooperative launch's state.
#[derive(Debug)]
pub struct Grid {
    /// The grid workspace's device address (`%envreg1:%envreg2`).
    pub workspace: u64,
    /// By function and op: whether the op is a strong load (`.volatile`, `.relaxed`, `.acquire`) that may
    /// read global memory, which a spin loop polls.
    spin: Vec<Vec<bool>>,
    /// Stores and atomics so far: a round of spins in which none happened made no progress.
    pub writes: u64,
}

impl Grid {
    pub fn new(module: &ir::Module, programs: &[Option<program::Program>], workspace: u64) -> Grid {
        let spin = programs
            .iter()
            .map(|p| p.as_ref().map_or_else(Vec::new, |p| program::grid::spin_loads(module, p)))
            .collect();
        Grid { workspace, spin, writes: 0 }
    }

    pub fn spins(&self, f: FuncId, op: u32) -> bool {
        self.spin.get(f.as_u32() as usize).and_then(|v| v.get(op as usize)).copied().unwrap_or(false)
    }
}

impl Machine<'_> {
    /// Runs every CTA of the grid, round by round, until all are done.
    pub(super) fn run_grid(&mut self) -> Result<(), ExecError> {
        let blocks = self.config.blocks();
        let mut ctas: Vec<Option<Cta>> =
            (0..blocks).map(|b| Some(self.new_cta(self.config.grid.unflatten(b)))).collect();
        for cta in ctas.iter().flatten() {
            self.count_cta(cta);
        }
        let mut idle = 0;
        let mut live = ctas.len();
        while live > 0 {
            let writes = self.grid.as_ref().map_or(0, |g| g.writes);
            let mut quiet = true;
            for slot in ctas.iter_mut() {
                let Some(cta) = slot else { continue };
                match self.round(cta)? {
                    Round::Finished => {
                        *slot = None;
                        live -= 1;
                        quiet = false;
                    }
                    Round::Progress => quiet = false,
                    Round::Quiet => {}
                }
            }
            let wrote = self.grid.as_ref().is_some_and(|g| g.writes != writes);
            idle = if quiet && !wrote { idle + 1 } else { 0 };
            if idle >= IDLE_GRID_ROUNDS {
                let waiting: Vec<Dim3> = ctas.iter().flatten().map(|c| c.id).collect();
                return Err(self.grid_deadlock(&waiting));
            }
        }
        Ok(())
    }

    fn grid_deadlock(&self, waiting: &[Dim3]) -> ExecError {
        let detail = format!(
            "deadlock in a cooperative launch: {} of the grid's {} CTAs spin and none makes progress (a grid-wide \
             barrier that some CTA never reaches?)",
            waiting.len(),
            self.config.blocks()
        );
        ExecError::new(
            ErrorKind::BarrierDivergence(detail),
            Location {
                kernel: self.module.module.functions[self.kernel].name.clone(),
                block: waiting.first().copied(),
                ..Location::default()
            },
        )
    }
}
