//! The runtime API against a mock backend that records what it is asked to launch.

use std::io::Write;
use std::sync::{Arc, Mutex};

use device::{Backend, DeviceMemory, ErrorKind, ExecError, KernelStats, Launch, LaunchReport, LoadedModule, Location};
use ir::FuncId;
use runtime::{
    write_outputs, Arg, ArgList, Dim3, KernelError, LaunchConfig, LaunchOptions, LoadError, MemoryError, OutputSpec,
    RunError, Runtime, SymbolError, SymbolSpec,
};

/// What the mock saw of one launch.
#[derive(Clone, Debug)]
struct Recorded {
    kernel: String,
    config: LaunchConfig,
    bytes: Vec<u8>,
    offsets: Vec<(u64, u64)>,
    collect_stats: bool,
}

/// The mock's "kernel" (boxing its error keeps clippy's `result_large_err` quiet).
type Action = Box<dyn FnMut(&Launch<'_>, &mut DeviceMemory, &mut dyn Write) -> Result<(), Box<ExecError>> + Send>;

struct Mock {
    log: Arc<Mutex<Vec<Recorded>>>,
    unsupported: Option<String>,
    action: Action,
}

impl Backend for Mock {
    fn name(&self) -> &'static str {
        "mock"
    }

    fn check_supported(&self, module: &LoadedModule, kernel: FuncId) -> Result<(), ExecError> {
        match &self.unsupported {
            None => Ok(()),
            Some(what) => Err(ExecError::new(
                ErrorKind::Unsupported(vec![what.clone()]),
                Location { kernel: module.module.functions[kernel].name.clone(), ..Location::default() },
            )),
        }
    }

    fn launch(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        stdout: &mut dyn Write,
    ) -> Result<LaunchReport, ExecError> {
        self.log.lock().unwrap().push(Recorded {
            kernel: launch.module.module.functions[launch.kernel].name.clone(),
            config: launch.config,
            bytes: launch.params.bytes.clone(),
            offsets: launch.params.slots.iter().map(|s| (s.offset, s.size)).collect(),
            collect_stats: launch.collect_stats,
        });
        (self.action)(launch, memory, stdout).map_err(|e| *e)?;
        let stats = launch.collect_stats.then(|| KernelStats { kernel: "mock stats".into(), ..KernelStats::default() });
        Ok(LaunchReport { stats })
    }
}

fn mock_with(action: Action) -> (Runtime, Arc<Mutex<Vec<Recorded>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mock = Mock { log: log.clone(), unsupported: None, action };
    (Runtime::new(Box::new(mock)), log)
}

fn mock() -> (Runtime, Arc<Mutex<Vec<Recorded>>>) {
    mock_with(Box::new(|_, _, _| Ok(())))
}

fn config(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), dynamic_shared: 0 }
}

const MIXED: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry mixed(
	.param .u8 a,
	.param .u64 b,
	.param .f64 c,
	.param .u16 d,
	.param .f32 e,
	.param .align 8 .b8 s[12],
	.param .u8 f
)
{
	ret;
}
"#;

