//! Texture and surface instructions on texture and surface objects: `tex`, `tld4`, `txq`, `suld.b`, `sust.b`,
//! `suq`, `istypep`, `sured` (`sured.rs`) and `sust.p` (`formatted.rs`). Each handle operand (a `.u64` register) is looked up among the launch's objects
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
use crate::OperandCx;
use crate::WarpAccess;
use crate::WARP;
use crate::{Dst, Extra, Op, Space, Src};
use device::texture::{AddressMode, ChannelType, FilterMode, Kind as ResKind, ReadMode, Resource, TextureDesc};
use device::{ErrorKind, ExecError};
use scalar::half::{self, F16};
use simt::LaneMask;

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
    /// `sured` (`sured.rs`).
    Reduce(crate::sured::SurfaceRed),
    /// `sust.p` (`formatted.rs`).
    FormattedStore { geom: Geom, mode: Boundary, handle: Src, coords: SmallVec<[Src; 4]>, srcs: SmallVec<[Src; 4]> },
    /// `istypep.texref` (`surface` false) or `istypep.surfref` (true): whether the handle names such an
    /// object of the launch.
    IsType { surface: bool, handle: Src, dst: Dst },
}

impl TexOp {
    /// Calls `src` for every source operand and `dst` for every destination.
    pub fn operands(&self, mut src: impl FnMut(&Src), mut dst: impl FnMut(&Dst)) {
        match self {
            TexOp::Fetch { handle, coords, dsts, pred, .. } => {
                src(handle);
                coords.iter().for_each(&mut src);
                dsts.iter().for_each(&mut dst);
                dst(pred);
            }
            TexOp::Query { handle, dst: d, .. } => {
                src(handle);
                dst(d);
            }
            TexOp::Surface { handle, coords, dsts, srcs, .. } => {
                src(handle);
                coords.iter().for_each(&mut src);
                srcs.iter().for_each(&mut src);
                dsts.iter().for_each(&mut dst);
            }
            TexOp::FormattedStore { handle, coords, srcs, .. } => {
                src(handle);
                coords.iter().for_each(&mut src);
                srcs.iter().for_each(&mut src);
            }
            TexOp::IsType { handle, dst: d, .. } => {
                src(handle);
                dst(d);
            }
            TexOp::Reduce(r) => {
                src(&r.handle);
                r.coords.iter().for_each(&mut src);
                src(&r.value);
            }
        }
    }
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
    let words: SmallVec<[Word; 8]> = inst.words().collect();
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
            let formatted = store && has(Word::P);
            if !has(Word::B) && !formatted {
                return Err("formatted surface loads (`suld.p`) are not implemented".into());
            }
            if formatted && types.first() != Some(&ScalarType::B32) {
                return Err("`sust.p` stores `.b32` values".into());
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
                if formatted {
                    return Ok(TexOp::FormattedStore { geom, mode, handle, coords, srcs });
                }
            } else {
                dsts = dst_list(cx, ops.get(data_at))?.0;
                if dsts.len() as u32 != vec {
                    return Err("the vector width and the number of destinations differ".into());
                }
            }
            Ok(TexOp::Surface { store, geom, elem, mode, handle, coords, dsts, srcs })
        }
        Opcode::Sured => crate::sured::decode(cx, &words, &types).map(TexOp::Reduce),
        Opcode::Istypep => {
            let surface = match types.first() {
                Some(ScalarType::Texref) => false,
                Some(ScalarType::Surfref) => true,
                Some(ScalarType::Samplerref) => {
                    return Err("`istypep.samplerref` is not supported: lockstep has no sampler objects (the \
                                independent-sampler mode is not implemented)"
                        .into())
                }
                _ => return Err("`istypep` takes `.texref`, `.samplerref` or `.surfref`".into()),
            };
            let dst = match ops.first() {
                Some(o @ Operand::Reg(_)) => cx.dst(o),
                _ => return Err("expected a destination predicate".into()),
            };
            let handle = match ops.get(1) {
                Some(o @ Operand::Reg(_)) => handle(cx, o)?,
                _ => return Err("`istypep` takes a 64-bit handle register".into()),
            };
            Ok(TexOp::IsType { surface, handle, dst })
        }
        _ => Err("not a texture or surface instruction".into()),
    }
}

