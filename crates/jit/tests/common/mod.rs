//! Launching a kernel on any engine, for the JIT's tests.

// Each test binary uses its own part of this module.
#![allow(dead_code)]

use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};
use ir::Module;

/// A kernel argument: a buffer (allocated, its pointer passed) or a scalar's bytes.
#[derive(Clone, Debug)]
pub enum Arg {
    Buf(Vec<u8>),
    Scalar(Vec<u8>),
    /// A tensor map (`program::tensormap`) whose global address becomes that of the earlier buffer
    /// argument `.0`.
    TensorMap(usize, [u8; 128]),
}

/// Runs `kernel` on `backend` on fresh memory, with `shared` bytes of dynamic shared memory; returns every
/// buffer's final bytes and the printf output, or the error's text.
pub fn launch(
    backend: &mut dyn Backend,
    module: &Module,
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    args: &[Arg],
) -> Result<(Vec<Vec<u8>>, Vec<u8>), String> {
    launch_with(backend, module, kernel, grid, block, shared, args, false)
}

/// [`launch`], or a cooperative launch (`Backend::launch_cooperative`, with a fresh grid workspace).
#[allow(clippy::too_many_arguments)]
pub fn launch_with(
    backend: &mut dyn Backend,
    module: &Module,
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    args: &[Arg],
    cooperative: bool,
) -> Result<(Vec<Vec<u8>>, Vec<u8>), String> {
    let mut memory = DeviceMemory::new();
    let loaded = LoadedModule::load(module.clone(), &mut memory)?;
    if module.functions.values().any(|f| f.body.is_none() && program::is_builtin(&f.name) && f.name.ends_with("alloc"))
    {
        memory.ensure_heap(64 * 1024);
    }
    let k = loaded.module.function(kernel).ok_or("no kernel")?;
    backend.check_supported(&loaded, k).map_err(|e| e.to_string())?;
    let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
    let mut buffers = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            Arg::Buf(bytes) => {
                let p = memory.alloc_bytes(bytes, format!("argument {i}"));
                buffers.push(p);
                params.set(i, &p.to_le_bytes())?;
            }
            Arg::Scalar(bytes) => params.set(i, bytes)?,
            Arg::TensorMap(of, map) => {
                let mut map = *map;
                let p = match args.get(*of) {
                    Some(Arg::Buf(_)) => buffers[args[..*of].iter().filter(|a| matches!(a, Arg::Buf(_))).count()],
                    _ => return Err(format!("argument {i}: argument {of} is not a buffer")),
                };
                program::tensormap::replace_address(&mut map, p).map_err(|e| format!("{e:?}"))?;
                params.set(i, &map)?;
            }
        }
    }
    let config = LaunchConfig { grid, block, dynamic_shared: shared };
    let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
    let mut stdout = Vec::new();
    if cooperative {
        let workspace = memory.alloc(device::GRID_WORKSPACE_BYTES, "grid workspace");
        backend.launch_cooperative(&launch, &mut memory, &mut stdout, workspace).map_err(|e| e.to_string())?;
    } else {
        backend.launch(&launch, &mut memory, &mut stdout).map_err(|e| e.to_string())?;
    }
    let out = buffers.iter().map(|&p| memory.bytes(p).map(<[u8]>::to_vec).unwrap_or_default()).collect();
    Ok((out, stdout))
}