#[test]
fn params_are_laid_out_at_their_alignment() {
    let (mut rt, log) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let strukt: Vec<u8> = (1..=12).collect();
    let args = [
        Arg::U8(0xAA),
        Arg::U64(0x1122_3344_5566_7788),
        Arg::F64(2.5),
        Arg::U16(0xBEEF),
        Arg::F32(-1.0),
        Arg::Bytes(strukt.clone()),
        Arg::U8(0x55),
    ];
    let outcome = rt.launch(m, k, config(2, 64), &args, LaunchOptions { stats: true, cooperative: false }).unwrap();
    assert_eq!(outcome.stats.unwrap().kernel, "mock stats");
    let rec = log.lock().unwrap()[0].clone();
    assert_eq!(rec.kernel, "mixed");
    assert_eq!(rec.config, config(2, 64));
    assert!(rec.collect_stats);
    assert_eq!(rec.offsets, vec![(0, 1), (8, 8), (16, 8), (24, 2), (28, 4), (32, 12), (44, 1)]);
    let b = &rec.bytes;
    assert_eq!(b.len(), 45);
    assert_eq!(b[0], 0xAA);
    assert_eq!(&b[1..8], &[0; 7], "padding stays zero");
    assert_eq!(&b[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(&b[16..24], &2.5f64.to_le_bytes());
    assert_eq!(&b[24..26], &0xBEEFu16.to_le_bytes());
    assert_eq!(&b[28..32], &(-1.0f32).to_le_bytes());
    assert_eq!(&b[32..44], &strukt[..]);
    assert_eq!(b[44], 0x55);
}

#[test]
fn stats_are_only_requested_when_asked() {
    let (mut rt, log) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, Some("mixed")).unwrap();
    let args =
        [Arg::U8(0), Arg::U64(0), Arg::F64(0.0), Arg::U16(0), Arg::F32(0.0), Arg::Bytes(vec![0; 12]), Arg::U8(0)];
    let outcome = rt.launch(m, k, config(1, 1), &args, LaunchOptions::default()).unwrap();
    assert!(outcome.stats.is_none());
    assert!(!log.lock().unwrap()[0].collect_stats);
}

#[test]
fn argument_count_mismatch_lists_the_parameters() {
    let (mut rt, log) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let e = rt.launch(m, k, config(1, 1), &[Arg::U8(1)], LaunchOptions::default()).unwrap_err();
    assert!(matches!(e, RunError::ArgumentCount { expected: 7, given: 1, .. }), "{e:?}");
    assert!(e.is_usage_error());
    let text = e.to_string();
    assert!(text.starts_with("kernel `mixed` takes 7 argument(s), 1 given"), "{text}");
    assert!(text.contains("0 `a` (.u8 parameter)") && text.contains("5 `s` (.b8[12] parameter)"), "{text}");
    assert!(log.lock().unwrap().is_empty(), "nothing launched");
}

fn arg_error(args: &[Arg]) -> RunError {
    let (mut rt, log) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let e = rt.launch(m, k, config(1, 1), args, LaunchOptions::default()).unwrap_err();
    assert!(log.lock().unwrap().is_empty(), "nothing launched");
    e
}

fn good_args() -> Vec<Arg> {
    vec![Arg::U8(0), Arg::U64(0), Arg::F64(0.0), Arg::U16(0), Arg::F32(0.0), Arg::Bytes(vec![0; 12]), Arg::U8(0)]
}

#[test]
fn argument_errors_name_index_and_parameter() {
    let mut args = good_args();
    args[1] = Arg::U32(5);
    let e = arg_error(&args);
    assert!(matches!(&e, RunError::Argument { index: 1, param, .. } if param == "1 `b`"), "{e:?}");
    assert_eq!(
        e.to_string(),
        "argument 1 of kernel `mixed` (parameter 1 `b`): a .u64 parameter is 8 bytes, the u32 value has 4"
    );

    let mut args = good_args();
    args[4] = Arg::S32(2);
    let e = arg_error(&args);
    assert!(e.to_string().ends_with("(parameter 4 `e`): a s32 value cannot be passed to a .f32 parameter"), "{e}");

    let mut args = good_args();
    args[0] = Arg::F32(1.0);
    let e = arg_error(&args);
    assert!(e.to_string().contains("a f32 value cannot be passed to a .u8 parameter"), "{e}");

    let mut args = good_args();
    args[3] = Arg::Ptr(0x1000);
    let e = arg_error(&args);
    assert!(
        e.to_string().contains("a device pointer needs an 8-byte integer parameter (.u64 or .b64), not a .u16"),
        "{e}"
    );

    let mut args = good_args();
    args[2] = Arg::Ptr(0x1000);
    let e = arg_error(&args);
    assert!(e.to_string().contains("not a .f64 parameter"), "{e}");

    let mut args = good_args();
    args[5] = Arg::Bytes(vec![0; 11]);
    let e = arg_error(&args);
    assert!(
        e.to_string().contains("(parameter 5 `s`): a .b8[12] parameter is 12 bytes, the bytes value has 11"),
        "{e}"
    );

    let mut args = good_args();
    args[5] = Arg::U64(0);
    let e = arg_error(&args);
    assert!(e.to_string().contains("a u64 value cannot be passed to a .b8[12] parameter"), "{e}");

    // A pointer into an 8-byte integer parameter is fine, and raw bytes of the right size go anywhere.
    let mut args = good_args();
    args[1] = Arg::Ptr(0x1000);
    args[2] = Arg::Bytes(vec![0; 8]);
    let (mut rt, _) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    rt.launch(m, k, config(1, 1), &args, LaunchOptions::default()).unwrap();
}

const SHARED: &str = r#".version 8.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn[];

.visible .entry big()
{
	.shared .align 4 .b8 tile[204800];
	ret;
}
"#;

#[test]
fn launch_shape_and_shared_memory_are_validated() {
    let (mut rt, log) = mock();
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let mut wide = config(1, 64);
    wide.block.y = 32;
    let e = rt.launch(m, k, wide, &good_args(), LaunchOptions::default()).unwrap_err();
    assert!(matches!(e, RunError::InvalidLaunch { .. }), "{e:?}");
    assert!(e.to_string().contains("more than 1024 threads"), "{e}");
    let e = rt.launch(m, k, config(0, 32), &good_args(), LaunchOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no zero dimension"), "{e}");

    let s = rt.load_ptx(SHARED, "shared.ptx").unwrap();
    let big = rt.kernel(s, None).unwrap();
    let mut cfg = config(1, 32);
    cfg.dynamic_shared = 227 * 1024 - 204800;
    rt.launch(s, big, cfg, &[], LaunchOptions::default()).unwrap();
    cfg.dynamic_shared += 1;
    let e = rt.launch(s, big, cfg, &[], LaunchOptions::default()).unwrap_err();
    assert!(e.is_usage_error());
    assert!(
        e.to_string()
            .contains("204800 bytes of static and 27649 bytes of dynamic shared memory exceed the 232448-byte"),
        "{e}"
    );
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn unsupported_kernels_are_refused_before_running() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mock =
        Mock { log: log.clone(), unsupported: Some("line 3: `tex.2d`".into()), action: Box::new(|_, _, _| Ok(())) };
    let mut rt = Runtime::new(Box::new(mock));
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let e = rt.launch(m, k, config(1, 1), &good_args(), LaunchOptions::default()).unwrap_err();
    assert!(matches!(&e, RunError::Exec(x) if matches!(x.kind, ErrorKind::Unsupported(_))), "{e:?}");
    assert!(!e.is_usage_error());
    assert!(e.to_string().contains("unsupported instructions: line 3: `tex.2d`"), "{e}");
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn kernel_errors_are_returned_with_their_location() {
    let (mut rt, _) = mock_with(Box::new(|launch, _, _| {
        Err(Box::new(ExecError::new(
            ErrorKind::OutOfBounds { space: device::Space::Global, address: 0x40, size: 4, detail: None },
            Location {
                kernel: launch.module.module.functions[launch.kernel].name.clone(),
                block: Some(Dim3::new(1, 0, 0)),
                thread: Some(Dim3::new(5, 0, 0)),
                line: Some(15),
                ..Location::default()
            },
        )))
    }));
    let m = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    let k = rt.kernel(m, None).unwrap();
    let e = rt.launch(m, k, config(2, 32), &good_args(), LaunchOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "out-of-bounds global access of 4 bytes at 0x40\n  at kernel `mixed`, block (1,0,0), thread (5,0,0), PTX line 15"
    );
}

const TWO: &str = r#".version 8.0
.target sm_80
.address_size 64

.func helper()
{
	ret;
}

.extern .entry elsewhere();

.visible .entry first()
{
	ret;
}

.visible .entry second()
{
	ret;
}
"#;

#[test]
fn kernels_are_found_by_name_or_as_the_only_one() {
    let (mut rt, _) = mock();
    let m = rt.load_ptx(TWO, "two.ptx").unwrap();
    let names = vec!["first".to_string(), "second".to_string()];
    assert_eq!(rt.kernel(m, None), Err(KernelError::Ambiguous { kernels: names.clone() }));
    assert_eq!(rt.kernel(m, None).unwrap_err().to_string(), "the module defines 2 kernels; choose one: first, second");
    assert!(rt.kernel(m, Some("second")).is_ok());
    let e = rt.kernel(m, Some("third")).unwrap_err();
    assert_eq!(e.to_string(), "no kernel named `third`; kernels: first, second");
    let e = rt.kernel(m, Some("helper")).unwrap_err();
    assert_eq!(e, KernelError::NotAKernel { name: "helper".into(), kernels: names.clone() });
    let e = rt.kernel(m, Some("elsewhere")).unwrap_err();
    assert_eq!(e, KernelError::NotDefined { name: "elsewhere".into(), kernels: names });
    let one = rt.load_ptx(MIXED, "mixed.ptx").unwrap();
    assert_eq!(rt.module(one).unwrap().module.functions[rt.kernel(one, None).unwrap()].name, "mixed");
    // Launching something that is not a kernel is refused.
    let helper = rt.module(m).unwrap().module.function("helper").unwrap();
    let e = rt.launch(m, helper, config(1, 1), &[], LaunchOptions::default()).unwrap_err();
    assert!(matches!(e, RunError::NotAKernel(_)), "{e:?}");
}

#[test]
fn load_errors_render_diagnostics_with_the_file_name() {
    let (mut rt, _) = mock();
    let bad = MIXED.replace("ret;", "retx;");
    let e = rt.load_ptx(&bad, "kernels/mixed.ptx").unwrap_err();
    assert!(matches!(&e, LoadError::Compile { diagnostics, .. } if !diagnostics.is_empty()));
    let text = e.to_string();
    assert!(text.starts_with("kernels/mixed.ptx:15:"), "{text}");
    assert!(text.contains("retx") && text.trim_end().ends_with("error(s)"), "{text}");
    let e = rt.load_ptx_bytes(b".version 8.0\n\xff\xfe", "bin.ptx").unwrap_err();
    assert!(e.to_string().starts_with("bin.ptx:2:"), "{e}");
}

const SYMBOLS: &str = r#".version 8.0
.target sm_80
.address_size 64

.global .align 4 .u32 counter = 5;
.const .align 4 .f32 coeffs[4] = {1.0, 2.0, 3.0, 4.0};
.shared .align 4 .u32 scratch[4];

.visible .entry use(.param .u64 out)
{
	ret;
}
"#;

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn symbols_are_read_and_written_before_a_launch() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let (mut rt, _) = mock_with(Box::new(move |launch, memory, _| {
        // The "kernel" reads `coeffs` as a real one would.
        let (_, ptr, size) = launch.module.symbol("coeffs").unwrap();
        let mut buf = vec![0u8; size as usize];
        memory.read(ptr, &mut buf).unwrap();
        seen2.lock().unwrap().push(buf);
        Ok(())
    }));
    let m = rt.load_ptx(SYMBOLS, "symbols.ptx").unwrap();
    let (ptr, size) = rt.symbol(m, "coeffs").unwrap();
    assert_eq!(size, 16);
    assert_eq!(f32s(&rt.read(ptr, size).unwrap()), vec![1.0, 2.0, 3.0, 4.0]);
    let (cptr, csize) = rt.symbol(m, "counter").unwrap();
    assert_eq!((rt.read(cptr, csize).unwrap()), 5u32.to_le_bytes());

    // A shorter write fills a prefix of a .const variable; the rest keeps its initializer.
    let data: Vec<u8> = [9.0f32, 8.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    rt.write_symbol(m, "coeffs", &data).unwrap();
    let k = rt.kernel(m, None).unwrap();
    let out = rt.alloc(4).unwrap();
    rt.launch(m, k, config(1, 1), &[Arg::Ptr(out)], LaunchOptions::default()).unwrap();
    assert_eq!(f32s(&seen.lock().unwrap()[0]), vec![9.0, 8.0, 3.0, 4.0]);

    assert_eq!(
        rt.write_symbol(m, "coeffs", &[0; 17]),
        Err(SymbolError::TooLarge { name: "coeffs".into(), size: 16, given: 17 })
    );
    assert_eq!(
        rt.write_symbol(m, "coeffs", &[0; 17]).unwrap_err().to_string(),
        "`coeffs` has 16 bytes, 17 bytes given"
    );
    let e = rt.symbol(m, "scratch").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`scratch` is a .shared variable; only .global and .const variables live in device memory"
    );
    let e = rt.symbol(m, "nope").unwrap_err();
    assert_eq!(e.to_string(), "no module-scope variable named `nope`; .global/.const variables: counter, coeffs");

    // From a file, as `--symbol coeffs=@PATH` does.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bin");
    std::fs::write(&path, [0u8; 16]).unwrap();
    let spec = SymbolSpec::parse(&format!("coeffs=@{}", path.display())).unwrap();
    assert_eq!(spec.apply(&mut rt, m), Ok(16));
    assert_eq!(rt.read(ptr, 16).unwrap(), vec![0; 16]);
    std::fs::write(&path, [0u8; 20]).unwrap();
    let e = spec.apply(&mut rt, m).unwrap_err();
    assert!(e.starts_with("--symbol coeffs=@") && e.ends_with("`coeffs` has 16 bytes, 20 bytes given"), "{e}");
    let e = SymbolSpec::parse("nope=@/nonexistent").unwrap().apply(&mut rt, m).unwrap_err();
    assert!(e.contains("no module-scope variable named `nope`"), "{e}");
}

/// A kernel `out[i] = a[i] + b[i]` over the buffers in params 0..3, and n in param 3, like the corpus's
/// vector_add; it also prints a line.
fn vector_add_mock(
    launch: &Launch<'_>,
    memory: &mut DeviceMemory,
    stdout: &mut dyn Write,
) -> Result<(), Box<ExecError>> {
    let p = &launch.params;
    let word = |i: usize| u64::from_le_bytes(p.bytes[p.slots[i].offset as usize..][..8].try_into().unwrap());
    let n = u32::from_le_bytes(p.bytes[p.slots[3].offset as usize..][..4].try_into().unwrap());
    for i in 0..u64::from(n) {
        let mut x = [0u8; 4];
        let mut y = [0u8; 4];
        memory.read(word(0) + 4 * i, &mut x).unwrap();
        memory.read(word(1) + 4 * i, &mut y).unwrap();
        let sum = f32::from_le_bytes(x) + f32::from_le_bytes(y);
        memory.write(word(2) + 4 * i, &sum.to_le_bytes()).unwrap();
    }
    writeln!(stdout, "added {n}").unwrap();
    Ok(())
}

const VECTOR_ADD: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry vector_add(
	.param .u64 a,
	.param .u64 b,
	.param .u64 c,
	.param .u32 n
)
{
	ret;
}
"#;

#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn arg_specs_buffers_and_outputs_end_to_end() {
    let (mut rt, _) = mock_with(Box::new(vector_add_mock));
    let printed = SharedBuf::default();
    rt.set_printf_output(Box::new(printed.clone()));
    let m = rt.load_ptx(VECTOR_ADD, "va.ptx").unwrap();
    let k = rt.kernel(m, Some("vector_add")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bfile = dir.path().join("b.bin");
    std::fs::write(&bfile, [0.5f32; 8].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let specs = ["f32[8]:iota".to_string(), format!("f32[]:@{}", bfile.display()), "f32[8]:0".into(), "u32:8".into()];
    let list = ArgList::parse(&specs).unwrap();
    let prepared = list.materialize(&mut rt).unwrap();
    assert_eq!(prepared.buffers.iter().filter(|b| b.is_some()).count(), 3);
    assert_eq!(prepared.buffer(1).unwrap().len, 8);

    let out_path = dir.path().join("c.bin");
    let outputs = vec![OutputSpec { index: 2, path: out_path.clone() }];
    for o in &outputs {
        o.check(&prepared).unwrap();
    }
    assert_eq!(
        OutputSpec::parse("3=x").unwrap().check(&prepared).unwrap_err(),
        "--out 3=x: argument 3 (`u32:8`) is not a device buffer"
    );
    assert_eq!(
        OutputSpec::parse("9=x").unwrap().check(&prepared).unwrap_err(),
        "--out 9=x: there is no argument 9 (4 given)"
    );

    rt.launch(m, k, config(1, 32), &prepared.args, LaunchOptions::default()).unwrap();
    assert_eq!(String::from_utf8(printed.0.lock().unwrap().clone()).unwrap(), "added 8\n");
    let written = write_outputs(&rt, &prepared, &outputs).unwrap();
    assert_eq!(written[0].bytes, 32);
    let got = f32s(&std::fs::read(&out_path).unwrap());
    assert_eq!(got, (0..8).map(|i| i as f32 + 0.5).collect::<Vec<_>>());

    // launch_with_output sends printf elsewhere.
    let mut other = Vec::new();
    rt.launch_with_output(m, k, config(1, 32), &prepared.args, LaunchOptions::default(), &mut other).unwrap();
    assert_eq!(other, b"added 8\n");
    assert_eq!(printed.0.lock().unwrap().len(), 8, "the runtime's writer got nothing more");
}

#[test]
fn materialize_errors_name_the_argument() {
    let (mut rt, _) = mock();
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.bin");
    std::fs::write(&x, [0u8; 12]).unwrap();
    let spec = format!("f32[10]:@{}", x.display());
    let list = ArgList::parse(&["s32:1".to_string(), "u8:2".into(), "f32:1".into(), spec.clone()]).unwrap();
    let e = list.materialize(&mut rt).unwrap_err();
    assert_eq!(e.to_string(), format!("--arg 3 (`{spec}`): file has 12 bytes, expected 40"));

    rt.set_memory_limit(1 << 20);
    let e = ArgList::parse(&["f64[1000000]:iota"]).unwrap().materialize(&mut rt).unwrap_err();
    assert!(e.to_string().starts_with("--arg 0 (`f64[1000000]:iota`): cannot allocate 8000000 bytes"), "{e}");
}

#[test]
fn device_memory_api() {
    let (mut rt, _) = mock();
    let a = rt.alloc(16).unwrap();
    assert_eq!(a % 256, 0);
    assert_eq!(rt.read(a, 16).unwrap(), vec![0; 16]);
    rt.copy_to_device(a + 4, &[1, 2, 3, 4]).unwrap();
    let mut out = [0u8; 6];
    rt.copy_from_device(a + 3, &mut out).unwrap();
    assert_eq!(out, [0, 1, 2, 3, 4, 0]);
    let b = rt.alloc_from(&[7; 8]).unwrap();
    assert_eq!(rt.read(b, 8).unwrap(), vec![7; 8]);

    let e = rt.copy_to_device(a + 10, &[0; 8]).unwrap_err();
    assert!(matches!(e, MemoryError::OutOfBounds { ptr, len: 8, .. } if ptr == a + 10));
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("8 bytes at device pointer {:#x} are not inside one allocation", a + 10)),
        "{text}"
    );
    assert!(text.contains("starts 10 bytes into it and ends 2 bytes past its end"), "{text}");
    let e = rt.read(a + 16, 1).unwrap_err();
    assert!(e.to_string().contains(&format!("{:#x}", a + 16)), "{e}");
    let e = rt.read(0x10, 4).unwrap_err();
    assert_eq!(e.to_string(), "4 bytes at device pointer 0x10 are not inside one allocation");
    let mut big = vec![0u8; 17];
    assert!(rt.copy_from_device(a, &mut big).is_err());
    assert_eq!(rt.read(a, 0).unwrap(), Vec::<u8>::new());

    let e = rt.free(a + 1).unwrap_err();
    assert!(matches!(e, MemoryError::NotAnAllocation { ptr, .. } if ptr == a + 1));
    assert!(e.to_string().contains("no allocation starts there (1 bytes into `allocation 0`"), "{e}");
    rt.free(a).unwrap();
    let e = rt.free(a).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!("cannot free device pointer {a:#x}: no allocation starts there")),
        "{e}"
    );
    assert!(rt.read(a, 1).is_err());

    let m = rt.load_ptx(SYMBOLS, "symbols.ptx").unwrap();
    let (c, _) = rt.symbol(m, "counter").unwrap();
    let e = rt.free(c).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot free device pointer {c:#x}: it is the global variable `counter`, which lives as long as its module"
        )
    );

    rt.set_memory_limit(rt.memory().allocated() + 100);
    assert!(rt.alloc(100).is_ok());
    let e = rt.alloc(1).unwrap_err();
    assert!(matches!(e, MemoryError::OutOfMemory { requested: 1, .. }), "{e:?}");
    assert!(rt.alloc(u64::MAX).is_err());
}
