//! Texture and surface instructions on hand-written PTX, in more detail than the corpus kernel: linear
//! filtering with arbitrary coordinates (8-bit weights), every address mode, normalized-float integer
//! textures, missing channels, all four `tld4` components, integer fetches, layered, 3-D and cubemap
//! textures, every `txq`/`suq` query, every surface boundary mode, and the errors (invalid handles, a
//! surface used as a texture, out-of-bounds `.trap` accesses, misaligned surface accesses). References are
//! written here from the rules documented in `crates/emu/src/texture.rs`.

use device::texture::{
    AddressMode, ChannelType, FilterMode, Format, Kind, ReadMode, Resource, Sampler, SurfaceDesc, TextureDesc,
};
use device::{Backend, DeviceMemory, Dim3, ErrorKind, ExecError, Launch, LaunchConfig, LoadedModule, ParamBuffer};

/// A kernel parameter.
enum P {
    Buf(Vec<u8>),
    Tex(Vec<u8>, TextureDesc),
    Surf(Vec<u8>, SurfaceDesc),
    U64(u64),
}

/// Runs `kernel` with one block of `threads` threads. Returns the final bytes of every buffer parameter
/// (texture and surface buffers included).
fn run(ptx: &str, kernel: &str, threads: u32, params: &[P]) -> Result<Vec<Vec<u8>>, ExecError> {
    let mut mem = DeviceMemory::new();
    let module = ir::compile(ptx).unwrap_or_else(|d| panic!("{}", d[0].render("test.ptx", ptx)));
    let module = LoadedModule::load(module, &mut mem).unwrap();
    let k = module.module.function(kernel).unwrap();
    let mut pb = ParamBuffer::for_kernel(&module.module.functions[k]);
    let mut bufs = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let value = match p {
            P::Buf(b) => {
                let ptr = mem.alloc_bytes(b, format!("buffer {i}"));
                bufs.push(ptr);
                ptr
            }
            P::Tex(b, d) => {
                let ptr = mem.alloc_bytes(b, format!("texels {i}"));
                bufs.push(ptr);
                mem.create_texture(TextureDesc { resource: Resource { ptr, ..d.resource }, ..*d }).unwrap()
            }
            P::Surf(b, d) => {
                let ptr = mem.alloc_bytes(b, format!("surface {i}"));
                bufs.push(ptr);
                mem.create_surface(SurfaceDesc { resource: Resource { ptr, ..d.resource } }).unwrap()
            }
            P::U64(v) => *v,
        };
        pb.set(i, &value.to_le_bytes()).unwrap();
    }
    let config = LaunchConfig { grid: Dim3::new(1, 1, 1), block: Dim3::new(threads, 1, 1), dynamic_shared: 0 };
    let launch = Launch { module: &module, kernel: k, config, params: &pb, collect_stats: false };
    emu::Emulator::new().launch(&launch, &mut mem, &mut std::io::sink())?;
    Ok(bufs.iter().map(|p| mem.bytes(*p).unwrap().to_vec()).collect())
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes<T: Copy, B: AsRef<[u8]>>(v: &[T], f: impl Fn(T) -> B) -> Vec<u8> {
    v.iter().flat_map(|x| f(*x).as_ref().to_vec()).collect()
}

const HEADER: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

/// Per thread: (x, y) from `coords`; `tex.2d`, `tld4.r`, `tld4.a` (the last with a residency predicate)
/// into 12 floats of `out`, then the predicate as a 13th word.
fn fetch2d_ptx() -> String {
    format!(
        "{HEADER}
.visible .entry fetch2d(.param .u64 tex, .param .u64 coords, .param .u64 out)
{{
    .reg .f32 %f<16>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [coords];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 8;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.v2.f32 {{%f1, %f2}}, [%rd5];
    mul.wide.u32 %rd6, %r1, 64;
    add.s64 %rd7, %rd3, %rd6;
    tex.2d.v4.f32.f32 {{%f3, %f4, %f5, %f6}}, [%rd1, {{%f1, %f2}}];
    tld4.r.2d.v4.f32.f32 {{%f7, %f8, %f9, %f10}}, [%rd1, {{%f1, %f2}}];
    tld4.a.2d.v4.f32.f32 {{%f11, %f12, %f13, %f14}}|%p1, [%rd1, {{%f1, %f2}}];
    selp.u32 %r2, 1, 0, %p1;
    st.global.v4.f32 [%rd7], {{%f3, %f4, %f5, %f6}};
    st.global.v4.f32 [%rd7+16], {{%f7, %f8, %f9, %f10}};
    st.global.v4.f32 [%rd7+32], {{%f11, %f12, %f13, %f14}};
    st.global.u32 [%rd7+48], %r2;
    ret;
}}
"
    )
}