/// Executes a texture or surface instruction for the lanes of `exec`.
pub fn exec(x: &mut dyn WarpAccess, exec: LaneMask, op: &Op) -> Result<(), ExecError> {
    let Some(Extra::Texture(t)) = op.extra.as_deref() else { return Ok(()) };
    match t {
        TexOp::Fetch { handle, coords, dsts, pred, .. } => {
            let handles = x.read(handle);
            let coords: SmallVec<[[u64; WARP]; 4]> = coords.iter().map(|c| x.read(c)).collect();
            let mut out = [[0u64; WARP]; 4];
            for lane in exec.iter() {
                let l = lane as usize;
                let c: SmallVec<[u64; 4]> = coords.iter().map(|v| v[l]).collect();
                let v = fetch_lane(x, lane, t, handles[l], &c)?;
                for (k, o) in out.iter_mut().enumerate() {
                    o[l] = v[k];
                }
            }
            for (d, v) in dsts.iter().zip(&out) {
                x.write(*d, v, exec);
            }
            if *pred != Dst::None {
                x.write(*pred, &[1; WARP], exec);
            }
            Ok(())
        }
        TexOp::Query { surface, query, handle, dst } => {
            let handles = x.read(handle);
            let mut out = [0u64; WARP];
            for lane in exec.iter() {
                let l = lane as usize;
                let h = handles[l];
                let (res, desc) = if *surface {
                    (x.textures().surface(h).map(|s| s.resource), None)
                } else {
                    let t = x.textures().texture(h).copied();
                    (t.map(|t| t.resource), t)
                };
                let Some(res) = res else {
                    let name = if *surface { "suq" } else { "txq" };
                    let why = x.textures().describe(h);
                    return Err(x.error(lane, ErrorKind::Invalid(format!("`{name}` on handle {why}"))));
                };
                out[l] = u64::from(query_value(&res, desc.as_ref(), *query));
            }
            x.write(*dst, &out, exec);
            Ok(())
        }
        TexOp::Surface { store, geom, elem, mode, handle, coords, dsts, srcs } => {
            surface_access(x, exec, *store, *geom, *elem, *mode, handle, coords, dsts, srcs)
        }
        TexOp::Reduce(r) => crate::sured::exec(x, exec, r),
        TexOp::FormattedStore { geom, mode, handle, coords, srcs } => {
            crate::formatted::store(x, exec, *geom, *mode, handle, coords, srcs)
        }
        TexOp::IsType { surface, handle, dst } => {
            let handles = x.read(handle);
            let mut out = [0u64; WARP];
            for lane in exec.iter() {
                let h = handles[lane as usize];
                let objects = x.textures();
                let is = if *surface { objects.surface(h).is_some() } else { objects.texture(h).is_some() };
                out[lane as usize] = u64::from(is);
            }
            x.write(*dst, &out, exec);
            Ok(())
        }
    }
}

/// `tex` or `tld4` for one lane, from its handle and coordinates: the four values the instruction writes
/// (its predicate, where it has one, is true). `exec` calls it lane by lane; the JIT calls it per thread.
pub fn fetch_lane(
    x: &mut dyn WarpAccess,
    lane: u32,
    t: &TexOp,
    handle: u64,
    coords: &[u64],
) -> Result<[u64; 4], ExecError> {
    let TexOp::Fetch { geom, ret, int_coords, gather, .. } = t else { return Ok([0; 4]) };
    let name = if gather.is_some() { "tld4" } else { "tex" };
    let Some(desc) = x.textures().texture(handle).copied() else {
        let why = x.textures().describe(handle);
        return Err(x.error(lane, ErrorKind::Invalid(format!("`{name}` on handle {why}"))));
    };
    check_geometry(x, lane, name, &desc.resource, *geom)?;
    if (*ret == Ret::F32) != desc.returns_float() {
        let why = if desc.returns_float() {
            "the texture returns floats; the instruction asks for integers"
        } else {
            "the texture returns integers (element-type reads of integer texels); the instruction asks for floats"
        };
        return Err(x.error(lane, ErrorKind::Invalid(format!("`{name}`: {why}"))));
    }
    let mut s = Sampler { x, lane, desc: &desc };
    match gather {
        Some(comp) => s.gather(*geom, coords, *comp),
        None => s.fetch(*geom, *int_coords, coords),
    }
}

