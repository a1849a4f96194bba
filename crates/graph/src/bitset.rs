//! A small fixed-domain dense bit set, used for liveness and node sets.

use std::fmt;

const WORD_BITS: usize = 64;

/// A dense set of `usize` values drawn from a fixed domain `0..domain_size()`.
///
/// Set operations between two sets require equal domain sizes (checked with
/// `assert!`), which catches mixing up, say, a register set with a node set.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct BitSet {
    words: Vec<u64>,
    domain: usize,
}

impl BitSet {
    /// An empty set over `0..domain_size`.
    pub fn new(domain_size: usize) -> Self {
        BitSet { words: vec![0; domain_size.div_ceil(WORD_BITS)], domain: domain_size }
    }

    /// The set containing every value of `0..domain_size`.
    pub fn full(domain_size: usize) -> Self {
        let mut s = BitSet { words: vec![!0; domain_size.div_ceil(WORD_BITS)], domain: domain_size };
        s.clear_excess_bits();
        s
    }

    /// A set over `0..domain_size` holding `values` (panics if one is out of
    /// the domain).
    pub fn from_values(domain_size: usize, values: impl IntoIterator<Item = usize>) -> Self {
        let mut s = BitSet::new(domain_size);
        for v in values {
            s.insert(v);
        }
        s
    }

    /// Size of the domain the set is drawn from (not the number of elements).
    pub fn domain_size(&self) -> usize {
        self.domain
    }

    /// Number of elements in the set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True if the set has no elements.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// True if `v` is in the set. Values outside the domain are never in it.
    pub fn contains(&self, v: usize) -> bool {
        v < self.domain && self.words[v / WORD_BITS] & (1 << (v % WORD_BITS)) != 0
    }

    /// Adds `v`; returns true if it was not already present.
    ///
    /// # Panics
    /// If `v >= domain_size()`.
    pub fn insert(&mut self, v: usize) -> bool {
        assert!(v < self.domain, "BitSet::insert({v}) out of domain {}", self.domain);
        let w = &mut self.words[v / WORD_BITS];
        let bit = 1 << (v % WORD_BITS);
        let added = *w & bit == 0;
        *w |= bit;
        added
    }

    /// Removes `v`; returns true if it was present.
    pub fn remove(&mut self, v: usize) -> bool {
        if v >= self.domain {
            return false;
        }
        let w = &mut self.words[v / WORD_BITS];
        let bit = 1 << (v % WORD_BITS);
        let present = *w & bit != 0;
        *w &= !bit;
        present
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// `self |= other`; returns true if `self` changed.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        self.check_domain(other);
        let mut changed = false;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            let new = *a | b;
            changed |= new != *a;
            *a = new;
        }
        changed
    }

    /// `self &= other`; returns true if `self` changed.
    pub fn intersect_with(&mut self, other: &BitSet) -> bool {
        self.check_domain(other);
        let mut changed = false;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            let new = *a & b;
            changed |= new != *a;
            *a = new;
        }
        changed
    }

    /// `self -= other`; returns true if `self` changed.
    pub fn subtract(&mut self, other: &BitSet) -> bool {
        self.check_domain(other);
        let mut changed = false;
        for (a, &b) in self.words.iter_mut().zip(&other.words) {
            let new = *a & !b;
            changed |= new != *a;
            *a = new;
        }
        changed
    }

    /// True if every element of `self` is in `other`.
    pub fn is_subset(&self, other: &BitSet) -> bool {
        self.check_domain(other);
        self.words.iter().zip(&other.words).all(|(&a, &b)| a & !b == 0)
    }

    /// Elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * WORD_BITS + bit)
            })
        })
    }

    /// The smallest element `>= from`, if any.
    pub fn next_at_or_after(&self, from: usize) -> Option<usize> {
        if from >= self.domain {
            return None;
        }
        let mut wi = from / WORD_BITS;
        let mut w = self.words[wi] & (!0u64 << (from % WORD_BITS));
        loop {
            if w != 0 {
                return Some(wi * WORD_BITS + w.trailing_zeros() as usize);
            }
            wi += 1;
            w = *self.words.get(wi)?;
        }
    }

    /// The raw 64-bit words, least significant bit = smallest value. Bits at
    /// or above `domain_size()` are always zero.
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// `self = uses | (out & !defs)` in one pass: the liveness transfer
    /// function. Returns true if `self` changed.
    pub(crate) fn assign_transfer(&mut self, uses: &BitSet, out: &BitSet, defs: &BitSet) -> bool {
        let mut changed = false;
        for (((a, &u), &o), &d) in self.words.iter_mut().zip(&uses.words).zip(&out.words).zip(&defs.words) {
            let new = u | (o & !d);
            changed |= new != *a;
            *a = new;
        }
        changed
    }

    fn check_domain(&self, other: &BitSet) {
        assert_eq!(self.domain, other.domain, "BitSet operation between different domain sizes");
    }

    fn clear_excess_bits(&mut self) {
        let rem = self.domain % WORD_BITS;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }
}

impl fmt::Debug for BitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
