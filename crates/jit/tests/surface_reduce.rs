//! Surface reductions (PTX ISA, "Surface Instructions: sured") on the emulator and the JIT (one worker, with
//! and without the vector path, and four workers, where CTAs reduce into the same elements at once).
//!
//! The model, from the ISA text: each thread combines its value into one element of the surface with the
//! operation — `.add` wraps, `.min`/`.max` compare as the type's signedness says (for `.p.b32`, the sample
//! format's), `.and`/`.or` bitwise. `.b` addresses x in bytes, `.p` in samples. Out of range, `.zero` drops
//! the reduction, `.clamp` moves it to the nearest element, `.trap` fails the launch. The order of the
//! reductions does not matter: every operation is commutative and associative.

mod common;

use device::texture::{ChannelType, Format, Kind, Resource, SurfaceDesc};
use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

const CTAS: u32 = 4;
const THREADS: u32 = 64;

/// The engines: the emulator, the JIT on one worker (vector path on and off) and on four.
fn engines() -> Vec<(&'static str, Box<dyn Backend>)> {
    let jit =
        |threads, vectorize| Box::new(jit::Jit::new(jit::Options { threads, vectorize, ..jit::Options::default() }));
    vec![
        ("emulator", Box::new(emu::Emulator::new())),
        ("JIT", jit(1, true)),
        ("JIT without vector path", jit(1, false)),
        ("JIT on four workers", jit(4, true)),
    ]
}

/// A case: `sured.{form}.{op}.{geom}.{ty}.{mode}` by every thread of `CTAS` × `THREADS` on a surface of
/// `w × h × d` elements of `elem` bytes (format `format`), thread `g` reducing `value(g)` into element
/// `(g mod (w + over), g / w' mod h, ...)`: with `over` > 0 some threads are out of range in x.
struct Case {
    form: &'static str,
    op: &'static str,
    geom: &'static str,
    ty: &'static str,
    mode: &'static str,
    format: Format,
    dims: [u32; 3],
    over: u32,
}

impl Case {
    fn elem(&self) -> u32 {
        if self.ty.ends_with("64") {
            8
        } else {
            4
        }
    }

    fn signed(&self) -> bool {
        self.ty.starts_with('s') || (self.form == "p" && self.format.ty == ChannelType::S32)
    }

    /// Thread g's value: spread over the type's range, negative ones included.
    fn value(&self, g: u64) -> u64 {
        let v = g.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (g << 7);
        if self.elem() == 4 {
            v & 0xffff_ffff
        } else {
            v
        }
    }

    /// Thread g's element (x, y, z), before the boundary mode.
    fn coords(&self, g: u64) -> [i64; 3] {
        let [w, h, d] = self.dims.map(u64::from);
        let wx = w + u64::from(self.over);
        [(g % wx) as i64, (g / wx % h.max(1)) as i64, (g / wx / h.max(1) % d.max(1)) as i64]
    }