/// A texture's kind must match the instruction's geometry.
fn check_geometry(x: &dyn WarpAccess, lane: u32, name: &str, r: &Resource, geom: Geom) -> Result<(), ExecError> {
    if geometry_matches(geom, r.kind) {
        Ok(())
    } else {
        Err(x.error(
            lane,
            ErrorKind::Invalid(format!("`{name}.{geom:?}` on a {:?} object (the geometries must match)", r.kind)),
        ))
    }
}

/// Whether an instruction's geometry fits a resource's kind.
fn geometry_matches(geom: Geom, kind: ResKind) -> bool {
    matches!(
        (geom, kind),
        (Geom::D1, ResKind::D1)
            | (Geom::D2, ResKind::D2)
            | (Geom::D3, ResKind::D3)
            | (Geom::A1d, ResKind::Layered1D)
            | (Geom::A2d, ResKind::Layered2D)
            | (Geom::Cube, ResKind::Cube)
            | (Geom::Acube, ResKind::CubeLayered)
    )
}

/// The OpenCL `channel_data_type` of a format read in `mode`.
fn channel_data_type(ty: ChannelType, mode: ReadMode) -> u32 {
    let norm = mode == ReadMode::NormalizedFloat;
    match (ty, norm) {
        (ChannelType::S8, true) => 0x10D0,
        (ChannelType::S16, true) => 0x10D1,
        (ChannelType::U8, true) => 0x10D2,
        (ChannelType::U16, true) => 0x10D3,
        (ChannelType::S8, _) => 0x10D7,
        (ChannelType::S16, _) => 0x10D8,
        (ChannelType::S32, _) => 0x10D9,
        (ChannelType::U8, _) => 0x10DA,
        (ChannelType::U16, _) => 0x10DB,
        (ChannelType::U32, _) => 0x10DC,
        (ChannelType::F16, _) => 0x10DD,
        (ChannelType::F32, _) => 0x10DE,
    }
}

fn query_value(r: &Resource, t: Option<&TextureDesc>, q: Query) -> u32 {
    let mode = t.map_or(ReadMode::ElementType, |t| t.sampler.read_mode);
    match q {
        Query::Width => r.width,
        Query::Height => r.height,
        Query::Depth => r.depth,
        Query::ArraySize => r.layers,
        Query::ChannelDataType => channel_data_type(r.format.ty, mode),
        // CL_R, CL_RG, CL_RGBA
        Query::ChannelOrder => match r.format.channels {
            1 => 0x10B0,
            2 => 0x10B2,
            _ => 0x10B5,
        },
        Query::NumMipmapLevels | Query::NumSamples => 1,
        Query::NormalizedCoords => u32::from(t.is_some_and(|t| t.sampler.normalized)),
        Query::FilterMode => u32::from(t.is_some_and(|t| t.sampler.filter == FilterMode::Linear)),
        Query::AddrMode(k) => t.map_or(0, |t| t.sampler.address[k as usize].code()),
        Query::ForceUnnormalizedCoords => 0,
    }
}

/// One lane's texture read.
struct Sampler<'s> {
    x: &'s mut dyn WarpAccess,
    lane: u32,
    desc: &'s TextureDesc,
}

