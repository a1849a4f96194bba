//! Warp-collective data exchange (`shfl`, `vote`, `match`, `redux`, `activemask`, `elect`): what each lane of a warp
//! receives, given every executing lane's operands. Both engines call this, the emulator once per warp
//! instruction, the JIT once per warp at the point where all its lanes have posted their operands.

use simt::LaneMask;

use crate::{alu, Kind, Op, ShflMode, Src, Sub, VoteMode, WARP};

/// Computes `out` (and `out2`, the predicate of `shfl`/`match.all`) for every lane of `exec`, from the operands
/// `a`, `b`, `c` of all lanes. `active` is the warp's active mask (what `activemask` returns).
pub fn exec(
    op: &Op,
    exec: LaneMask,
    active: LaneMask,
    [a, b, c]: [&[u64; WARP]; 3],
    out: &mut [u64; WARP],
    out2: &mut [u64; WARP],
) {
    match (op.kind, op.m.sub) {
        (Kind::Shfl, Sub::Shfl(mode)) => {
            for lane in exec.iter() {
                let l = lane as usize;
                // The ISA takes the lane or offset from b[4:0]: an offset of 1000 + k acts as k.
                let (bval, cval) = (b[l] as u32 & 0x1f, c[l] as u32);
                let clamp = cval & 0x1f;
                let seg_mask = (cval >> 8) & 0x1f;
                let max_lane = (lane & seg_mask) | (clamp & !seg_mask);
                let min_lane = lane & seg_mask;
                let (j, pval) = match mode {
                    ShflMode::Up => {
                        let j = lane as i64 - i64::from(bval);
                        if j >= i64::from(max_lane) {
                            (j as u32, true)
                        } else {
                            (lane, false)
                        }
                    }
                    ShflMode::Down => {
                        let j = lane + bval;
                        if j <= max_lane {
                            (j, true)
                        } else {
                            (lane, false)
                        }
                    }
                    ShflMode::Bfly => {
                        let j = lane ^ bval;
                        if j <= max_lane {
                            (j, true)
                        } else {
                            (lane, false)
                        }
                    }
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !seg_mask);
                        if j <= max_lane {
                            (j, true)
                        } else {
                            (lane, false)
                        }
                    }
                };
                let j = (j & 31) as usize;
                out[l] = a[j];
                out2[l] = u64::from(pval);
            }
        }
        // The `.sync` forms combine, for each lane, only the executing lanes named in that lane's member mask.
        (Kind::Vote, Sub::Vote(mode)) => {
            let mut ballot = 0u64;
            for lane in exec.iter() {
                if a[lane as usize] != 0 {
                    ballot |= 1 << lane;
                }
            }
            for lane in exec.iter() {
                let l = lane as usize;
                let members = exec.0 & member_mask(&op.b, b[l]);
                let votes = ballot & members;
                out[l] = match mode {
                    VoteMode::All => u64::from(votes == members),
                    VoteMode::Any => u64::from(votes != 0),
                    VoteMode::Uni => u64::from(votes == members || votes == 0),
                    VoteMode::Ballot => votes,
                };
            }
        }
        (Kind::Match, Sub::MatchAll(all)) => {
            for lane in exec.iter() {
                let l = lane as usize;
                let members = exec.0 & member_mask(&op.b, b[l]);
                let mut m = 0u64;
                for other in LaneMask(members).iter() {
                    if a[other as usize] & op.ty.mask() == a[l] & op.ty.mask() {
                        m |= 1 << other;
                    }
                }
                if all {
                    let same = m == members;
                    out[l] = if same { m } else { 0 };
                    out2[l] = u64::from(same);
                } else {
                    out[l] = m;
                }
            }
        }
        (Kind::Redux, Sub::Atom(aop)) => {
            for lane in exec.iter() {
                let l = lane as usize;
                let members = LaneMask(exec.0 & member_mask(&op.b, b[l]));
                let mut acc: Option<u64> = None;
                for other in members.iter() {
                    let v = op.ty.extend(a[other as usize]);
                    acc = Some(match acc {
                        None => v,
                        Some(x) => alu::reduce(aop, op.ty, x, v),
                    });
                }
                out[l] = acc.unwrap_or(0) & op.ty.mask();
            }
        }
        (Kind::Activemask, _) => *out = [active.0; WARP],
        // The leader is the lowest executing lane of the member mask (the ISA only asks that it be one of them,
        // the same one for the same mask every time). A lane outside its own mask is undefined behaviour; it
        // elects among the others like the rest.
        (Kind::Elect, _) => {
            for lane in exec.iter() {
                let l = lane as usize;
                let members = exec.0 & member_mask(&op.b, b[l]);
                let leader = u64::from(members.trailing_zeros()) & 31;
                out[l] = leader;
                out2[l] = u64::from(members != 0 && leader == u64::from(lane));
            }
        }
        _ => {}
    }
}

/// The member mask of a `.sync` warp instruction (all lanes for the old forms without one).
pub fn member_mask(src: &Src, value: u64) -> u64 {
    if *src == Src::None {
        u64::from(u32::MAX)
    } else {
        value & u64::from(u32::MAX)
    }
}
