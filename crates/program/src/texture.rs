//! Texture and surface instructions on texture and surface objects: `tex`, `tld4`, `txq`, `suld.b`, `sust.b`,
//! `suq`. Each handle operand (a `.u64` register) is looked up among the launch's objects
//! (`device::texture`); a handle that names no object of the right kind is an error naming the thread and
//! the PTX line. Texels are read from (and surfaces written to) device memory with the same bounds checks as
//! `ld`/`st`. Legacy `.texref`/`.surfref` variables and the independent-sampler form are not supported.
//!
//! # `tex` and `tld4`
//!
//! Float coordinates (`.f32`) are scaled by the size of their dimension when the texture uses normalized
//! coordinates; integer coordinates (`.s32`) are texel indices, always fetched without filtering. A NaN
//! coordinate counts as 0, an infinite one as the largest finite value of its sign. Texel centres are at
//! `+0.5`:
//!
//! - **point**: texel `floor(x)`;
//! - **linear**: `i = floor(x - 0.5)`, `α = frac(x - 0.5)` rounded to 8 fractional bits (the hardware's
//!   9-bit fixed-point weights; ties away from zero), result `(1-α)·T[i] + α·T[i+1]` (bilinear and trilinear
//!   likewise). The weighted sum is evaluated in f64 — exact for texel values of up to 21 significant bits —
//!   and rounded once to f32; texels of weight 0 do not take part (so an infinite neighbour never turns a
//!   result into NaN).
//!
//! The address mode of each dimension maps every texel index of the footprint into the texture: clamp to the
//! edge, wrap (`i mod N`), mirror (period `2N`), or border (texels outside read as 0 in every channel). A
//! layer index (`a1d`, `a2d`, `acube`) is clamped to the layers there are. Cubemap directions pick a face by
//! their major axis (ties prefer x, then y) with the face coordinates of the CUDA Programming Guide's cubemap
//! table, `((s/m + 1)/2, (t/m + 1)/2)`, read as normalized coordinates clamped within the face (no seamless
//! filtering across faces).
//!
//! Channels convert as the read mode says: `.f32`/`.f16` texels as floats, 8/16-bit integers in
//! normalized-float mode as `v/255`, `v/65535` (unsigned) or `max(v/127, -1)`, `max(v/32767, -1)` (signed),
//! rounded once to f32; integer textures read as their element type return sign- or zero-extended integers
//! to `.s32`/`.u32` destinations. Asking for floats from an integer texture (or integers from a float
//! texture) is an error. Channels the format lacks read as 0, except alpha as 1 (`tld4` of a missing
//! component returns zeros). Only level 0 exists: `.level`, `.grad` and `.base` read it whatever the level
//! of detail. `tld4` returns the chosen component of the four texels of the bilinear footprint in
//! counter-clockwise order from the lower left: `(i, j+1)`, `(i+1, j+1)`, `(i+1, j)`, `(i, j)`. Sparse
//! residency predicates (`d|p`) are always set: every texel is resident.
//!
//! # `suld.b` / `sust.b`
//!
//! The x coordinate is a byte offset into the row (not scaled); y and z are rows and slices; `a1d`/`a2d` take
//! a layer first. The access must be naturally aligned (misaligned x is an error). Out of range, `.trap`
//! stops the kernel with an out-of-bounds error, `.clamp` moves the access to the nearest location inside
//! (x to the last whole access of the row), `.zero` loads zeros and drops stores.
//!
//! # `txq` / `suq`
//!
//! `width`, `height`, `depth` (0 where the kind has no such dimension, as in a `cudaExtent`), `array_size`,
//! `num_mipmap_levels` (1), `num_samples` (1), `normalized_coords`, `filter_mode` (0 point, 1 linear),
//! `addr_mode_0..2` (CUDA's `cudaTextureAddressMode` values), `force_unnormalized_coords` (0), and
//! `channel_data_type` / `channel_order` as the OpenCL enumeration values (`CL_FLOAT`, `CL_UNORM_INT8`, ...,
//! `CL_R`, `CL_RG`, `CL_RGBA`).
//!
//! Statistics count these as instructions; texture and surface accesses are not part of the memory
//! statistics.