    fn ptx(&self) -> String {
        let scale = if self.form == "b" { self.elem() } else { 1 };
        let (load, value) = if self.elem() == 4 {
            ("ld.global.u32 %r9, [%rd4];", "%r9")
        } else {
            ("ld.global.u64 %rd9, [%rd4];", "%rd9")
        };
        let coords = match self.geom {
            "1d" => "{%r5}",
            "2d" => "{%r5, %r6}",
            _ => "{%r5, %r6, %r7, %r7}",
        };
        let [_, h, d] = self.dims;
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 s, .param .u64 v)\n{{\n\
             .reg .b32 %r<12>;\n.reg .b64 %rd<12>;\n\
             ld.param.u64 %rd1, [s];\nld.param.u64 %rd2, [v];\n\
             mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ntid.x;\nmov.u32 %r3, %tid.x;\nmad.lo.u32 %r4, %r1, %r2, %r3;\n\
             mul.wide.u32 %rd3, %r4, {elem};\nadd.s64 %rd4, %rd2, %rd3;\n{load}\n\
             rem.u32 %r5, %r4, {wx};\ndiv.u32 %r8, %r4, {wx};\nrem.u32 %r6, %r8, {h};\ndiv.u32 %r8, %r8, {h};\n\
             rem.u32 %r7, %r8, {d};\nmul.lo.u32 %r5, %r5, {scale};\n\
             sured.{form}.{op}.{geom}.{ty}.{mode} [%rd1, {coords}], {value};\nret;\n}}\n",
            elem = self.elem(),
            wx = self.dims[0] + self.over,
            h = h.max(1),
            d = d.max(1),
            form = self.form,
            op = self.op,
            geom = self.geom,
            ty = self.ty,
            mode = self.mode,
        )
    }

    /// The surface's elements after every thread's reduction (initial elements `init`).
    fn model(&self, init: &[u64]) -> Vec<u64> {
        let [w, h, _] = self.dims.map(i64::from);
        let mut out = init.to_vec();
        let bits = 8 * self.elem();
        let mask = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
        let widen = |v: u64| if bits == 32 { i64::from(v as u32 as i32) } else { v as i64 };
        for g in 0..u64::from(CTAS * THREADS) {
            let [mut x, y, z] = self.coords(g);
            if x >= w {
                match self.mode {
                    "zero" => continue,
                    "clamp" => x = w - 1,
                    _ => unreachable!("trap cases expect an error"),
                }
            }
            let i = ((z * h.max(1) + y) * w + x) as usize;
            let (old, v) = (out[i], self.value(g));
            out[i] = match self.op {
                "add" => old.wrapping_add(v) & mask,
                "and" => old & v,
                "or" => old | v,
                "min" | "max" => {
                    let less = if self.signed() { widen(v) < widen(old) } else { v < old };
                    if less == (self.op == "min") {
                        v
                    } else {
                        old
                    }
                }
                _ => unreachable!(),
            };
        }
        out
    }

    fn resource(&self) -> Resource {
        let [w, h, d] = self.dims;
        let kind = match self.geom {
            "1d" => Kind::D1,
            "2d" => Kind::D2,
            _ => Kind::D3,
        };
        Resource::new(kind, self.format, w, h, d, 0)
    }

    fn init(&self) -> Vec<u64> {
        let [w, h, d] = self.dims;
        let n = u64::from(w * h.max(1) * d.max(1));
        (0..n).map(|i| self.value(i + 1000) | if self.op == "and" { 0xf0f0_f0f0 } else { 0 }).collect()
    }

    /// Runs the case on `backend`: the surface's final elements, or the error.
    fn run(&self, backend: &mut dyn Backend) -> Result<Vec<u64>, String> {
        let module = ir::compile(&self.ptx()).unwrap_or_else(|d| panic!("{d:?}\n{}", self.ptx()));
        let mut memory = DeviceMemory::new();
        let loaded = LoadedModule::load(module, &mut memory)?;
        let k = loaded.module.function("k").ok_or("no kernel")?;
        backend.check_supported(&loaded, k).map_err(|e| e.to_string())?;
        let elem = self.elem() as usize;
        let bytes: Vec<u8> = self.init().iter().flat_map(|v| v.to_le_bytes()[..elem].to_vec()).collect();
        let surf = memory.alloc_bytes(&bytes, "surface");
        let handle = memory.create_surface(SurfaceDesc { resource: Resource { ptr: surf, ..self.resource() } })?;
        let values: Vec<u8> =
            (0..u64::from(CTAS * THREADS)).flat_map(|g| self.value(g).to_le_bytes()[..elem].to_vec()).collect();
        let vals = memory.alloc_bytes(&values, "values");
        let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
        params.set(0, &handle.to_le_bytes())?;
        params.set(1, &vals.to_le_bytes())?;
        let config = LaunchConfig { grid: Dim3::new(CTAS, 1, 1), block: Dim3::new(THREADS, 1, 1), dynamic_shared: 0 };
        let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
        backend.launch(&launch, &mut memory, &mut std::io::sink()).map_err(|e| e.to_string())?;
        let out = memory.bytes(surf).ok_or("no surface")?;
        Ok(out.chunks(elem).map(common::load_le).collect())
    }
}

