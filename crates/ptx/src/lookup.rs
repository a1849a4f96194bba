//! Fast keyword lookup for the parser.
//!
//! The `from_name` functions of the keyword tables are `match`es on strings, which compile to a chain of
//! comparisons: fine for the printer and the IR, but the parser looks up every opcode and modifier of every
//! instruction. These open-addressing hash tables, built once from the same tables, make each lookup one hash
//! of a few bytes and usually one string comparison.

use std::sync::OnceLock;

use crate::keywords::{Modifier, Opcode, ScalarType, StateSpace, Word};

#[derive(Debug)]
struct Table<T: Copy> {
    /// Slot `i` holds `entry index + 1`, or 0 when empty.
    slots: Box<[u16]>,
    entries: Vec<(&'static str, T)>,
}

#[inline]
fn hash(s: &[u8]) -> u32 {
    // FNV-1a: keywords are short, so a byte loop is as fast as anything cleverer.
    let mut h: u32 = 0x811c_9dc5;
    for &b in s {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

impl<T: Copy> Table<T> {
    fn new(entries: Vec<(&'static str, T)>) -> Table<T> {
        let cap = (entries.len() * 4).next_power_of_two().max(16);
        let mut slots = vec![0u16; cap].into_boxed_slice();
        for (i, (name, _)) in entries.iter().enumerate() {
            let mut at = hash(name.as_bytes()) as usize & (cap - 1);
            // First spelling wins, matching the order `Modifier::from_name` tries the tables in.
            loop {
                match slots.get(at).copied() {
                    Some(0) => {
                        if let Some(slot) = slots.get_mut(at) {
                            *slot = (i + 1) as u16;
                        }
                        break;
                    }
                    Some(j) if entries.get(usize::from(j) - 1).is_some_and(|e| e.0 == *name) => break,
                    _ => at = (at + 1) & (cap - 1),
                }
            }
        }
        Table { slots, entries }
    }

    #[inline]
    fn get(&self, key: &str) -> Option<T> {
        let mask = self.slots.len() - 1;
        let mut at = hash(key.as_bytes()) as usize & mask;
        loop {
            let slot = usize::from(*self.slots.get(at)?);
            if slot == 0 {
                return None;
            }
            let (name, value) = *self.entries.get(slot - 1)?;
            if name == key {
                return Some(value);
            }
            at = (at + 1) & mask;
        }
    }
}

fn opcodes() -> &'static Table<Opcode> {
    static T: OnceLock<Table<Opcode>> = OnceLock::new();
    T.get_or_init(|| Table::new(Opcode::ALL.iter().map(|&o| (o.as_str(), o)).collect()))
}

fn modifiers() -> &'static Table<Modifier> {
    static T: OnceLock<Table<Modifier>> = OnceLock::new();
    T.get_or_init(|| {
        let mut e: Vec<(&'static str, Modifier)> = Vec::new();
        e.extend(ScalarType::ALL.iter().map(|&t| (t.as_str(), Modifier::Type(t))));
        e.extend(Word::ALL.iter().map(|&w| (w.as_str(), Modifier::Word(w))));
        e.extend(StateSpace::ALL.iter().map(|&s| (s.as_str(), Modifier::Space(s))));
        e.extend([("v2", Modifier::Vector(2)), ("v4", Modifier::Vector(4)), ("v8", Modifier::Vector(8))]);
        Table::new(e)
    })
}

fn types() -> &'static Table<ScalarType> {
    static T: OnceLock<Table<ScalarType>> = OnceLock::new();
    T.get_or_init(|| Table::new(ScalarType::ALL.iter().map(|&t| (t.as_str(), t)).collect()))
}

/// An opcode by its spelling (`add`).
#[inline]
pub fn opcode(name: &str) -> Option<Opcode> {
    opcodes().get(name)
}

/// A modifier by its spelling without the dot (`s32`, `L2::cache_hint`, `m16n8k16`); agrees with
/// [`Modifier::from_name`].
#[inline]
pub fn modifier(name: &str) -> Option<Modifier> {
    match modifiers().get(name) {
        Some(m) => Some(m),
        // Shapes are open-ended (`m16n8k16`), so they are parsed rather than tabled.
        None if name.starts_with('m') => Modifier::from_name(name),
        None => None,
    }
}

/// A scalar type by its spelling without the dot.
#[inline]
pub fn scalar_type(name: &str) -> Option<ScalarType> {
    types().get(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_from_name() {
        for &o in Opcode::ALL {
            assert_eq!(opcode(o.as_str()), Some(o));
            assert_eq!(Opcode::from_name(o.as_str()), Some(o), "duplicate opcode spelling {o}");
        }
        for &w in Word::ALL {
            assert_eq!(Word::from_name(w.as_str()), Some(w), "duplicate word spelling {w}");
            assert_eq!(modifier(w.as_str()), Modifier::from_name(w.as_str()));
        }
        for &t in ScalarType::ALL {
            assert_eq!(modifier(t.as_str()), Some(Modifier::Type(t)));
            assert_eq!(scalar_type(t.as_str()), Some(t));
        }
        for &s in StateSpace::ALL {
            assert_eq!(modifier(s.as_str()), Modifier::from_name(s.as_str()));
        }
        for name in ["m16n8k16", "m8n8", "v4", "q32", "s33", "", "mma", "m99999n1"] {
            assert_eq!(modifier(name), Modifier::from_name(name), "{name}");
        }
        assert_eq!(opcode("foo"), None);
    }
}