/// What [`run_forms`] gives back: per engine, the word each form wrote, at `thread * forms + form`.
pub struct FormResults {
    pub engines: Vec<(&'static str, Vec<u32>)>,
    /// Whether the JIT's vector path (four threads at a time) takes the kernel.
    pub vectorized: bool,
}

/// Runs instruction forms on every engine: one thread per row of `words` input words, loaded into `%r1..%rN`
/// (`.b32`, and the first also into `%f1` as an `.f32`); each form is PTX lines that leave their result in
/// `%r9`, stored to the thread's output slot of the form. The engines: the emulator, the JIT with its vector
/// path and the JIT without it.
pub fn run_forms(target: &str, words: usize, forms: &[String], inputs: &[u32]) -> FormResults {
    assert!((1..=8).contains(&words) && inputs.len().is_multiple_of(words));
    let threads = inputs.len() / words;
    let kernel = forms_kernel(target, words, forms);
    let module = ir::compile(&kernel).unwrap_or_else(|d| panic!("{d:?}\n{kernel}"));
    let input: Vec<u8> = inputs.iter().flat_map(|w| w.to_le_bytes()).collect();
    let args = [Arg::Buf(input), Arg::Buf(vec![0; 4 * forms.len() * threads])];
    let (grid, block) = (Dim3::new(1, 1, 1), Dim3::new(threads as u32, 1, 1));
    let as_words = |b: &[u8]| b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<u32>>();
    let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", grid, block, 0, &args).unwrap();
    let mut engines = vec![("emulator", as_words(&emu[1]))];
    for vectorize in [true, false] {
        let mut jit = jit::Jit::new(jit::Options { threads: 1, vectorize, ..jit::Options::default() });
        let (native, _) = launch(&mut jit, &module, "k", grid, block, 0, &args).unwrap();
        engines.push((if vectorize { "JIT (vector path)" } else { "JIT (scalar)" }, as_words(&native[1])));
    }
    let mut memory = DeviceMemory::new();
    let loaded = LoadedModule::load(module.clone(), &mut memory).unwrap();
    let k = loaded.module.function("k").unwrap();
    let vectorized =
        jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() }).vectorized(&loaded, k).unwrap().is_ok();
    FormResults { engines, vectorized }
}

/// The kernel [`run_forms`] runs (entry `k(in, out)`).
pub fn forms_kernel(target: &str, words: usize, forms: &[String]) -> String {
    let mut body = String::new();
    for (k, f) in forms.iter().enumerate() {
        body += &format!("    {f}\n    st.global.u32 [%rd6+{}], %r9;\n", 4 * k);
    }
    let loads: String = (0..words).map(|i| format!("    ld.global.u32 %r{}, [%rd4+{}];\n", i + 1, 4 * i)).collect();
    format!(
        ".version 8.1\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n    \
         .reg .b32 %r<16>;\n    .reg .f32 %f<2>;\n    .reg .b64 %rd<8>;\n    ld.param.u64 %rd1, [in];\n    \
         ld.param.u64 %rd2, [out];\n    mov.u32 %r10, %tid.x;\n    mul.wide.u32 %rd3, %r10, {};\n    \
         add.s64 %rd4, %rd1, %rd3;\n{loads}    mov.b32 %f1, %r1;\n    mul.wide.u32 %rd5, %r10, {};\n    \
         add.s64 %rd6, %rd2, %rd5;\n{body}    ret;\n}}\n",
        4 * words,
        4 * forms.len()
    )
}

/// The engines every instruction test runs on: the emulator, the JIT, and the JIT without its vector path.
pub fn engines() -> Vec<(&'static str, Box<dyn Backend>)> {
    let jit = |vectorize| Box::new(jit::Jit::new(jit::Options { threads: 1, vectorize, ..jit::Options::default() }));
    vec![("emulator", Box::new(emu::Emulator::new())), ("JIT", jit(true)), ("JIT without vector path", jit(false))]
}

/// The 32-bit little-endian words of a buffer.
pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The error a kernel of one instruction body gets at load on the emulator (the JIT decodes the same way):
/// `body` runs in `k(.param .u64 p)` with `%p<4>`, `%r<8>`, `%rd<8>`, `%f<4>` registers and a 256-byte
/// shared array `sh`, on `target`.
pub fn refusal(target: &str, body: &str) -> String {
    let ptx = format!(
        ".version 8.0\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .pred %p<4>;\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<4>;\n.shared .align 16 .b8 sh[256];\n{body}\nret;\n}}\n"
    );
    let module = ir::compile(&ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let one = Dim3::new(1, 1, 1);
    match launch(&mut emu::Emulator::new(), &module, "k", one, Dim3::new(32, 1, 1), 0, &[Arg::Buf(vec![0; 256])]) {
        Ok(_) => panic!("`{body}` was accepted"),
        Err(e) => e,
    }
}

/// The little-endian value of up to 8 bytes.
pub fn load_le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// A small deterministic generator (xorshift) for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}