/// The reference sampler for a 2-D texture of `channels` channels whose values (already converted to what a
/// float fetch returns) are `val(x, y, c)`.
struct Ref2d<'a> {
    w: i64,
    h: i64,
    channels: usize,
    val: &'a dyn Fn(i64, i64, usize) -> f64,
    sampler: Sampler,
}

impl Ref2d<'_> {
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

    fn texel(&self, x: Option<i64>, y: Option<i64>) -> [f64; 4] {
        match (x, y) {
            (Some(x), Some(y)) => {
                let mut t = [0.0, 0.0, 0.0, 1.0];
                for (c, v) in t.iter_mut().enumerate().take(self.channels) {
                    *v = (self.val)(x, y, c);
                }
                t
            }
            _ => [0.0; 4],
        }
    }

    fn coords(&self, u: f32, v: f32) -> (f64, f64) {
        // NaN reads as 0, infinities as the largest finite f32
        let fix = |c: f32| if c.is_nan() { 0.0 } else { f64::from(c.clamp(-f32::MAX, f32::MAX)) };
        let (u, v) = (fix(u), fix(v));
        if self.sampler.normalized {
            (u * self.w as f64, v * self.h as f64)
        } else {
            (u, v)
        }
    }

    /// Footprint: (x0, x1, a), (y0, y1, b).
    fn footprint(&self, u: f32, v: f32) -> [(Option<i64>, Option<i64>, f64); 2] {
        let (x, y) = self.coords(u, v);
        let m = self.sampler.address;
        let one = |t: f64, n: i64, mode| {
            let b = t - 0.5;
            let i = b.floor();
            let a = ((b - i) * 256.0).round() / 256.0;
            (Self::index(i as i64, n, mode), Self::index((i as i64).saturating_add(1), n, mode), a)
        };
        [one(x, self.w, m[0]), one(y, self.h, m[1])]
    }

    fn tex(&self, u: f32, v: f32) -> [f32; 4] {
        if self.sampler.filter == FilterMode::Point {
            let (x, y) = self.coords(u, v);
            let m = self.sampler.address;
            let t =
                self.texel(Self::index(x.floor() as i64, self.w, m[0]), Self::index(y.floor() as i64, self.h, m[1]));
            return t.map(|v| v as f32);
        }
        let [(x0, x1, a), (y0, y1, b)] = self.footprint(u, v);
        let mut acc = [0f64; 4];
        for (x, y, w) in
            [(x0, y0, (1.0 - a) * (1.0 - b)), (x1, y0, a * (1.0 - b)), (x0, y1, (1.0 - a) * b), (x1, y1, a * b)]
        {
            if w != 0.0 {
                let t = self.texel(x, y);
                for c in 0..4 {
                    acc[c] += w * t[c];
                }
            }
        }
        acc.map(|v| v as f32)
    }

    fn tld4(&self, u: f32, v: f32, comp: usize) -> [f32; 4] {
        let [(x0, x1, _), (y0, y1, _)] = self.footprint(u, v);
        [(x0, y1), (x1, y1), (x1, y0), (x0, y0)].map(|(x, y)| {
            if comp >= self.channels && x.is_some() && y.is_some() {
                0.0
            } else {
                self.texel(x, y)[comp] as f32
            }
        })
    }
}

fn coords(seed: u32, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            lo + (hi - lo) * ((s >> 8) as f32 / (1u32 << 24) as f32)
        })
        .collect()
}

fn check_fetch2d(label: &str, texels: Vec<u8>, desc: TextureDesc, r: &Ref2d<'_>, uv: &[f32]) {
    let n = uv.len() / 2;
    let out = run(
        &fetch2d_ptx(),
        "fetch2d",
        n as u32,
        &[P::Tex(texels, desc), P::Buf(bytes(uv, f32::to_le_bytes)), P::Buf(vec![0; n * 64])],
    )
    .unwrap_or_else(|e| panic!("{label}: {e}"));
    let got = f32s(&out[2]);
    for t in 0..n {
        let (u, v) = (uv[2 * t], uv[2 * t + 1]);
        let g = &got[16 * t..16 * t + 16];
        assert_eq!(g[..4], r.tex(u, v), "{label}: tex at ({u}, {v}), thread {t}");
        assert_eq!(g[4..8], r.tld4(u, v, 0), "{label}: tld4.r at ({u}, {v}), thread {t}");
        assert_eq!(g[8..12], r.tld4(u, v, 3), "{label}: tld4.a at ({u}, {v}), thread {t}");
        assert_eq!(g[12].to_bits(), 1, "{label}: residency predicate");
    }
}

