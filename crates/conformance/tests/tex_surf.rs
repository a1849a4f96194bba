//! corpus/cuda/tex_surf.cu: texture objects (`tex` 1d/2d/3d/a2d/cube with integer and float coordinates,
//! `tex.level`, `tld4`, integer fetches, `txq`) and surface objects (`suld.b`/`sust.b` 1d/2d/3d with
//! `.trap/.clamp/.zero`, `suq`).
//!
//! The harness creates the objects (`Arg::texture` / `Arg::surface`: a device buffer of texels plus the
//! description; the kernel gets the 64-bit handle). The references sample the host copies of the texels with
//! the rules the emulator documents (`crates/emu/src/texture.rs`): texel centres at +0.5, 8-bit filter
//! weights, per-index address modes (wrap, mirror, clamp, border), the CUDA cubemap face table, `tld4`'s
//! counter-clockwise footprint. Texel values and coordinates are chosen so that every weighted sum is exact,
//! so the comparison is exact.
//!
//! `surf_rw` races in the CUDA source: thread `x` doubles float `x` of its row of `s2`, then reads and
//! rewrites floats `4x .. 4x+3` (a float4) that other threads double, and every row's threads write `x + y`
//! to the same word `x` of `s1`. Those words accept each legal value (`AnyOf`); the rest (float 0 of each
//! row, which one thread both doubles and rewrites, the floats nobody doubles, all of `s3`) are exact. The
//! boundary modes are exercised with a `s2` narrower than the float4 accesses (clamped reads, dropped
//! `.zero` stores) and checked in detail by `crates/emu/tests/texture.rs`.

use conformance::prelude::*;
use device::texture::{AddressMode, ChannelType, FilterMode, Format, Kind, ReadMode, Resource, Sampler};

const SRC: &str = "tex_surf";

/// A host texture: `channels` f32 values per texel, `w × rows × slices` texels.
struct HostTex {
    w: i64,
    rows: i64,
    slices: i64,
    channels: usize,
    data: Vec<f32>,
    normalized: bool,
    linear: bool,
    modes: [AddressMode; 3],
}

impl HostTex {
    fn new(w: i64, rows: i64, slices: i64, channels: usize, value: impl Fn(i64, usize) -> f32) -> HostTex {
        let n = w * rows * slices;
        let data = (0..n).flat_map(|t| (0..channels).map(move |c| (t, c))).map(|(t, c)| value(t, c)).collect();
        HostTex { w, rows, slices, channels, data, normalized: true, linear: false, modes: [AddressMode::Clamp; 3] }
    }