/// Maps texel index `i` of a dimension of `n` texels into the texture, or `None` for a border texel.
fn address(i: i64, n: u32, mode: AddressMode) -> Option<u32> {
    let n = i64::from(n.max(1));
    Some(match mode {
        AddressMode::Clamp => i.clamp(0, n - 1),
        AddressMode::Border => {
            if (0..n).contains(&i) {
                i
            } else {
                return None;
            }
        }
        AddressMode::Wrap => i.rem_euclid(n),
        AddressMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m >= n {
                2 * n - 1 - m
            } else {
                m
            }
        }
    } as u32)
}

/// The 8-bit fixed-point filter weight of a fraction in [0, 1).
fn weight(frac: f64) -> f64 {
    (frac * 256.0).round() / 256.0
}

/// A float coordinate: NaN counts as 0, an infinity as the largest finite f32 of its sign.
fn f32_coord(bits: u64) -> f64 {
    let v = f32::from_bits(bits as u32);
    if v.is_nan() {
        0.0
    } else {
        f64::from(v.clamp(-f32::MAX, f32::MAX))
    }
}

/// The face and face coordinates (normalized) of a cubemap direction.
fn cube_face(x: f64, y: f64, z: f64) -> (u32, f64, f64) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, m, s, t) = if ax >= ay && ax >= az {
        if x >= 0.0 {
            (0, ax, -z, -y)
        } else {
            (1, ax, z, -y)
        }
    } else if ay >= az {
        if y >= 0.0 {
            (2, ay, x, z)
        } else {
            (3, ay, x, -z)
        }
    } else if z >= 0.0 {
        (4, az, x, -y)
    } else {
        (5, az, -x, -y)
    };
    if m == 0.0 {
        return (face, 0.5, 0.5);
    }
    (face, (s / m + 1.0) / 2.0, (t / m + 1.0) / 2.0)
}

/// Where a fetch samples: the slice (layer, cube face) for 1-D/2-D kinds, and how its coordinates read.
struct Place {
    /// Coordinates per dimension (texel units before the `-0.5` of linear filtering, or indices).
    coords: [f64; 3],
    dims: usize,
    slice: u32,
    /// Address modes per dimension.
    modes: [AddressMode; 3],
}

