//! Coalescing: transaction counts known by construction.

use simt::coalesce::{cache_lines, coalesce, coalesce_into, sectors, transactions};

fn lanes(n: u64, base: u64, stride: u64, size: u32) -> impl Iterator<Item = (u64, u32)> + Clone {
    (0..n).map(move |i| (base + i * stride, size))
}

#[test]
fn consecutive_words() {
    assert_eq!(sectors(lanes(32, 0, 4, 4)), 4);
    assert_eq!(cache_lines(lanes(32, 0, 4, 4)), 1);
    // Misaligned by one word: 5 sectors, 2 lines.
    assert_eq!(sectors(lanes(32, 4, 4, 4)), 5);
    assert_eq!(cache_lines(lanes(32, 4, 4, 4)), 2);
}

#[test]
fn strided() {
    assert_eq!(sectors(lanes(32, 0, 32, 4)), 32);
    assert_eq!(sectors(lanes(32, 0, 128, 4)), 32);
    assert_eq!(cache_lines(lanes(32, 0, 32, 4)), 8);
    assert_eq!(sectors(lanes(32, 0, 8, 4)), 8);
}

#[test]
fn same_address() {
    assert_eq!(sectors(lanes(32, 0x1234_5678, 0, 4)), 1);
    assert_eq!(cache_lines(lanes(64, 0x40, 0, 8)), 1);
}

#[test]
fn straddling() {
    assert_eq!(sectors([(30, 4)]), 2);
    assert_eq!(sectors([(28, 4)]), 1);
    assert_eq!(sectors([(31, 2)]), 2);
    assert_eq!(cache_lines([(126, 4)]), 2);
    // Larger than a sector: 64 bytes from 16 covers sectors 0, 1, 2.
    assert_eq!(sectors([(16, 64)]), 3);
    assert_eq!(sectors([(0, 0)]), 0);
    let mut bases = Vec::new();
    let c = coalesce_into([(30, 4), (100, 8), (0, 1)], 32, &mut bases);
    assert_eq!(bases, [0, 32, 96]);
    assert_eq!((c.transactions, c.accesses, c.bytes), (3, 3, 13));
}

#[test]
fn wide_accesses() {
    // 8-byte words: 32 lanes read 256 bytes = 8 sectors (ThreadFuser's ideal).
    assert_eq!(sectors(lanes(32, 0, 8, 8)), 8);
    // 16-byte vectors: 512 bytes = 16 sectors, 4 lines.
    assert_eq!(sectors(lanes(32, 0, 16, 16)), 16);
    assert_eq!(cache_lines(lanes(32, 0, 16, 16)), 4);
    // Misaligned 8-byte accesses at 4 mod 8: every 4th one straddles.
    assert_eq!(sectors(lanes(32, 4, 8, 8)), 9);
    // 16-byte accesses with a 32-byte stride: one sector each.
    assert_eq!(sectors(lanes(32, 0, 32, 16)), 32);
    // ... and at offset 24 each straddles: two each.
    assert_eq!(sectors(lanes(32, 24, 32, 16)), 33);
}

#[test]
fn warp_sizes() {
    for width in [4u64, 8, 16, 32, 64] {
        // Consecutive 4-byte words: width * 4 bytes.
        assert_eq!(sectors(lanes(width, 0, 4, 4)), (width * 4).div_ceil(32));
        // 32-byte stride: one per lane.
        assert_eq!(sectors(lanes(width, 0, 32, 4)), width);
        // Broadcast.
        assert_eq!(sectors(lanes(width, 64, 0, 4)), 1);
        // 8-byte words.
        assert_eq!(sectors(lanes(width, 0, 8, 8)), (width * 8).div_ceil(32));
    }
}

#[test]
fn granularities_and_order() {
    let scattered = [(1000u64, 4u32), (0, 4), (999, 2), (64, 4), (4, 4)];
    assert_eq!(transactions(scattered, 32), 3);
    assert_eq!(transactions(scattered, 1), 4 + 4 + 2 + 4 + 4 - 1);
    assert_eq!(transactions(scattered, 4096), 1);
    assert_eq!(coalesce(scattered, 32).bytes, 18);
    let mut bases = vec![77];
    coalesce_into(scattered, 64, &mut bases);
    assert_eq!(bases, [0, 64, 960]);
}

#[test]
fn more_than_64_accesses() {
    // 200 lanes in reverse order, 4 bytes apart: 800 bytes = 25 sectors.
    let accesses: Vec<_> = (0..200u64).rev().map(|i| (4 * i, 4)).collect();
    assert_eq!(sectors(accesses.iter().copied()), 25);
}

#[test]
#[should_panic(expected = "power of two")]
fn granularity_must_be_a_power_of_two() {
    transactions([(0, 4)], 48);
}

#[test]
fn randomized_against_a_set() {
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..500 {
        let n = rng.usize(0..80);
        let g = 1u32 << rng.u32(0..8);
        let accesses: Vec<(u64, u32)> =
            (0..n).map(|_| (rng.u64(0..4096), [0, 1, 2, 4, 8, 16, 64, 300][rng.usize(0..8)])).collect();
        let mut expected = std::collections::BTreeSet::new();
        for &(a, s) in &accesses {
            for byte in a..a + u64::from(s) {
                expected.insert(byte / u64::from(g) * u64::from(g));
            }
        }
        let mut bases = Vec::new();
        let c = coalesce_into(accesses.iter().copied(), g, &mut bases);
        assert_eq!(bases, expected.iter().copied().collect::<Vec<_>>());
        assert_eq!(c.transactions, expected.len() as u64);
    }
}
