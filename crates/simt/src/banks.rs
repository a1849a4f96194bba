//! Shared-memory bank conflicts.
//!
//! # Model
//!
//! Shared memory is split into `banks` banks (default 32) of `bank_bytes`
//! bytes (default 4): the 4-byte *word* with index `address / 4` lives in
//! bank `word % 32`. A bank delivers one word per cycle, so one warp's
//! shared-memory instruction needs as many passes (**wavefronts**) as the
//! largest number of *distinct* words any single bank must deliver:
//!
//! ```text
//! wavefronts = max over banks b of |{ distinct words w touched : w % banks == b }|
//! ```
//!
//! Lanes touching the same word are served together (broadcast/multicast),
//! so they never conflict. This is the common definition of simulators such
//! as GPGPU-Sim and of the shared-memory wavefront counts of NVIDIA's
//! profilers, for accesses of up to 4 bytes; for wider ones see below.
//!
//! Examples for 32 lanes of 4-byte accesses at `address = 4 * stride * lane`:
//! stride 1 gives 1 wavefront (each bank once); stride 2 gives 2 (lanes `i`
//! and `i + 16` share a bank); stride 32 gives 32 (all in bank 0); stride 33
//! gives 1 (33 is odd, so lanes hit distinct banks); all lanes at one address
//! give 1.
//!
//! # Wider accesses (64- and 128-bit)
//!
//! An access covers every word from `address / bank_bytes` to
//! `(address + size - 1) / bank_bytes`: an aligned 8-byte access occupies two
//! adjacent banks, a 16-byte access four, and an unaligned access whatever it
//! overlaps. **All accesses of the warp are counted in one pass**; the model
//! does not split a warp into half- or quarter-warp phases the way hardware
//! schedules wide accesses. The count is still the minimum number of passes
//! the banks need, which is what the phases achieve for conflict-free
//! patterns: 32 lanes reading consecutive 8-byte values touch 64 distinct
//! words, 2 per bank, so `wavefronts == 2`.
//!
//! Such an access is not a conflict in the profiler's sense: the warp simply
//! asks for more than `banks * bank_bytes` bytes. [`BankReport`] therefore
//! reports both readings:
//!
//! * [`conflicts`](BankReport::conflicts) `= wavefronts - 1`, the extra passes
//!   compared with one pass (so the 64-bit example above counts 1);
//! * [`excess_wavefronts`](BankReport::excess_wavefronts) `= wavefronts -
//!   ideal_wavefronts`, where `ideal_wavefronts = ceil(distinct words /
//!   banks)` is the least possible for that many words (the 64-bit example
//!   above counts 0). Use this one to compare with Nsight's "bank conflicts".
//!
//! The two agree whenever the warp touches at most `banks` distinct words,
//! e.g. always for up to 32 aligned accesses of at most 4 bytes with the
//! default configuration.

use crate::coalesce::Intervals;

/// The largest number of banks a [`BankConfig`] may have.
pub const MAX_BANKS: u32 = 128;

/// Banks of shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BankConfig {
    banks: u32,
    bank_bytes: u32,
}

impl BankConfig {
    /// 32 banks of 4 bytes (NVIDIA since Fermi).
    pub const DEFAULT: BankConfig = BankConfig { banks: 32, bank_bytes: 4 };

    /// `banks` banks (`1..=MAX_BANKS`) of `bank_bytes` bytes (non-zero);
    /// `None` otherwise.
    pub const fn new(banks: u32, bank_bytes: u32) -> Option<Self> {
        if banks == 0 || banks > MAX_BANKS || bank_bytes == 0 {
            None
        } else {
            Some(BankConfig { banks, bank_bytes })
        }
    }

    /// Number of banks.
    pub const fn banks(self) -> u32 {
        self.banks
    }

    /// Bytes per bank word.
    pub const fn bank_bytes(self) -> u32 {
        self.bank_bytes
    }

    /// The bank of the word holding `address`.
    pub const fn bank_of(self, address: u64) -> u32 {
        ((address / self.bank_bytes as u64) % self.banks as u64) as u32
    }

    /// Analyzes one warp shared-memory instruction given the `(address,
    /// size)` of each active lane. Allocation-free up to 64 accesses.
    /// Accesses of size 0 touch nothing.
    pub fn analyze<I>(self, accesses: I) -> BankReport
    where
        I: IntoIterator<Item = (u64, u32)>,
    {
        let width = u64::from(self.bank_bytes);
        let banks = u64::from(self.banks);
        let mut words = Intervals::new();
        let mut report = BankReport::default();
        for (address, size) in accesses {
            report.accesses += 1;
            if size == 0 {
                continue;
            }
            let last = address.saturating_add(u64::from(size) - 1);
            words.push((address / width, last / width));
        }
        // Words per bank: every interval of `len` words gives `len / banks`
        // words to each bank, plus one to `len % banks` consecutive banks.
        let mut per_bank = [0u64; MAX_BANKS as usize];
        let mut everywhere = 0u64;
        for &(first, last) in words.merged() {
            let len = (last - first).saturating_add(1);
            report.distinct_words = report.distinct_words.saturating_add(len);
            everywhere = everywhere.saturating_add(len / banks);
            let start = first % banks;
            for k in 0..len % banks {
                per_bank[((start + k) % banks) as usize] += 1;
            }
        }
        let busiest = per_bank[..self.banks as usize].iter().copied().max().unwrap_or(0);
        report.wavefronts = everywhere.saturating_add(busiest);
        report.ideal_wavefronts = report.distinct_words.div_ceil(banks);
        report
    }
}

impl Default for BankConfig {
    fn default() -> Self {
        BankConfig::DEFAULT
    }
}

/// Bank behaviour of one warp shared-memory instruction; see the
/// [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BankReport {
    /// Serialized passes: the largest number of distinct words in one bank
    /// (0 when nothing is accessed, 1 when conflict-free).
    pub wavefronts: u64,
    /// The least number of passes for this many distinct words:
    /// `ceil(distinct_words / banks)`.
    pub ideal_wavefronts: u64,
    /// Distinct bank words touched by the warp.
    pub distinct_words: u64,
    /// Number of `(address, size)` accesses (active lanes).
    pub accesses: u64,
}

impl BankReport {
    /// `wavefronts - 1` (0 when nothing is accessed).
    pub const fn conflicts(&self) -> u64 {
        self.wavefronts.saturating_sub(1)
    }

    /// `wavefronts - ideal_wavefronts`: passes caused by lanes competing for
    /// a bank, not by the amount of data.
    pub const fn excess_wavefronts(&self) -> u64 {
        self.wavefronts.saturating_sub(self.ideal_wavefronts)
    }

    /// Whether one pass suffices.
    pub const fn is_conflict_free(&self) -> bool {
        self.wavefronts <= 1
    }
}

/// [`BankConfig::analyze`] with the default 32 banks of 4 bytes.
pub fn bank_conflicts<I>(accesses: I) -> BankReport
where
    I: IntoIterator<Item = (u64, u32)>,
{
    BankConfig::DEFAULT.analyze(accesses)
}