#[test]
fn linear_filtering_every_address_mode() {
    // float4 texels, 5×3, unnormalized coordinates with arbitrary fractions (the weights round to 8 bits)
    let (w, h) = (5i64, 3i64);
    let val = |x: i64, y: i64, c: usize| ((x * 7 + y * 13 + c as i64 * 3) % 11) as f64 - 4.5;
    let texels: Vec<f32> =
        (0..h).flat_map(|y| (0..w).flat_map(move |x| (0..4).map(move |c| val(x, y, c) as f32))).collect();
    let texels = bytes(&texels, f32::to_le_bytes);
    let resource = Resource::new(Kind::D2, Format::new(4, ChannelType::F32), w as u32, h as u32, 0, 0);
    for modes in [[AddressMode::Clamp, AddressMode::Border], [AddressMode::Border, AddressMode::Clamp]] {
        let sampler = Sampler {
            address: [modes[0], modes[1], AddressMode::Clamp],
            filter: FilterMode::Linear,
            normalized: false,
            read_mode: ReadMode::ElementType,
        };
        let r = Ref2d { w, h, channels: 4, val: &val, sampler };
        let mut uv = coords(7, 128, -2.0, 7.0);
        uv.extend([f32::INFINITY, 1.25, f32::NAN, f32::NEG_INFINITY, 3.3, f32::NAN]);
        check_fetch2d(&format!("unnormalized {modes:?}"), texels.clone(), TextureDesc { resource, sampler }, &r, &uv);
    }
    // normalized coordinates with wrap and mirror, far outside [0, 1]
    let sampler = Sampler {
        address: [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Clamp],
        filter: FilterMode::Linear,
        normalized: true,
        read_mode: ReadMode::ElementType,
    };
    let r = Ref2d { w, h, channels: 4, val: &val, sampler };
    let uv = coords(11, 128, -3.0, 3.0);
    check_fetch2d("normalized wrap/mirror", texels.clone(), TextureDesc { resource, sampler }, &r, &uv);
    // point sampling
    let sampler = Sampler { filter: FilterMode::Point, ..sampler };
    let r = Ref2d { w, h, channels: 4, val: &val, sampler };
    check_fetch2d("normalized point", texels, TextureDesc { resource, sampler }, &r, &uv);
}

#[test]
fn normalized_integers_and_missing_channels() {
    // u8 × 2 read as normalized floats: channels b, a missing → (.., 0, 1); tld4.a of a missing alpha → 0
    let (w, h) = (6i64, 4i64);
    let raw = |x: i64, y: i64, c: usize| ((x * 37 + y * 91 + c as i64 * 53) % 256) as u8;
    let texels: Vec<u8> = (0..h).flat_map(|y| (0..w).flat_map(move |x| (0..2).map(move |c| raw(x, y, c)))).collect();
    let val = |x, y, c| f64::from(raw(x, y, c)) / 255.0;
    let sampler = Sampler {
        address: [AddressMode::Mirror, AddressMode::Wrap, AddressMode::Clamp],
        filter: FilterMode::Linear,
        normalized: true,
        read_mode: ReadMode::NormalizedFloat,
    };
    let resource = Resource::new(Kind::D2, Format::new(2, ChannelType::U8), w as u32, h as u32, 0, 0);
    let r = Ref2d { w, h, channels: 2, val: &val, sampler };
    check_fetch2d("u8x2 normalized", texels, TextureDesc { resource, sampler }, &r, &coords(3, 96, -1.5, 2.5));
    // s16 × 1 normalized: max(v / 32767, -1)
    let raw16 = |x: i64, y: i64| (((x * 9001 + y * 7717) % 65536) - 32768) as i16;
    let texels: Vec<u8> = (0..h).flat_map(|y| (0..w).flat_map(move |x| raw16(x, y).to_le_bytes())).collect();
    let val = |x, y, _| (f64::from(raw16(x, y)) / 32767.0).max(-1.0);
    let sampler = Sampler { address: [AddressMode::Clamp; 3], ..sampler };
    let resource = Resource::new(Kind::D2, Format::new(1, ChannelType::S16), w as u32, h as u32, 0, 0);
    let r = Ref2d { w, h, channels: 1, val: &val, sampler };
    check_fetch2d("s16 normalized", texels, TextureDesc { resource, sampler }, &r, &coords(5, 64, -0.5, 1.5));
}

