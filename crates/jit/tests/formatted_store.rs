//! Formatted surface stores (PTX ISA, "Surface Instructions: sust"), `sust.p`, on the emulator and the JIT.
//!
//! The model, from the ISA text: the vector's elements are the R, G, B, A channels of one sample, x a sample
//! index; 32-bit channels take the value's bits, `f16` channels the `.f32` value rounded to nearest even
//! (an independent rounding below), elements past the sample's channels are ignored, and channels past the
//! vector keep their bytes (lockstep's choice for the ISA's "unpredictable"). `.zero` drops an out-of-range
//! store, `.clamp` moves it to the last sample of the row, `.trap` fails. Narrow integer channels are an
//! error (the ISA does not define the narrowing).

mod common;

use device::texture::{ChannelType, Format, Kind, Resource, SurfaceDesc};
use device::{DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

/// f32 to f16 bits, rounded to nearest even (finite normal results, overflow to infinity; the values below
/// stay clear of subnormals).
fn f16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let mant = b & 0x7f_ffff;
    assert!(exp > 0, "subnormal half");
    // 10 of the 23 mantissa bits stay: round the 13 dropped ones to nearest even.
    let kept = mant >> 13;
    let rest = mant & 0x1fff;
    let mut h = ((exp as u32) << 10) | kept;
    if rest > 0x1000 || (rest == 0x1000 && kept & 1 == 1) {
        h += 1;
    }
    if h >= 0x7c00 {
        return sign | 0x7c00;
    }
    sign | h as u16
}

struct Case {
    geom: &'static str,
    format: Format,
    /// Samples per row, rows, slices (or layers for a1d).
    dims: [u32; 3],
    vec: usize,
    mode: &'static str,
}

impl Case {
    fn layered(&self) -> bool {
        self.geom == "a1d"
    }

    /// Thread t's k-th value: floats for float formats, integers (negative ones too) otherwise.
    fn value(&self, t: u32, k: usize) -> u32 {
        let i = t * 4 + k as u32;
        if self.format.ty.is_float() {
            // Values with 13+ dropped bits that round both ways, ties included, and one that overflows f16.
            let base = 1.0 + (i % 7) as f32 * 0.25;
            let frac = [0.0, 1.0, 0.5, 1.5, 3.0][(i % 5) as usize] * f32::EPSILON * 4096.0;
            let v = (base + frac) * if i.is_multiple_of(3) { -1.0 } else { 1.0 } * if i == 13 { 70000.0 } else { 1.0 };
            v.to_bits()
        } else {
            i.wrapping_mul(0x9E37_79B9) ^ 0x8000_0001
        }
    }

    /// (x, row, slice) of thread t; the row is `over` samples wider than the surface.
    fn coords(&self, t: u32, over: u32) -> [u32; 3] {
        let [w, h, d] = self.dims;
        let wx = w + over;
        [t % wx, t / wx % h.max(1), t / wx / h.max(1) % d.max(1)]
    }

    fn threads(&self, over: u32) -> u32 {
        let [w, h, d] = self.dims;
        (w + over) * h.max(1) * d.max(1)
    }