fn case(form: &'static str, op: &'static str, ty: &'static str, geom: &'static str, mode: &'static str) -> Case {
    let fmt_ty = match ty {
        "s32" => ChannelType::S32,
        _ => ChannelType::U32,
    };
    let format = if ty.ends_with("64") { Format::new(2, ChannelType::U32) } else { Format::new(1, fmt_ty) };
    let dims = match geom {
        "1d" => [8, 0, 0],
        "2d" => [4, 3, 0],
        _ => [3, 2, 2],
    };
    Case { form, op, geom, ty, mode, format, dims, over: 0 }
}

#[test]
fn sured_b_every_operation_and_type() {
    let mut cases = Vec::new();
    for (op, types) in [
        ("add", &["u32", "s32", "u64"][..]),
        ("min", &["u32", "s32", "u64", "s64"][..]),
        ("max", &["u32", "s32", "u64", "s64"][..]),
        ("and", &["b32"][..]),
        ("or", &["b32"][..]),
    ] {
        for ty in types {
            for geom in ["1d", "2d", "3d"] {
                cases.push(case("b", op, ty, geom, "trap"));
            }
        }
    }
    for c in &cases {
        let expected = c.model(&c.init());
        for (name, mut backend) in engines() {
            let got = c.run(backend.as_mut()).unwrap_or_else(|e| panic!("{name}: {e}\n{}", c.ptx()));
            assert_eq!(got, expected, "{name}: sured.b.{}.{}.{}", c.op, c.geom, c.ty);
        }
    }
}

#[test]
fn sured_p_takes_its_signedness_from_the_format() {
    for (op, fmt) in [
        ("min", ChannelType::S32),
        ("min", ChannelType::U32),
        ("max", ChannelType::S32),
        ("add", ChannelType::U32),
        ("or", ChannelType::S32),
    ] {
        for geom in ["1d", "2d", "3d"] {
            let mut c = case("p", op, "b32", geom, "trap");
            c.format = Format::new(1, fmt);
            let expected = c.model(&c.init());
            for (name, mut backend) in engines() {
                let got = c.run(backend.as_mut()).unwrap_or_else(|e| panic!("{name}: {e}\n{}", c.ptx()));
                assert_eq!(got, expected, "{name}: sured.p.{op}.{geom}.b32 on {fmt:?}");
            }
        }
    }
}

#[test]
fn out_of_range_reductions_follow_the_boundary_mode() {
    for (form, mode) in [("b", "zero"), ("b", "clamp"), ("p", "zero"), ("p", "clamp")] {
        let ty = if form == "b" { "u32" } else { "b32" };
        let mut c = case(form, "add", ty, "2d", mode);
        c.over = 3;
        let expected = c.model(&c.init());
        for (name, mut backend) in engines() {
            let got = c.run(backend.as_mut()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(got, expected, "{name}: sured.{form} .{mode}");
        }
        c.mode = "trap";
        for (name, mut backend) in engines() {
            let e = c.run(backend.as_mut()).expect_err(name);
            assert!(e.contains("out-of-bounds") && e.contains("sured"), "{name}: {e}");
        }
    }
}

#[test]
fn sured_p_on_a_float_surface_is_an_error_and_b64_is_refused() {
    let mut c = case("p", "add", "b32", "1d", "trap");
    c.format = Format::new(1, ChannelType::F32);
    for (name, mut backend) in engines() {
        let e = c.run(backend.as_mut()).expect_err(name);
        assert!(e.contains("one 32-bit integer channel"), "{name}: {e}");
    }
    let c = case("p", "min", "b64", "1d", "trap");
    for (name, mut backend) in engines() {
        let e = c.run(backend.as_mut()).expect_err(name);
        assert!(e.contains("PTX line 23") && e.contains("no 64-bit integer sample"), "{name}: {e}");
    }
}