#[test]
fn integer_layered_3d_cube_and_queries() {
    // one thread per index i (0..16):
    //   out[0..4]   tex.1d.v4.s32.s32 of an s8x4 texture (sign extension), index i - 4 with border addressing
    //   out[4..8]   tex.1d.v4.u32.s32 of a u16x2 texture, index i (clamped), missing channels (0, 1)
    //   out[8]      tex.a1d (layer i, x = 0.3) of a 4-layer 1-D f32 texture (layer clamps to 3), point
    //   out[9]      tex.3d point of a 3×3×3 f32 texture at (i % 3, i / 3 % 3, i / 9) + 0.5
    //   out[10]     tex.cube at a direction cycling through the six faces
    //   out[11..]   txq of the cubemap and suq of a surface
    let stores: String =
        (12..=24).map(|r| format!("    st.global.u32 [%rd9+{}], %r{r};\n", 44 + 4 * (r - 12))).collect();
    let ptx = format!(
        "{HEADER}
.visible .entry misc(.param .u64 ti, .param .u64 tu, .param .u64 tl, .param .u64 t3, .param .u64 tc,
                     .param .u64 su, .param .u64 out)
{{
    .reg .f32 %f<24>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [ti];
    ld.param.u64 %rd2, [tu];
    ld.param.u64 %rd3, [tl];
    ld.param.u64 %rd4, [t3];
    ld.param.u64 %rd5, [tc];
    ld.param.u64 %rd6, [su];
    ld.param.u64 %rd7, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd8, %r1, 96;
    add.s64 %rd9, %rd7, %rd8;
    sub.s32 %r2, %r1, 4;
    tex.1d.v4.s32.s32 {{%r3, %r4, %r5, %r6}}, [%rd1, {{%r2}}];
    st.global.v4.u32 [%rd9], {{%r3, %r4, %r5, %r6}};
    tex.1d.v4.u32.s32 {{%r3, %r4, %r5, %r6}}, [%rd2, {{%r1}}];
    st.global.v4.u32 [%rd9+16], {{%r3, %r4, %r5, %r6}};
    tex.a1d.v4.f32.f32 {{%f1, %f2, %f3, %f4}}, [%rd3, {{%r1, 0f3E99999A}}];
    st.global.f32 [%rd9+32], %f1;
    rem.u32 %r7, %r1, 3;
    div.u32 %r8, %r1, 3;
    rem.u32 %r8, %r8, 3;
    div.u32 %r9, %r1, 9;
    cvt.rn.f32.u32 %f5, %r7;
    cvt.rn.f32.u32 %f6, %r8;
    cvt.rn.f32.u32 %f7, %r9;
    add.f32 %f5, %f5, 0f3F000000;
    add.f32 %f6, %f6, 0f3F000000;
    add.f32 %f7, %f7, 0f3F000000;
    tex.3d.v4.f32.f32 {{%f8, %f9, %f10, %f11}}, [%rd4, {{%f5, %f6, %f7, %f7}}];
    st.global.f32 [%rd9+36], %f8;
    // direction: axis i % 3, sign from i / 3 % 2, the other two components 0.25 and -0.5
    rem.u32 %r10, %r1, 6;
    mov.f32 %f12, 0f3E800000;
    mov.f32 %f13, 0fBF000000;
    mov.f32 %f14, 0f3F800000;
    setp.ge.u32 %p1, %r10, 3;
    @%p1 mov.f32 %f14, 0fBF800000;
    rem.u32 %r11, %r10, 3;
    mov.f32 %f15, %f14;
    mov.f32 %f16, %f12;
    mov.f32 %f17, %f13;
    setp.eq.u32 %p2, %r11, 1;
    @%p2 mov.f32 %f15, %f13;
    @%p2 mov.f32 %f16, %f14;
    @%p2 mov.f32 %f17, %f12;
    setp.eq.u32 %p3, %r11, 2;
    @%p3 mov.f32 %f15, %f12;
    @%p3 mov.f32 %f16, %f13;
    @%p3 mov.f32 %f17, %f14;
    tex.cube.v4.f32.f32 {{%f18, %f19, %f20, %f21}}, [%rd5, {{%f15, %f16, %f17, %f17}}];
    st.global.f32 [%rd9+40], %f18;
    txq.width.b32 %r12, [%rd5];
    txq.height.b32 %r13, [%rd5];
    txq.depth.b32 %r14, [%rd5];
    txq.channel_data_type.b32 %r15, [%rd5];
    txq.channel_order.b32 %r16, [%rd5];
    txq.normalized_coords.b32 %r17, [%rd5];
    txq.filter_mode.b32 %r18, [%rd5];
    txq.addr_mode_0.b32 %r19, [%rd5];
    txq.addr_mode_1.b32 %r20, [%rd5];
    txq.array_size.b32 %r21, [%rd3];
    txq.num_mipmap_levels.b32 %r22, [%rd5];
    txq.channel_data_type.b32 %r23, [%rd1];
    suq.width.b32 %r24, [%rd6];
    suq.height.b32 %r25, [%rd6];
    suq.depth.b32 %r26, [%rd6];
    suq.channel_data_type.b32 %r27, [%rd6];
    suq.channel_order.b32 %r28, [%rd6];
    suq.array_size.b32 %r29, [%rd6];
{stores}
    ret;
}}
"
    );
    let ptx = ptx.replace(".reg .b64 %rd<12>;", ".reg .b64 %rd<12>;\n    .reg .pred %p<4>;");
    let n = 16usize;
    let s8: Vec<i8> = (0..8 * 4).map(|k| (k * 37 % 256) as u8 as i8).collect();
    let u16s: Vec<u16> = (0..10 * 2).map(|k| (k * 4099 % 65536) as u16).collect();
    let layers: Vec<f32> = (0..4 * 5).map(|k| k as f32 * 1.5).collect();
    let cube3d: Vec<f32> = (0..27).map(|k| (k * k) as f32).collect();
    let faces: Vec<f32> = (0..6 * 2 * 2).map(|k| k as f32 + 100.0).collect();
    let point = |normalized, modes| Sampler {
        address: modes,
        filter: FilterMode::Point,
        normalized,
        read_mode: ReadMode::ElementType,
    };
    let linear_cube = Sampler { filter: FilterMode::Linear, ..point(true, [AddressMode::Clamp; 3]) };
    let params = [
        P::Tex(
            bytes(&s8, |v| vec![v as u8]),
            TextureDesc {
                resource: Resource::new(Kind::D1, Format::new(4, ChannelType::S8), 8, 0, 0, 0),
                sampler: point(false, [AddressMode::Border; 3]),
            },
        ),
        P::Tex(
            bytes(&u16s, u16::to_le_bytes),
            TextureDesc {
                resource: Resource::new(Kind::D1, Format::new(2, ChannelType::U16), 10, 0, 0, 0),
                sampler: point(false, [AddressMode::Clamp; 3]),
            },
        ),
        P::Tex(
            bytes(&layers, f32::to_le_bytes),
            TextureDesc {
                resource: Resource::new(Kind::Layered1D, Format::new(1, ChannelType::F32), 5, 0, 0, 4),
                sampler: point(true, [AddressMode::Clamp; 3]),
            },
        ),
        P::Tex(
            bytes(&cube3d, f32::to_le_bytes),
            TextureDesc {
                resource: Resource::new(Kind::D3, Format::new(1, ChannelType::F32), 3, 3, 3, 0),
                sampler: point(false, [AddressMode::Clamp; 3]),
            },
        ),
        P::Tex(
            bytes(&faces, f32::to_le_bytes),
            TextureDesc {
                resource: Resource::new(Kind::Cube, Format::new(1, ChannelType::F32), 2, 2, 0, 0),
                sampler: linear_cube,
            },
        ),
        P::Surf(
            vec![0; 7 * 3 * 2 * 8],
            SurfaceDesc { resource: Resource::new(Kind::D3, Format::new(4, ChannelType::U16), 7, 3, 2, 0) },
        ),
        P::Buf(vec![0; n * 96]),
    ];
    let out = run(&ptx, "misc", n as u32, &params).unwrap_or_else(|e| panic!("{e}"));
    let out = u32s(&out[6]);
    for i in 0..n {
        let o = &out[24 * i..24 * i + 24];
        // s8 x4 with border: index i - 4
        let idx = i as i64 - 4;
        let want: Vec<u32> =
            (0..4).map(|c| if (0..8).contains(&idx) { s8[idx as usize * 4 + c] as i32 as u32 } else { 0 }).collect();
        assert_eq!(o[..4], want, "s8x4 at {idx}");
        let j = i.min(9);
        assert_eq!(o[4..8], [u32::from(u16s[2 * j]), u32::from(u16s[2 * j + 1]), 0, 1], "u16x2 at {i}");
        // a1d: layer min(i, 3), x = floor(0.3 * 5) = 1
        assert_eq!(f32::from_bits(o[8]), layers[i.min(3) * 5 + 1], "a1d layer {i}");
        let (x, y, z) = (i % 3, i / 3 % 3, i / 9);
        assert_eq!(f32::from_bits(o[9]), cube3d[(z * 3 + y) * 3 + x], "3d at {x},{y},{z}");
        // the cube: major axis k = i % 3 with sign, others from (0.25, -0.5) as the kernel sets them
        let s = if i % 6 >= 3 { -1.0f64 } else { 1.0 };
        let dir = match i % 3 {
            0 => [s, 0.25, -0.5],
            1 => [-0.5, s, 0.25],
            _ => [0.25, -0.5, s],
        };
        let (face, sc, tc) = match (i % 3, s > 0.0) {
            (0, true) => (0, -dir[2], -dir[1]),
            (0, false) => (1, dir[2], -dir[1]),
            (1, true) => (2, dir[0], dir[2]),
            (1, false) => (3, dir[0], -dir[2]),
            (_, true) => (4, dir[0], -dir[1]),
            (_, false) => (5, -dir[0], -dir[1]),
        };
        let (u, v) = ((sc + 1.0) / 2.0 * 2.0 - 0.5, (tc + 1.0) / 2.0 * 2.0 - 0.5);
        let (x0, y0) = (u.floor(), v.floor());
        let (a, b) = (u - x0, v - y0);
        let t =
            |x: f64, y: f64| f64::from(faces[face * 4 + (y.clamp(0.0, 1.0) as usize) * 2 + x.clamp(0.0, 1.0) as usize]);
        let want = (1.0 - a) * (1.0 - b) * t(x0, y0)
            + a * (1.0 - b) * t(x0 + 1.0, y0)
            + (1.0 - a) * b * t(x0, y0 + 1.0)
            + a * b * t(x0 + 1.0, y0 + 1.0);
        assert_eq!(f32::from_bits(o[10]), want as f32, "cube face {face} at ({u}, {v})");
        // queries: width height depth CL_FLOAT CL_R normalized linear clamp clamp | layers 4, 1 level,
        // CL_SIGNED_INT8 | surface 7
        assert_eq!(o[11..23], [2, 2, 0, 0x10DE, 0x10B0, 1, 1, 1, 1, 4, 1, 0x10D7], "txq");
        assert_eq!(o[23], 7, "suq.width");
    }
}

