//! Shared-memory bank conflicts: wavefront counts known by construction.

use simt::banks::{bank_conflicts, BankConfig};

fn words(n: u64, stride_words: u64) -> impl Iterator<Item = (u64, u32)> {
    (0..n).map(move |i| (4 * stride_words * i, 4))
}

#[test]
fn strides() {
    for (stride, wavefronts) in [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (33, 1), (3, 1), (6, 2), (64, 32)]
    {
        let r = bank_conflicts(words(32, stride));
        assert_eq!(r.wavefronts, wavefronts, "stride {stride}");
        assert_eq!(r.conflicts(), wavefronts - 1, "stride {stride}");
        assert_eq!(r.excess_wavefronts(), wavefronts - 1, "stride {stride}");
    }
}

#[test]
fn broadcast_and_multicast() {
    let r = bank_conflicts((0..32).map(|_| (128u64, 4u32)));
    assert_eq!((r.wavefronts, r.conflicts(), r.distinct_words), (1, 0, 1));
    assert!(r.is_conflict_free());
    // Pairs of lanes share a word: 16 distinct words in 16 banks.
    let r = bank_conflicts((0..32u64).map(|i| (4 * (i / 2), 4)));
    assert_eq!(r.wavefronts, 1);
    // Word stride 2, but lanes i and i+16 read the same word (plain
    // stride 2 gives 2 wavefronts): multicast, one wavefront.
    let r = bank_conflicts((0..32u64).map(|i| (4 * (i % 16) * 2, 4)));
    assert_eq!(r.wavefronts, 1);
    // Lanes i and i+8 share a word, lanes i and i+4 a bank: 2 distinct
    // words per bank.
    let r = bank_conflicts((0..32u64).map(|i| (4 * 8 * (i % 8), 4)));
    assert_eq!(r.wavefronts, 2);
}

#[test]
fn sub_word_accesses() {
    // 32 lanes reading consecutive bytes: 8 words, one wavefront.
    let r = bank_conflicts((0..32u64).map(|i| (i, 1)));
    assert_eq!((r.wavefronts, r.distinct_words), (1, 8));
    // 2-byte values with a 128-byte stride: all in bank 0, 32 words.
    let r = bank_conflicts((0..32u64).map(|i| (128 * i, 2)));
    assert_eq!(r.wavefronts, 32);
}

#[test]
fn wide_accesses() {
    // 64-bit consecutive: 64 words, 2 per bank: 2 wavefronts, none excess.
    let r = bank_conflicts((0..32u64).map(|i| (8 * i, 8)));
    assert_eq!((r.wavefronts, r.ideal_wavefronts), (2, 2));
    assert_eq!((r.conflicts(), r.excess_wavefronts()), (1, 0));
    // 64-bit with a 16-byte stride: banks 4i, 4i+1 -> 4 lanes per bank.
    let r = bank_conflicts((0..32u64).map(|i| (16 * i, 8)));
    assert_eq!((r.wavefronts, r.ideal_wavefronts), (4, 2));
    assert_eq!(r.excess_wavefronts(), 2);
    // 128-bit consecutive: 128 words, 4 per bank.
    let r = bank_conflicts((0..32u64).map(|i| (16 * i, 16)));
    assert_eq!((r.wavefronts, r.ideal_wavefronts, r.excess_wavefronts()), (4, 4, 0));
    // 16 lanes of 64-bit: one wavefront.
    let r = bank_conflicts((0..16u64).map(|i| (8 * i, 8)));
    assert_eq!(r.wavefronts, 1);
    // A misaligned 8-byte access spans two words.
    let r = bank_conflicts([(4u64, 8u32)]);
    assert_eq!(r.distinct_words, 2);
}

#[test]
fn configurable_banks() {
    let cfg = BankConfig::new(16, 4).unwrap();
    let r = cfg.analyze(words(32, 1));
    assert_eq!(r.wavefronts, 2);
    let cfg = BankConfig::new(32, 8).unwrap();
    // 8-byte banks: consecutive 8-byte values are conflict-free.
    let r = cfg.analyze((0..32u64).map(|i| (8 * i, 8)));
    assert_eq!(r.wavefronts, 1);
    // Two 4-byte lanes in one 8-byte bank word broadcast.
    let r = cfg.analyze(words(32, 1));
    assert_eq!(r.wavefronts, 1);
    assert!(BankConfig::new(0, 4).is_none());
    assert!(BankConfig::new(32, 0).is_none());
    assert!(BankConfig::new(256, 4).is_none());
    assert_eq!(BankConfig::default().bank_of(132), 1);
}

#[test]
fn empty_and_warp_sizes() {
    let r = bank_conflicts(std::iter::empty());
    assert_eq!((r.wavefronts, r.conflicts()), (0, 0));
    for width in [4u64, 8, 16, 64] {
        assert_eq!(bank_conflicts(words(width, 1)).wavefronts, width.div_ceil(32));
        assert_eq!(bank_conflicts(words(width, 32)).wavefronts, width);
    }
}

#[test]
fn randomized_against_brute_force() {
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..500 {
        let n = rng.usize(0..70);
        let accesses: Vec<(u64, u32)> = (0..n).map(|_| (rng.u64(0..1024), [1, 2, 4, 8, 16][rng.usize(0..5)])).collect();
        let mut per_bank = vec![std::collections::BTreeSet::new(); 32];
        for &(a, s) in &accesses {
            for byte in a..a + u64::from(s) {
                per_bank[(byte / 4 % 32) as usize].insert(byte / 4);
            }
        }
        let expected = per_bank.iter().map(|s| s.len() as u64).max().unwrap();
        assert_eq!(bank_conflicts(accesses.iter().copied()).wavefronts, expected);
    }
}