use ir::{Modifier, Opcode, Operand, ScalarType, Word};
use smallvec::SmallVec;

use crate::types::Ty;
use crate::{Dst, OperandCx, Src};

/// Texture geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Geom {
    D1,
    D2,
    D3,
    A1d,
    A2d,
    Cube,
    Acube,
}

impl Geom {
    pub fn layered(self) -> bool {
        matches!(self, Geom::A1d | Geom::A2d | Geom::Acube)
    }
}

/// What a fetch returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    F32,
    S32,
    U32,
}

/// Surface boundary mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    Trap,
    Clamp,
    Zero,
}

/// A `txq` / `suq` query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    Width,
    Height,
    Depth,
    ChannelDataType,
    ChannelOrder,
    NormalizedCoords,
    ArraySize,
    NumMipmapLevels,
    NumSamples,
    FilterMode,
    AddrMode(u8),
    ForceUnnormalizedCoords,
}

/// A decoded texture or surface instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TexOp {
    /// `tex` (`gather` = `Some(component)` for `tld4`).
    Fetch {
        geom: Geom,
        ret: Ret,
        int_coords: bool,
        gather: Option<usize>,
        handle: Src,
        coords: SmallVec<[Src; 4]>,
        dsts: SmallVec<[Dst; 4]>,
        pred: Dst,
    },
    /// `txq` (`surface` false) or `suq` (true).
    Query { surface: bool, query: Query, handle: Src, dst: Dst },
    /// `suld.b` (`store` false, `regs` destinations) or `sust.b` (`store` true, `regs` sources).
    Surface {
        store: bool,
        geom: Geom,
        elem: u32,
        mode: Boundary,
        handle: Src,
        coords: SmallVec<[Src; 4]>,
        dsts: SmallVec<[Dst; 4]>,
        srcs: SmallVec<[Src; 4]>,
    },
}

pub fn geom_of(words: &[Word]) -> Option<Geom> {
    words.iter().find_map(|w| {
        Some(match w {
            Word::D1 => Geom::D1,
            Word::D2 => Geom::D2,
            Word::D3 => Geom::D3,
            Word::A1d => Geom::A1d,
            Word::A2d => Geom::A2d,
            Word::Cube => Geom::Cube,
            Word::Acube => Geom::Acube,
            _ => return None,
        })
    })
}

/// Splits `[handle, {coords}]` into the handle and the coordinate operands.
pub fn bracket(o: Option<&Operand>) -> Result<(&Operand, &[Operand]), &'static str> {
    match o {
        Some(Operand::Bracket(items)) => match items.as_slice() {
            [h, Operand::Vector(c)] => Ok((h, c)),
            [h, c @ (Operand::Reg(_) | Operand::Imm(_))] => Ok((h, std::slice::from_ref(c))),
            [_, _, _] => Err("the independent-sampler form `[tex, sampler, coords]` is not implemented"),
            _ => Err("expected `[handle, {coordinates}]`"),
        },
        _ => Err("expected `[handle, {coordinates}]`"),
    }
}

/// The handle of an object operand: a `.u64` register (texture and surface objects).
pub fn handle(cx: &mut OperandCx<'_, '_>, o: &Operand) -> Result<Src, &'static str> {
    match o {
        Operand::Reg(_) => Ok(cx.src(o, Ty::U64)),
        Operand::Address(ir::Address { base: ir::AddressBase::Reg(r), offset: 0 }) => {
            Ok(cx.src(&Operand::Reg(*r), Ty::U64))
        }
        Operand::Symbol(_) | Operand::Address(_) => {
            Err("texture and surface references (`.texref`, `.surfref`) are not implemented; use objects")
        }
        _ => Err("expected a texture or surface handle"),
    }
}

pub fn dst_list(cx: &mut OperandCx<'_, '_>, o: Option<&Operand>) -> Result<(SmallVec<[Dst; 4]>, Dst), &'static str> {
    match o {
        Some(Operand::Vector(items)) => Ok((items.iter().map(|o| cx.dst(o)).collect(), Dst::None)),
        Some(Operand::VectorPair(items, p)) => {
            let pred = cx.dst(&Operand::Reg(*p));
            Ok((items.iter().map(|o| cx.dst(o)).collect(), pred))
        }
        Some(o @ Operand::Reg(_)) => Ok((std::iter::once(cx.dst(o)).collect(), Dst::None)),
        _ => Err("expected a vector of destination registers"),
    }
}