impl Sampler<'_> {
    fn res(&self) -> &Resource {
        &self.desc.resource
    }

    /// Where `c` (raw operand bits) points for `geom`.
    fn place(&self, geom: Geom, int_coords: bool, c: &[u64]) -> Place {
        let r = self.res();
        let sizes = [r.width, r.rows(), r.slices()];
        let s = &self.desc.sampler;
        let layer = |v: u64, faces: u32| -> u32 {
            let layers = r.slices() / faces;
            (v as u32).min(layers.saturating_sub(1)) * faces
        };
        let coord = |bits: u64, dim: usize| -> f64 {
            if int_coords {
                f64::from(bits as u32 as i32)
            } else if s.normalized {
                f32_coord(bits) * f64::from(sizes[dim])
            } else {
                f32_coord(bits)
            }
        };
        match geom {
            Geom::D1 => Place { coords: [coord(c[0], 0), 0.0, 0.0], dims: 1, slice: 0, modes: s.address },
            Geom::D2 => Place { coords: [coord(c[0], 0), coord(c[1], 1), 0.0], dims: 2, slice: 0, modes: s.address },
            Geom::D3 => {
                Place { coords: [coord(c[0], 0), coord(c[1], 1), coord(c[2], 2)], dims: 3, slice: 0, modes: s.address }
            }
            Geom::A1d => Place { coords: [coord(c[1], 0), 0.0, 0.0], dims: 1, slice: layer(c[0], 1), modes: s.address },
            Geom::A2d => Place {
                coords: [coord(c[1], 0), coord(c[2], 1), 0.0],
                dims: 2,
                slice: layer(c[0], 1),
                modes: s.address,
            },
            Geom::Cube | Geom::Acube => {
                let (base, dir) = if geom == Geom::Acube { (layer(c[0], 6), &c[1..4]) } else { (0, &c[0..3]) };
                let (face, u, v) = cube_face(f32_coord(dir[0]), f32_coord(dir[1]), f32_coord(dir[2]));
                let n = f64::from(r.width);
                Place { coords: [u * n, v * n, 0.0], dims: 2, slice: base + face, modes: [AddressMode::Clamp; 3] }
            }
        }
    }

    /// The raw bits of every channel of element `(i, j, slice)` (`None` for a border texel).
    fn texel(&mut self, i: Option<u32>, j: Option<u32>, slice: Option<u32>) -> Result<[Option<u64>; 4], ExecError> {
        let (Some(i), Some(j), Some(slice)) = (i, j, slice) else { return Ok([Some(0); 4]) };
        let r = *self.res();
        let base = r.element_address(i, j, slice);
        let size = r.format.ty.bytes();
        let mut out = [None; 4];
        for (k, o) in out.iter_mut().enumerate().take(r.format.channels as usize) {
            *o = Some(self.x.load(self.lane, Space::Global, base + u64::from(size) * k as u64, size)?);
        }
        Ok(out)
    }

    /// A channel as the value a float fetch returns.
    fn to_float(&self, bits: u64) -> f64 {
        let ty = self.res().format.ty;
        match ty {
            ChannelType::F32 => f64::from(f32::from_bits(bits as u32)),
            ChannelType::F16 => half::to_f64::<F16>(bits as u16),
            ChannelType::U8 => bits as u8 as f64 / 255.0,
            ChannelType::U16 => bits as u16 as f64 / 65535.0,
            ChannelType::S8 => (f64::from(bits as u8 as i8) / 127.0).max(-1.0),
            ChannelType::S16 => (f64::from(bits as u16 as i16) / 32767.0).max(-1.0),
            ChannelType::U32 | ChannelType::S32 => 0.0,
        }
    }

    /// A channel as the integer an `.s32`/`.u32` fetch returns.
    fn to_int(&self, bits: u64) -> u64 {
        let ty = self.res().format.ty;
        let v = match ty {
            ChannelType::S8 => bits as u8 as i8 as i32 as u32,
            ChannelType::S16 => bits as u16 as i16 as i32 as u32,
            _ => bits as u32,
        };
        u64::from(v)
    }

    /// Texel indices of the filter footprint in each dimension, and the weight of the upper one.
    fn footprint(&self, p: &Place, linear: bool) -> [([Option<u32>; 2], f64); 3] {
        let r = self.res();
        let sizes = [r.width, r.rows(), r.slices()];
        let mut out = [([Some(0), Some(0)], 0.0); 3];
        for d in 0..p.dims {
            let t = p.coords[d];
            out[d] = if linear {
                let tb = t - 0.5;
                let i0 = tb.floor();
                let a = weight(tb - i0);
                let i0 = i0 as i64;
                ([address(i0, sizes[d], p.modes[d]), address(i0.saturating_add(1), sizes[d], p.modes[d])], a)
            } else {
                let i = address(t.floor() as i64, sizes[d], p.modes[d]);
                ([i, i], 0.0)
            };
        }
        out
    }

    fn fetch(&mut self, geom: Geom, int_coords: bool, c: &[u64]) -> Result<[u64; 4], ExecError> {
        let p = self.place(geom, int_coords, c);
        let linear = !int_coords && self.desc.sampler.filter == FilterMode::Linear;
        let fp = self.footprint(&p, linear);
        let float = self.desc.returns_float();
        let mut acc = [0f64; 4];
        let mut int = [0u64, 0, 0, 1];
        let corners = if linear { 1usize << p.dims } else { 1 };
        for corner in 0..corners {
            let mut w = 1.0;
            let mut idx = [Some(0u32); 3];
            for d in 0..p.dims {
                let hi = (corner >> d) & 1 == 1;
                let (ix, a) = fp[d];
                idx[d] = ix[usize::from(hi)];
                if linear {
                    w *= if hi { a } else { 1.0 - a };
                }
            }
            if w == 0.0 {
                continue;
            }
            let slice = if p.dims == 3 { idx[2] } else { Some(p.slice) };
            let texel = self.texel(idx[0], idx[1], slice)?;
            for k in 0..4 {
                match texel[k] {
                    Some(bits) if float => acc[k] += w * self.to_float(bits),
                    Some(bits) => int[k] = self.to_int(bits),
                    None if float => acc[k] += w * if k == 3 { 1.0 } else { 0.0 },
                    None => {}
                }
            }
        }
        Ok(if float { acc.map(|v| u64::from((v as f32).to_bits())) } else { int })
    }

    fn gather(&mut self, geom: Geom, c: &[u64], comp: usize) -> Result<[u64; 4], ExecError> {
        let p = self.place(geom, false, c);
        let fp = self.footprint(&p, true);
        let float = self.desc.returns_float();
        let ([i0, i1], _) = fp[0];
        let ([j0, j1], _) = fp[1];
        let mut out = [0u64; 4];
        for (o, (i, j)) in out.iter_mut().zip([(i0, j1), (i1, j1), (i1, j0), (i0, j0)]) {
            let texel = self.texel(i, j, Some(p.slice))?;
            *o = match texel[comp] {
                Some(bits) if float => u64::from((self.to_float(bits) as f32).to_bits()),
                Some(bits) => self.to_int(bits),
                None => 0,
            };
        }
        Ok(out)
    }
}

