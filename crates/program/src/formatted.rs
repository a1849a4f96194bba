//! Formatted surface stores (PTX ISA, "Surface Instructions: sust"): `sust.p` writes a vector of 32-bit
//! values to one surface sample, its elements taken left to right as the R, G, B, A channels. x is a sample
//! index (scaled by the sample size), y and z rows and slices, `a1d`/`a2d` a layer first; out of range, the
//! boundary modes of `suld`/`sust` (`texture.rs`).
//!
//! The ISA reads the values by the sample format: `.f32` for float formats, `.u32`/`.s32` for unsigned and
//! signed integer formats (lockstep's integer surfaces are not normalized). lockstep stores them:
//!
//! - 32-bit channels (`f32`, `u32`, `s32`): the value's bits;
//! - `f16` channels: the `.f32` value rounded to nearest even;
//! - 8- and 16-bit integer channels: an error naming the thread and the line, since the ISA does not say
//!   how a 32-bit integer narrows (wrapping or saturating) and no answer is better than a guessed one.
//!
//! Values for channels the sample lacks are ignored. Channels the vector does not reach are "unpredictable"
//! in the ISA; lockstep leaves them as they were.

use device::texture::ChannelType;
use device::{ErrorKind, ExecError};
use scalar::half::{self, F16};
use scalar::round::Rounding;
use simt::LaneMask;
use smallvec::SmallVec;

use crate::texture::{surface_location, Boundary, Geom};
use crate::{Space, Src, WarpAccess, WARP};

/// `sust.p` for the lanes of `exec`.
pub fn store(
    x: &mut dyn WarpAccess,
    exec: LaneMask,
    geom: Geom,
    mode: Boundary,
    handle: &Src,
    coords: &[Src],
    srcs: &[Src],
) -> Result<(), ExecError> {
    let handles = x.read(handle);
    let coords: SmallVec<[[u64; WARP]; 4]> = coords.iter().map(|c| x.read(c)).collect();
    let data: SmallVec<[[u64; WARP]; 4]> = srcs.iter().map(|s| x.read(s)).collect();
    for lane in exec.iter() {
        let l = lane as usize;
        // An unknown handle: surface_location names it.
        let format = x.textures().surface(handles[l]).map(|s| s.resource.format);
        let sample = format.map_or(4, |f| f.bytes());
        let c: SmallVec<[i64; 4]> = coords.iter().map(|v| i64::from(v[l] as u32 as i32)).collect();
        let Some(base) = surface_location(x, lane, "sust.p", geom, handles[l], &c, sample, mode, sample)? else {
            continue;
        };
        let Some(format) = format else { continue };
        let width = format.ty.bytes();
        for (k, values) in data.iter().enumerate().take(format.channels as usize) {
            let v = values[l] as u32;
            let bits = match format.ty {
                ChannelType::F32 | ChannelType::U32 | ChannelType::S32 => u64::from(v),
                ChannelType::F16 => u64::from(half::from_f32::<F16>(f32::from_bits(v), Rounding::Rn)),
                ty => {
                    let m = format!(
                        "`sust.p` to a surface of {ty:?} channels: the ISA does not define how a 32-bit value narrows \
                         to them (32-bit and f16 channels are supported)"
                    );
                    return Err(x.error(lane, ErrorKind::Invalid(m)));
                }
            };
            x.store(lane, Space::Global, base + u64::from(width) * k as u64, width, bits)?;
        }
    }
    Ok(())
}