/// Decodes a texture or surface instruction; `None` (after recording why) for forms the emulator lacks.
pub(crate) fn decode(cx: &mut OperandCx<'_, '_>) -> Option<TexOp> {
    match decode_inner(cx) {
        Ok(t) => Some(t),
        Err(why) => {
            cx.unsupported(&why);
            None
        }
    }
}

pub fn decode_inner(cx: &mut OperandCx<'_, '_>) -> Result<TexOp, String> {
    let inst = cx.inst();
    let words: SmallVec<[Word; 8]> = inst
        .modifiers
        .iter()
        .filter_map(|m| match m {
            Modifier::Word(w) => Some(*w),
            _ => None,
        })
        .collect();
    let has = |w: Word| words.contains(&w);
    let types: SmallVec<[ScalarType; 3]> = inst.types().collect();
    let vec = inst
        .modifiers
        .iter()
        .find_map(|m| match m {
            Modifier::Vector(n) => Some(u32::from(*n)),
            _ => None,
        })
        .unwrap_or(1);
    let ops = &inst.operands;
    match inst.opcode {
        Opcode::Tex | Opcode::Tld4 => {
            let gather = if inst.opcode == Opcode::Tld4 {
                Some(
                    [Word::R, Word::G, Word::B, Word::A]
                        .iter()
                        .position(|w| has(*w))
                        .ok_or("`tld4` needs a component `.r`, `.g`, `.b` or `.a`")?,
                )
            } else {
                None
            };
            let geom =
                geom_of(&words).ok_or("only the 1d, 2d, 3d, a1d, a2d, cube and acube geometries are implemented")?;
            if gather.is_some() && !matches!(geom, Geom::D2 | Geom::A2d) {
                return Err("`tld4` is implemented for 2d and a2d textures".into());
            }
            let ret = match types.first() {
                Some(ScalarType::F32) => Ret::F32,
                Some(ScalarType::S32) => Ret::S32,
                Some(ScalarType::U32) => Ret::U32,
                _ => return Err("only `.v4` fetches returning `.f32`, `.s32` or `.u32` are implemented".into()),
            };
            let int_coords = match types.get(1) {
                Some(ScalarType::F32) => false,
                Some(ScalarType::S32) => true,
                _ => return Err("coordinates are `.f32` or `.s32`".into()),
            };
            if vec != 4 {
                return Err("only `.v4` fetches are implemented".into());
            }
            if int_coords && (matches!(geom, Geom::Cube | Geom::Acube) || gather.is_some()) {
                return Err("cubemap fetches and `tld4` take `.f32` coordinates".into());
            }
            let (dsts, pred) = dst_list(cx, ops.first())?;
            if dsts.len() != 4 {
                return Err("a `.v4` fetch writes four registers".into());
            }
            let (h, coords) = bracket(ops.get(1))?;
            let handle = handle(cx, h)?;
            let need = match geom {
                Geom::D1 => 1,
                Geom::D2 | Geom::A1d => 2,
                _ => 4,
            };
            if coords.len() < need {
                return Err(format!("a {geom:?} fetch takes {need} coordinates"));
            }
            // Operands after the coordinates: the level of detail (`.level`), two gradients (`.grad`); any
            // further one is a texel offset or a depth-compare value.
            let extra = if has(Word::Level) {
                1
            } else if has(Word::Grad) {
                2
            } else {
                0
            };
            if ops.len() > 2 + extra {
                return Err("texel offsets and depth comparison are not implemented".into());
            }
            let coord_ty = if int_coords { Ty::S32 } else { Ty::F32 };
            let coords = coords
                .iter()
                .enumerate()
                .map(|(k, o)| cx.src(o, if k == 0 && geom.layered() { Ty::U32 } else { coord_ty }))
                .collect();
            Ok(TexOp::Fetch { geom, ret, int_coords, gather, handle, coords, dsts, pred })
        }
        Opcode::Txq | Opcode::Suq => {
            let surface = inst.opcode == Opcode::Suq;
            if has(Word::Level) {
                return Err("`txq.level` is not implemented (textures have one level)".into());
            }
            let query = [
                (Word::Width, Query::Width),
                (Word::Height, Query::Height),
                (Word::Depth, Query::Depth),
                (Word::ChannelDataType, Query::ChannelDataType),
                (Word::ChannelOrder, Query::ChannelOrder),
                (Word::NormalizedCoords, Query::NormalizedCoords),
                (Word::ArraySize, Query::ArraySize),
                (Word::NumMipmapLevels, Query::NumMipmapLevels),
                (Word::NumSamples, Query::NumSamples),
                (Word::FilterMode, Query::FilterMode),
                (Word::AddrMode0, Query::AddrMode(0)),
                (Word::AddrMode1, Query::AddrMode(1)),
                (Word::AddrMode2, Query::AddrMode(2)),
                (Word::ForceUnnormalizedCoords, Query::ForceUnnormalizedCoords),
            ]
            .into_iter()
            .find(|(w, _)| has(*w))
            .map(|(_, q)| q)
            .ok_or("query not implemented")?;
            let dst = match ops.first() {
                Some(o @ Operand::Reg(_)) => cx.dst(o),
                _ => return Err("expected a destination register".into()),
            };
            let h = match ops.get(1) {
                Some(Operand::Bracket(items)) if items.len() == 1 => &items[0],
                Some(o) => o,
                None => return Err("expected `[handle]`".into()),
            };
            let handle = handle(cx, h)?;
            Ok(TexOp::Query { surface, query, handle, dst })
        }
        Opcode::Suld | Opcode::Sust => {
            let store = inst.opcode == Opcode::Sust;
            if !has(Word::B) {
                return Err("only unformatted (`.b`) surface accesses are implemented".into());
            }
            let geom = geom_of(&words)
                .filter(|g| !matches!(g, Geom::Cube | Geom::Acube))
                .ok_or("surfaces are 1d, 2d, 3d, a1d or a2d")?;
            let elem = match types.first() {
                Some(ScalarType::B8) => 1,
                Some(ScalarType::B16) => 2,
                Some(ScalarType::B32) => 4,
                Some(ScalarType::B64) => 8,
                _ => return Err("surface data is `.b8`, `.b16`, `.b32` or `.b64`".into()),
            };
            let mode = if has(Word::Clamp) {
                Boundary::Clamp
            } else if has(Word::Zero) {
                Boundary::Zero
            } else {
                Boundary::Trap
            };
            let (addr_at, data_at) = if store { (0, 1) } else { (1, 0) };
            let (h, coords) = bracket(ops.get(addr_at))?;
            let handle = handle(cx, h)?;
            let need = match geom {
                Geom::D1 => 1,
                Geom::D2 | Geom::A1d => 2,
                _ => 4,
            };
            if coords.len() < need {
                return Err(format!("a {geom:?} surface access takes {need} coordinates"));
            }
            let coords = coords.iter().map(|o| cx.src(o, Ty::S32)).collect();
            let (mut dsts, mut srcs) = (SmallVec::new(), SmallVec::new());
            if store {
                let ty = match elem {
                    1 => Ty::B8,
                    2 => Ty::B16,
                    4 => Ty::B32,
                    _ => Ty::B64,
                };
                srcs = match ops.get(data_at) {
                    Some(Operand::Vector(items)) => items.iter().map(|o| cx.src(o, ty)).collect(),
                    Some(o) => std::iter::once(cx.src(o, ty)).collect(),
                    None => return Err("expected the data to store".into()),
                };
                if srcs.len() as u32 != vec {
                    return Err("the vector width and the number of sources differ".into());
                }
            } else {
                dsts = dst_list(cx, ops.get(data_at))?.0;
                if dsts.len() as u32 != vec {
                    return Err("the vector width and the number of destinations differ".into());
                }
            }
            Ok(TexOp::Surface { store, geom, elem, mode, handle, coords, dsts, srcs })
        }
        _ => Err("not a texture or surface instruction".into()),
    }
}