    fn ptx(&self, over: u32) -> String {
        let [w, h, d] = self.dims;
        let coords = match self.geom {
            "1d" => "{%r5}".to_string(),
            "2d" => "{%r5, %r6}".to_string(),
            "3d" => "{%r5, %r6, %r7, %r7}".to_string(),
            _ => "{%r7, %r5}".to_string(),
        };
        let regs: Vec<String> = (0..self.vec).map(|k| format!("%r{}", 10 + k)).collect();
        let data = if self.vec == 1 { regs[0].clone() } else { format!("{{{}}}", regs.join(", ")) };
        let vec = if self.vec == 1 { String::new() } else { format!(".v{}", self.vec) };
        // With .clamp only the out-of-range threads store (one per row), so no two stores meet.
        let guard =
            if self.mode == "clamp" { format!("setp.lt.u32 %p1, %r5, {w};\n@%p1 bra DONE;\n") } else { String::new() };
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 s, .param .u64 v)\n{{\n\
             .reg .pred %p<2>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n\
             ld.param.u64 %rd1, [s];\nld.param.u64 %rd2, [v];\nmov.u32 %r4, %tid.x;\n\
             mul.wide.u32 %rd3, %r4, 16;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd4];\n\
             rem.u32 %r5, %r4, {wx};\ndiv.u32 %r8, %r4, {wx};\nrem.u32 %r6, %r8, {h};\ndiv.u32 %r8, %r8, {h};\n\
             rem.u32 %r7, %r8, {d};\n{guard}sust.p.{geom}{vec}.b32.{mode} [%rd1, {coords}], {data};\nDONE:\nret;\n}}\n",
            wx = w + over,
            h = h.max(1),
            d = d.max(1),
            geom = self.geom,
            mode = self.mode,
        )
    }

    fn resource(&self) -> Resource {
        let [w, h, d] = self.dims;
        match self.geom {
            "1d" => Resource::new(Kind::D1, self.format, w, 0, 0, 0),
            "2d" => Resource::new(Kind::D2, self.format, w, h, 0, 0),
            "3d" => Resource::new(Kind::D3, self.format, w, h, d, 0),
            _ => Resource::new(Kind::Layered1D, self.format, w, 0, 0, d),
        }
    }

    fn init(&self) -> Vec<u8> {
        let [w, h, d] = self.dims;
        let n = (w * h.max(1) * d.max(1) * self.format.bytes()) as usize;
        (0..n).map(|i| (i * 37 + 11) as u8).collect()
    }

    /// The surface's bytes after the stores of the threads of `over`.
    fn model(&self, over: u32) -> Vec<u8> {
        let [w, h, _] = self.dims;
        let mut out = self.init();
        let (sample, width) = (self.format.bytes(), self.format.ty.bytes());
        for t in 0..self.threads(over) {
            let [mut x, y, z] = self.coords(t, over);
            if x >= w {
                match self.mode {
                    "zero" => continue,
                    "clamp" => x = w - 1,
                    _ => unreachable!(),
                }
            } else if self.mode == "clamp" {
                continue;
            }
            // a1d: the layer is the slice.
            let row = if self.layered() { z } else { z * h.max(1) + y };
            let at = ((row * w + x) * sample) as usize;
            for k in 0..self.vec.min(self.format.channels as usize) {
                let v = self.value(t, k);
                let bytes = match self.format.ty {
                    ChannelType::F16 => f16_rne(f32::from_bits(v)).to_le_bytes().to_vec(),
                    _ => v.to_le_bytes().to_vec(),
                };
                let c = at + k * width as usize;
                out[c..c + width as usize].copy_from_slice(&bytes);
            }
        }
        out
    }

    fn run(&self, backend: &mut dyn device::Backend, over: u32) -> Result<Vec<u8>, String> {
        let module = ir::compile(&self.ptx(over)).unwrap_or_else(|d| panic!("{d:?}\n{}", self.ptx(over)));
        let mut memory = DeviceMemory::new();
        let loaded = LoadedModule::load(module, &mut memory)?;
        let k = loaded.module.function("k").ok_or("no kernel")?;
        backend.check_supported(&loaded, k).map_err(|e| e.to_string())?;
        let surf = memory.alloc_bytes(&self.init(), "surface");
        let handle = memory.create_surface(SurfaceDesc { resource: Resource { ptr: surf, ..self.resource() } })?;
        let threads = self.threads(over);
        let values: Vec<u8> =
            (0..threads).flat_map(|t| (0..4).flat_map(move |k| self.value(t, k).to_le_bytes())).collect();
        let vals = memory.alloc_bytes(&values, "values");
        let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
        params.set(0, &handle.to_le_bytes())?;
        params.set(1, &vals.to_le_bytes())?;
        let config = LaunchConfig { grid: Dim3::new(1, 1, 1), block: Dim3::new(threads, 1, 1), dynamic_shared: 0 };
        let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
        backend.launch(&launch, &mut memory, &mut std::io::sink()).map_err(|e| e.to_string())?;
        Ok(memory.bytes(surf).ok_or("no surface")?.to_vec())
    }
}

fn check(c: &Case, over: u32) {
    let expected = c.model(over);
    for (name, mut backend) in common::engines() {
        let got = c.run(backend.as_mut(), over).unwrap_or_else(|e| panic!("{name}: {e}\n{}", c.ptx(over)));
        assert_eq!(got, expected, "{name}: sust.p.{}.v{} on {:?} ({})", c.geom, c.vec, c.format, c.mode);
    }
}

#[test]
fn sust_p_converts_to_the_sample_format() {
    let f = |channels, ty| Format::new(channels, ty);
    let cases = [
        Case { geom: "1d", format: f(1, ChannelType::F32), dims: [16, 0, 0], vec: 1, mode: "trap" },
        Case { geom: "2d", format: f(4, ChannelType::F32), dims: [4, 3, 0], vec: 4, mode: "trap" },
        Case { geom: "2d", format: f(4, ChannelType::F32), dims: [4, 3, 0], vec: 2, mode: "trap" },
        Case { geom: "2d", format: f(4, ChannelType::F16), dims: [4, 4, 0], vec: 4, mode: "trap" },
        Case { geom: "3d", format: f(2, ChannelType::F16), dims: [3, 2, 2], vec: 2, mode: "trap" },
        Case { geom: "3d", format: f(2, ChannelType::U32), dims: [3, 2, 2], vec: 4, mode: "trap" },
        Case { geom: "a1d", format: f(1, ChannelType::S32), dims: [5, 0, 3], vec: 1, mode: "trap" },
        Case { geom: "1d", format: f(1, ChannelType::S32), dims: [8, 0, 0], vec: 2, mode: "trap" },
    ];
    for c in &cases {
        check(c, 0);
    }
}

#[test]
fn out_of_range_formatted_stores_follow_the_boundary_mode() {
    for mode in ["zero", "clamp"] {
        let c = Case { geom: "2d", format: Format::new(2, ChannelType::F32), dims: [4, 3, 0], vec: 2, mode };
        check(&c, 2);
    }
    let c = Case { geom: "2d", format: Format::new(2, ChannelType::F32), dims: [4, 3, 0], vec: 2, mode: "trap" };
    for (name, mut backend) in common::engines() {
        let e = c.run(backend.as_mut(), 2).expect_err(name);
        assert!(e.contains("out-of-bounds") && e.contains("sust.p"), "{name}: {e}");
    }
}

#[test]
fn narrow_integer_channels_are_an_error_and_suld_p_is_refused() {
    let c = Case { geom: "1d", format: Format::new(4, ChannelType::U8), dims: [8, 0, 0], vec: 4, mode: "trap" };
    for (name, mut backend) in common::engines() {
        let e = c.run(backend.as_mut(), 0).expect_err(name);
        assert!(e.contains("does not define how a 32-bit value narrows"), "{name}: {e}");
    }
    let e = common::refusal("sm_80", "suld.p.1d.v4.b32.trap {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];");
    assert!(e.contains("PTX line 11") && e.contains("suld.p"), "{e}");
}