#[allow(clippy::too_many_arguments)]
fn surface_access(
    x: &mut dyn WarpAccess,
    exec: LaneMask,
    store: bool,
    geom: Geom,
    elem: u32,
    mode: Boundary,
    handle: &Src,
    coords: &[Src],
    dsts: &[Dst],
    srcs: &[Src],
) -> Result<(), ExecError> {
    let name = if store { "sust" } else { "suld" };
    let handles = x.read(handle);
    let coords: SmallVec<[[u64; WARP]; 4]> = coords.iter().map(|c| x.read(c)).collect();
    let data: SmallVec<[[u64; WARP]; 4]> = srcs.iter().map(|s| x.read(s)).collect();
    let n = if store { srcs.len() } else { dsts.len() } as u32;
    let size = elem * n;
    let mut out: SmallVec<[[u64; WARP]; 4]> = dsts.iter().map(|_| [0u64; WARP]).collect();
    for lane in exec.iter() {
        let l = lane as usize;
        let c: SmallVec<[i64; 4]> = coords.iter().map(|v| i64::from(v[l] as u32 as i32)).collect();
        let Some(base) = surface_location(x, lane, name, geom, handles[l], &c, size, mode, 1)? else { continue };
        for k in 0..n as usize {
            let addr = base + u64::from(elem) * k as u64;
            if store {
                x.store(lane, Space::Global, addr, elem, data[k][l])?;
            } else {
                out[k][l] = x.load(lane, Space::Global, addr, elem)?;
            }
        }
    }
    for (d, v) in dsts.iter().zip(&out) {
        x.write(*d, v, exec);
    }
    Ok(())
}