/// Per thread: (x, y) = coords[2t..]; `suld.b.2d.b32` with `.clamp` and `.zero` into out[2t], out[2t+1],
/// then `sust.b.2d.b32.{store_mode}` of 1000 + t.
fn surf_ptx(store_mode: &str, load_mode: &str) -> String {
    format!(
        "{HEADER}
.visible .entry surf(.param .u64 s, .param .u64 coords, .param .u64 out)
{{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [s];
    ld.param.u64 %rd2, [coords];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 8;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.v2.u32 {{%r2, %r3}}, [%rd5];
    add.s64 %rd6, %rd3, %rd4;
    suld.b.2d.b32.{load_mode} {{%r4}}, [%rd1, {{%r2, %r3}}];
    suld.b.2d.b32.zero {{%r5}}, [%rd1, {{%r2, %r3}}];
    st.global.v2.u32 [%rd6], {{%r4, %r5}};
    add.u32 %r6, %r1, 1000;
    sust.b.2d.b32.{store_mode} [%rd1, {{%r2, %r3}}], {{%r6}};
    ret;
}}
"
    )
}

#[test]
fn surface_boundary_modes() {
    // a 4×3 surface of u32 (16 bytes per row); byte x, row y per thread, no two clamping to one word
    let surface: Vec<u32> = (0..12).map(|k| 500 + k).collect();
    let coords: Vec<(i32, i32)> = vec![(0, 0), (4, 0), (12, 2), (16, 1), (-4, 1), (8, -1), (-8, 5), (4, 3), (8, 1)];
    let n = coords.len();
    let coord_bytes = bytes(&coords, |(x, y)| [x.to_le_bytes(), y.to_le_bytes()].concat());
    let desc = SurfaceDesc { resource: Resource::new(Kind::D2, Format::new(1, ChannelType::U32), 4, 3, 0, 0) };
    let inside = |x: i32, y: i32| (0..16).contains(&x) && (0..3).contains(&y);
    let clamp = |x: i32, y: i32| (x.clamp(0, 12) / 4 + 4 * y.clamp(0, 2)) as usize;
    for store in ["clamp", "zero"] {
        let out = run(
            &surf_ptx(store, "clamp"),
            "surf",
            n as u32,
            &[P::Surf(bytes(&surface, u32::to_le_bytes), desc), P::Buf(coord_bytes.clone()), P::Buf(vec![0; n * 8])],
        )
        .unwrap_or_else(|e| panic!("{store}: {e}"));
        let loads = u32s(&out[2]);
        let mut want_surface = surface.clone();
        for (t, &(x, y)) in coords.iter().enumerate() {
            assert_eq!(loads[2 * t], surface[clamp(x, y)], "clamped load at ({x}, {y})");
            assert_eq!(
                loads[2 * t + 1],
                if inside(x, y) { surface[clamp(x, y)] } else { 0 },
                "zero load at ({x}, {y})"
            );
            if inside(x, y) || store == "clamp" {
                want_surface[clamp(x, y)] = 1000 + t as u32;
            }
        }
        assert_eq!(u32s(&out[0]), want_surface, "surface after `sust.{store}`");
    }
    // `.trap`: thread 3 (x = 16) is the first out of bounds
    let e = run(
        &surf_ptx("zero", "trap"),
        "surf",
        n as u32,
        &[P::Surf(bytes(&surface, u32::to_le_bytes), desc), P::Buf(coord_bytes.clone()), P::Buf(vec![0; n * 8])],
    )
    .unwrap_err();
    assert!(matches!(&e.kind, ErrorKind::OutOfBounds { detail: Some(d), .. } if d.contains(".trap")), "{e}");
    assert_eq!(e.location.thread, Some(Dim3::new(3, 0, 0)), "{e}");
    assert!(e.location.instruction.as_deref().unwrap_or("").starts_with("suld.b.2d.b32.trap"), "{e}");
    assert!(e.location.line.is_some());
    // misaligned byte x
    let bad = bytes(&[(2i32, 0i32)], |(x, y)| [x.to_le_bytes(), y.to_le_bytes()].concat());
    let e = run(
        &surf_ptx("zero", "clamp"),
        "surf",
        1,
        &[P::Surf(bytes(&surface, u32::to_le_bytes), desc), P::Buf(bad), P::Buf(vec![0; 8])],
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Misaligned { size: 4, .. }), "{e}");
}