    fn sampler(&self) -> Sampler {
        Sampler {
            address: self.modes,
            filter: if self.linear { FilterMode::Linear } else { FilterMode::Point },
            normalized: self.normalized,
            read_mode: ReadMode::ElementType,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        to_bytes(&self.data)
    }

    fn index(i: i64, n: i64, mode: AddressMode) -> Option<i64> {
        match mode {
            AddressMode::Clamp => Some(i.clamp(0, n - 1)),
            AddressMode::Border => (0..n).contains(&i).then_some(i),
            AddressMode::Wrap => Some(i.rem_euclid(n)),
            AddressMode::Mirror => {
                let m = i.rem_euclid(2 * n);
                Some(if m < n { m } else { 2 * n - 1 - m })
            }
        }
    }

    /// Channel values of texel (x, y, s), or zeros outside (border).
    fn texel(&self, x: Option<i64>, y: Option<i64>, s: Option<i64>) -> [f64; 4] {
        let (Some(x), Some(y), Some(s)) = (x, y, s) else { return [0.0; 4] };
        let t = ((s * self.rows + y) * self.w + x) as usize;
        let mut out = [0.0, 0.0, 0.0, 1.0];
        for (c, o) in out.iter_mut().enumerate().take(self.channels) {
            *o = f64::from(self.data[t * self.channels + c]);
        }
        out
    }

    /// A fetch in `dims` dimensions at texel-space coordinates (already scaled when normalized), in slice
    /// `slice` when `dims < 3`.
    fn sample(&self, t: [f64; 3], dims: usize, slice: i64, modes: [AddressMode; 3]) -> [f32; 4] {
        let sizes = [self.w, self.rows, self.slices];
        // per dimension: (low index, high index, weight of high)
        let mut foot = [(Some(0), Some(0), 0.0); 3];
        for d in 0..dims {
            foot[d] = if self.linear {
                let b = t[d] - 0.5;
                let i = b.floor();
                let a = ((b - i) * 256.0).round() / 256.0;
                let i = i as i64;
                (Self::index(i, sizes[d], modes[d]), Self::index(i + 1, sizes[d], modes[d]), a)
            } else {
                let i = Self::index(t[d].floor() as i64, sizes[d], modes[d]);
                (i, i, 0.0)
            };
        }
        let mut acc = [0f64; 4];
        for corner in 0..(1 << dims) {
            let mut w = 1.0;
            let mut idx = [Some(0); 3];
            for d in 0..dims {
                let hi = corner >> d & 1 == 1;
                idx[d] = if hi { foot[d].1 } else { foot[d].0 };
                w *= if hi { foot[d].2 } else { 1.0 - foot[d].2 };
            }
            if w == 0.0 {
                continue;
            }
            let s = if dims == 3 { idx[2] } else { Some(slice) };
            let v = self.texel(idx[0], idx[1], s);
            for k in 0..4 {
                acc[k] += w * v[k];
            }
        }
        acc.map(|v| v as f32)
    }

    fn scale(&self, u: f32, n: i64) -> f64 {
        if self.normalized {
            f64::from(u) * n as f64
        } else {
            f64::from(u)
        }
    }
}

#[test]
fn tex_fetches() {
    // t1: 1-D f32, 40 texels, normalized, linear, clamp (tex1Dfetch indices past 39 clamp too)
    let mut t1 = HostTex::new(40, 1, 1, 1, |t, _| ((t * 7) % 23 - 11) as f32);
    t1.linear = true;
    // t2: 2-D float4, 8×4, normalized, linear, wrap in x and mirror in y
    let mut t2 = HostTex::new(8, 4, 1, 4, |t, c| (t * 4 + c as i64) as f32 * 0.5 - 20.0);
    t2.linear = true;
    t2.modes = [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Clamp];
    // t3: 3-D f32, 4×4×4, normalized, linear, border in x, clamp in y, wrap in z
    let mut t3 = HostTex::new(4, 4, 4, 1, |t, _| ((t * 5) % 17) as f32);
    t3.linear = true;
    t3.modes = [AddressMode::Border, AddressMode::Clamp, AddressMode::Wrap];
    // tl: layered 2-D f32, 4×4 × 4 layers, normalized, point
    let tl = HostTex::new(4, 4, 4, 1, |t, _| (t * 3 % 29) as f32 + 0.25);
    // tc: cubemap f32, 4×4 faces, linear
    let mut tc = HostTex::new(4, 4, 6, 1, |t, _| (t % 13) as f32 * 2.0);
    tc.linear = true;
    // ti: 1-D int4 (s32), 64 texels, element-type reads
    let ti: Vec<i32> = (0..256).map(|k| (k * 7919 % 2001) - 1000).collect();

    let f32x1 = Format::new(1, ChannelType::F32);
    let args = vec![
        Arg::texture(t1.bytes(), Resource::new(Kind::D1, f32x1, 40, 0, 0, 0), t1.sampler()),
        Arg::texture(t2.bytes(), Resource::new(Kind::D2, Format::new(4, ChannelType::F32), 8, 4, 0, 0), t2.sampler()),
        Arg::texture(t3.bytes(), Resource::new(Kind::D3, f32x1, 4, 4, 4, 0), t3.sampler()),
        Arg::texture(tl.bytes(), Resource::new(Kind::Layered2D, f32x1, 4, 4, 0, 4), tl.sampler()),
        Arg::texture(tc.bytes(), Resource::new(Kind::Cube, f32x1, 4, 4, 0, 0), tc.sampler()),
        Arg::texture(
            to_bytes(&ti),
            Resource::new(Kind::D1, Format::new(4, ChannelType::S32), 64, 0, 0, 0),
            Sampler { normalized: false, ..Sampler::default() },
        ),
        Arg::output::<f32>(64),
        Arg::output::<i32>(128),
    ];

    let mut out = Vec::new();
    let mut iout = vec![0i32; 128];
    for i in 0..64i64 {
        let u = (i as f32 + 0.5) / 64.0;
        let clamp = [AddressMode::Clamp; 3];
        let a = t1.texel(Some(i.min(39)), Some(0), Some(0))[0] as f32;
        let b = t1.sample([t1.scale(u, 40), 0.0, 0.0], 1, 0, t1.modes)[0];
        let c = t2.sample([t2.scale(u, 8), t2.scale(1.0 - u, 4), 0.0], 2, 0, t2.modes)[0];
        let d = t2.sample([t2.scale(u, 8), t2.scale(0.25, 4), 0.0], 2, 0, t2.modes);
        let e = t3.sample([t3.scale(u, 4), t3.scale(u, 4), t3.scale(0.5, 4)], 3, 0, t3.modes)[0];
        let f = t2.sample([t2.scale(u, 8), t2.scale(u, 4), 0.0], 2, 0, t2.modes)[0];
        let g = tl.sample([tl.scale(u, 4), tl.scale(u, 4), 0.0], 2, i & 3, tl.modes)[0];
        // direction (u, 1, -u): +y is the major axis, face 2, s = x, t = z
        let (fs, ft) = ((u as f64 + 1.0) / 2.0, (-u as f64 + 1.0) / 2.0);
        let h = tc.sample([fs * 4.0, ft * 4.0, 0.0], 2, 2, clamp)[0];
        // tld4.g at (u, u): texel (i+1, j+1) of the footprint, component g
        let (xb, yb) = (t2.scale(u, 8) - 0.5, t2.scale(u, 4) - 0.5);
        let i1 = HostTex::index(xb.floor() as i64 + 1, 8, t2.modes[0]);
        let j1 = HostTex::index(yb.floor() as i64 + 1, 4, t2.modes[1]);
        let qy = t2.texel(i1, j1, Some(0))[1] as f32;
        out.push(a + b + c + d[0] + d[3] + e + f + g + h + qy);
        let n = &ti[i as usize * 4..i as usize * 4 + 4];
        iout[i as usize] = n[0].wrapping_add(n[3]);
        iout[64 + i as usize] = 8 * 4;
    }
    let case = Case::outputs(
        "tex_fetches",
        Shape::linear(1, 64),
        args,
        vec![Check::exact(6, "out", Values::F32(out)), Check::exact(7, "iout", Values::I32(iout))],
    );
    check(SRC, case);
}

/// `surf_rw` with `w × h` threads doing work, `s2` `s2_width` floats wide (8 rows).
fn surf_case(w: usize, h: usize, s2_width: usize) -> Case {
    let s1: Vec<u32> = vec![0; 16];
    let s2: Vec<f32> = (0..s2_width * 8).map(|k| (k % 97) as f32 * 0.5 + 1.0).collect();
    let s3: Vec<u8> = vec![0xAB; 16 * 8 * 4];
    let u32x1 = Format::new(1, ChannelType::U32);
    let args = vec![
        Arg::surface(to_bytes(&s1), Resource::new(Kind::D1, u32x1, 16, 0, 0, 0)),
        Arg::surface(
            to_bytes(&s2),
            Resource::new(Kind::D2, Format::new(1, ChannelType::F32), s2_width as u32, 8, 0, 0),
        ),
        Arg::surface(s3.clone(), Resource::new(Kind::D3, Format::new(4, ChannelType::U8), 16, 8, 1, 0)),
        Arg::scalar(w as i32),
        Arg::scalar(h as i32),
    ];
    // s1: word x is written by every row y < h with x + y (a race): any of them; untouched words stay 0.
    let s1_tols: Vec<Tol> = (0..16)
        .map(|x| if x < w { Tol::AnyOf((0..h).map(|y| (x + y) as i64).collect()) } else { Tol::Exact })
        .collect();
    // s2: float j of row y < h: doubled by thread j (if j < w) and rewritten by thread j / 4 (if j / 4 < w and
    // the float4 is in bounds) with what it read before or after the doubling.
    let mut s2_expected = Vec::new();
    let mut s2_tols = Vec::new();
    for y in 0..8 {
        for j in 0..s2_width {
            let orig = s2[y * s2_width + j];
            let doubled = y < h && j < w;
            let (e, t) = if !doubled {
                (orig, Tol::Exact)
            } else if j == 0 {
                // thread 0 doubles float 0, then reads and rewrites its own float4 (program order)
                (2.0 * orig, Tol::Exact)
            } else if j / 4 < w && (j / 4) * 16 + 16 <= s2_width * 4 {
                (2.0 * orig, Tol::AnyOfFloat(vec![f64::from(orig), f64::from(2.0 * orig)]))
            } else {
                (2.0 * orig, Tol::Exact)
            };
            s2_expected.push(e);
            s2_tols.push(t);
        }
    }
    // s3: texel (x, y) = (x, y, 0, 255) for the working threads
    let mut s3_expected = s3;
    for y in 0..h {
        for x in 0..w {
            s3_expected[(y * 16 + x) * 4..(y * 16 + x) * 4 + 4].copy_from_slice(&[x as u8, y as u8, 0, 255]);
        }
    }
    let label = format!("w={w} h={h} s2 width {s2_width}");
    Case::outputs(
        "surf_rw",
        Shape::new((2, 1, 1), (8, 8, 1)),
        args,
        vec![
            Check::new(0, "s1", Values::U32(vec![0; 16]), Rule::Each(s1_tols)),
            Check::new(1, "s2", Values::F32(s2_expected), Rule::Each(s2_tols)),
            Check::exact(2, "s3", Values::U8(s3_expected)),
        ],
    )
    .label(&label)
}

#[test]
fn surf_rw() {
    check_all(
        SRC,
        vec![
            // float4 accesses in bounds
            surf_case(16, 8, 64),
            // s2 16 floats wide: float4 reads of x >= 4 clamp to the row's last 16 bytes, `.zero` stores drop
            surf_case(16, 8, 16),
            // one working thread per row: no races on s2
            surf_case(1, 8, 16),
        ],
    );
}