/// The global address a surface access of `size` bytes by `lane` reaches: the surface named by `handle`,
/// coordinates `c` (x in units of `x_scale` bytes: 1 for byte addressing, the sample size for sample
/// addressing), out-of-range handling by `mode`. `None`: a `.zero` access out of range, which does nothing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn surface_location(
    x: &mut dyn WarpAccess,
    lane: u32,
    name: &str,
    geom: Geom,
    handle: u64,
    c: &[i64],
    size: u32,
    mode: Boundary,
    x_scale: u32,
) -> Result<Option<u64>, ExecError> {
    let Some(desc) = x.textures().surface(handle).copied() else {
        let why = x.textures().describe(handle);
        return Err(x.error(lane, ErrorKind::Invalid(format!("`{name}` on handle {why}"))));
    };
    let r = desc.resource;
    // Surfaces have no cube geometries.
    let kind_ok = !matches!(geom, Geom::Cube | Geom::Acube) && geometry_matches(geom, r.kind);
    if !kind_ok {
        return Err(x.error(
            lane,
            ErrorKind::Invalid(format!("`{name}.{geom:?}` on a {:?} surface (the geometries must match)", r.kind)),
        ));
    }
    let c = |k: usize| c.get(k).copied().unwrap_or(0);
    // (byte x, row, slice) and their limits
    let (bx, y, s) = match geom {
        Geom::D1 => (c(0), 0, 0),
        Geom::D2 => (c(0), c(1), 0),
        Geom::D3 => (c(0), c(1), c(2)),
        Geom::A1d => (c(1), 0, c(0)),
        _ => (c(1), c(2), c(0)),
    };
    let bx = bx.wrapping_mul(i64::from(x_scale));
    let row_bytes = i64::from(r.width) * i64::from(r.format.bytes());
    let (rows, slices) = (i64::from(r.rows()), i64::from(r.slices()));
    if bx.rem_euclid(i64::from(size)) != 0 {
        let addr = r.element_address(0, 0, 0).wrapping_add(bx as u64);
        return Err(x.misaligned(lane, Space::Global, addr, size));
    }
    let inside = bx >= 0 && bx + i64::from(size) <= row_bytes && (0..rows).contains(&y) && (0..slices).contains(&s);
    let (bx, y, s) = if inside {
        (bx, y, s)
    } else {
        match mode {
            Boundary::Trap => {
                let detail = format!(
                    "`{name}` at byte {bx}, row {y}, slice {s} of a surface of {row_bytes} bytes × {rows} rows × \
                     {slices} slices (`.trap`)"
                );
                let address = (r.ptr as i64).wrapping_add((s * rows + y) * r.row_pitch() as i64 + bx) as u64;
                return Err(x.error(
                    lane,
                    ErrorKind::OutOfBounds { space: device::Space::Global, address, size, detail: Some(detail) },
                ));
            }
            Boundary::Zero => return Ok(None),
            Boundary::Clamp => {
                let last = (row_bytes - i64::from(size)).max(0);
                (bx.clamp(0, last), y.clamp(0, rows - 1), s.clamp(0, slices - 1))
            }
        }
    };
    Ok(Some(r.ptr + (s as u64 * rows as u64 + y as u64) * r.row_pitch() + bx as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes() {
        let m = |mode| (-5..9).map(|i| address(i, 4, mode)).collect::<Vec<_>>();
        let s = |v: &[u32]| v.iter().map(|&i| Some(i)).collect::<Vec<_>>();
        assert_eq!(m(AddressMode::Clamp), s(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]));
        assert_eq!(m(AddressMode::Wrap), s(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]));
        assert_eq!(m(AddressMode::Mirror), s(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]));
        assert_eq!(address(-1, 4, AddressMode::Border), None);
        assert_eq!(address(4, 4, AddressMode::Border), None);
        assert_eq!(address(3, 4, AddressMode::Border), Some(3));
    }

    #[test]
    fn cube_faces() {
        assert_eq!(cube_face(1.0, 0.0, 0.0), (0, 0.5, 0.5));
        assert_eq!(cube_face(-1.0, 0.5, 0.0), (1, 0.5, 0.25));
        assert_eq!(cube_face(0.25, 1.0, -0.5), (2, 0.625, 0.25));
        assert_eq!(cube_face(0.0, -1.0, 0.5), (3, 0.5, 0.25));
        assert_eq!(cube_face(0.5, 0.0, 1.0), (4, 0.75, 0.5));
        assert_eq!(cube_face(0.5, 0.0, -1.0), (5, 0.25, 0.5));
    }

    #[test]
    fn weights_have_eight_fractional_bits() {
        assert_eq!(weight(0.0), 0.0);
        assert_eq!(weight(0.5), 0.5);
        assert_eq!(weight(1.0 / 3.0), 85.0 / 256.0);
        assert_eq!(weight(0.999), 1.0);
        assert_eq!(weight(1.5 / 256.0), 2.0 / 256.0);
    }
}