#[test]
fn surface_widths_and_layers() {
    // sust.b.a2d.v4.b8 / suld.b.a2d.v2.b16 / sust.b.1d.b64 / suld.b.1d.v2.b32 on a layered surface of u8x4
    // (3 wide, 2 rows, 2 layers) and a 1-D surface of 4 u64
    let ptx = format!(
        "{HEADER}
.visible .entry widths(.param .u64 s2, .param .u64 s1, .param .u64 out)
{{
    .reg .b16 %h<8>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [s2];
    ld.param.u64 %rd2, [s1];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    // thread t writes texel (t % 3, t / 3 % 2) of layer t / 6
    rem.u32 %r2, %r1, 3;
    shl.b32 %r2, %r2, 2;
    div.u32 %r3, %r1, 3;
    rem.u32 %r3, %r3, 2;
    div.u32 %r4, %r1, 6;
    cvt.u16.u32 %h1, %r1;
    add.u16 %h2, %h1, 100;
    add.u16 %h3, %h1, 200;
    mov.u16 %h4, 7;
    sust.b.a2d.v4.b8.trap [%rd1, {{%r4, %r2, %r3, %r3}}], {{%h1, %h2, %h3, %h4}};
    suld.b.a2d.v2.b16.trap {{%h5, %h6}}, [%rd1, {{%r4, %r2, %r3, %r3}}];
    cvt.u32.u16 %r5, %h5;
    cvt.u32.u16 %r6, %h6;
    mul.wide.u32 %rd4, %r1, 8;
    add.s64 %rd5, %rd3, %rd4;
    st.global.v2.u32 [%rd5], {{%r5, %r6}};
    // threads 0..3 store u64 (t << 40) | t at byte 8t of s1, then read it back as two b32
    setp.lt.u32 %p1, %r1, 4;
    @!%p1 bra DONE;
    shl.b32 %r7, %r1, 3;
    cvt.u64.u32 %rd6, %r1;
    shl.b64 %rd7, %rd6, 40;
    or.b64 %rd7, %rd7, %rd6;
    sust.b.1d.b64.trap [%rd2, {{%r7}}], {{%rd7}};
    suld.b.1d.v2.b32.trap {{%r8, %r9}}, [%rd2, {{%r7}}];
    st.global.v2.u32 [%rd5+96], {{%r8, %r9}};
DONE:
    ret;
}}
"
    )
    .replace(".reg .b64 %rd<8>;", ".reg .b64 %rd<8>;\n    .reg .pred %p<2>;");
    let n = 12usize;
    let layered = SurfaceDesc { resource: Resource::new(Kind::Layered2D, Format::new(4, ChannelType::U8), 3, 2, 0, 2) };
    let linear = SurfaceDesc { resource: Resource::new(Kind::D1, Format::new(1, ChannelType::U32), 8, 0, 0, 0) };
    let out = run(
        &ptx,
        "widths",
        n as u32,
        &[P::Surf(vec![0; 48], layered), P::Surf(vec![0; 32], linear), P::Buf(vec![0; 8 * n + 32])],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for t in 0..n {
        // layer t/6, row t/3%2, x t%3 → element (layer * 2 + row) * 3 + x
        let e = ((t / 6) * 2 + t / 3 % 2) * 3 + t % 3;
        assert_eq!(out[0][4 * e..4 * e + 4], [t as u8, t as u8 + 100, t as u8 + 200, 7], "texel of thread {t}");
        let r = u32s(&out[2]);
        assert_eq!(
            r[2 * t..2 * t + 2],
            [u32::from_le_bytes([t as u8, t as u8 + 100, 0, 0]) & 0xFFFF, u32::from(t as u8 + 200) | (7 << 8)],
            "readback {t}"
        );
    }
    let r = u32s(&out[2]);
    for t in 0..4u32 {
        assert_eq!(r[24 + 2 * t as usize..26 + 2 * t as usize], [t, t << 8], "b64 round trip {t}");
    }
}

#[test]
fn invalid_handles_are_located_errors() {
    let uv = bytes(&[0.5f32, 0.5], f32::to_le_bytes);
    // a made-up handle
    let e = run(&fetch2d_ptx(), "fetch2d", 1, &[P::U64(0x1234), P::Buf(uv.clone()), P::Buf(vec![0; 64])]).unwrap_err();
    assert!(
        matches!(&e.kind, ErrorKind::Invalid(m) if m.contains("`tex` on handle 0x1234") && m.contains("not a texture")),
        "{e}"
    );
    assert_eq!(e.location.thread, Some(Dim3::new(0, 0, 0)));
    assert!(e.location.line.is_some() && e.location.instruction.as_deref().unwrap_or("").starts_with("tex.2d"), "{e}");
    // a surface used as a texture
    let surf = SurfaceDesc { resource: Resource::new(Kind::D2, Format::new(1, ChannelType::F32), 2, 2, 0, 0) };
    let e = run(&fetch2d_ptx(), "fetch2d", 1, &[P::Surf(vec![0; 16], surf), P::Buf(uv.clone()), P::Buf(vec![0; 64])])
        .unwrap_err();
    assert!(matches!(&e.kind, ErrorKind::Invalid(m) if m.contains("is a surface object")), "{e}");
    // integers asked of a float texture and vice versa are errors too
    let ints = TextureDesc {
        resource: Resource::new(Kind::D2, Format::new(1, ChannelType::S32), 2, 2, 0, 0),
        sampler: Sampler::default(),
    };
    let e =
        run(&fetch2d_ptx(), "fetch2d", 1, &[P::Tex(vec![0; 16], ints), P::Buf(uv), P::Buf(vec![0; 64])]).unwrap_err();
    assert!(matches!(&e.kind, ErrorKind::Invalid(m) if m.contains("returns integers")), "{e}");
}
