//! Bulk tensor copies (TMA) on both engines: `cp.async.bulk.tensor` loads of 1-D to 5-D boxes with
//! out-of-bounds elements at every edge (zero and NaN fill), traversal strides, the 32-, 64- and 128-byte
//! swizzles, stores and `.add` reductions from shared memory that skip out-of-bounds elements, and the
//! errors of a map that does not fit the instruction (the loads are preceded by the tensormap proxy's
//! acquire fence and a tensor prefetch, which change nothing). The tensor maps come from
//! `program::tensormap::encode_tiled` (what `cuTensorMapEncodeTiled` calls); the expected boxes from a model
//! of the PTX ISA's description of tensor copies (5.5 and 9.7.9.25.5), written here.

mod common;

use common::{launch, Arg};
use device::Dim3;
use program::tensormap::{encode_tiled, Tiled};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";
const THREADS: u32 = 32;

/// A tensor's description, as a test passes it to the encoder and to the model.
#[derive(Clone)]
struct Desc {
    dtype: u32,
    elem: usize,
    dims: Vec<u64>,
    /// Byte strides of dimensions 1 and up.
    strides: Vec<u64>,
    boxes: Vec<u32>,
    es: Vec<u32>,
    /// 0 none, 1 32B, 2 64B, 3 128B.
    swizzle: u32,
    nan: bool,
}

impl Desc {
    fn new(dtype: u32, elem: usize, dims: &[u64], strides: &[u64], boxes: &[u32]) -> Desc {
        Desc {
            dtype,
            elem,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            boxes: boxes.to_vec(),
            es: vec![1; dims.len()],
            swizzle: 0,
            nan: false,
        }
    }

    fn map(&self) -> [u8; 128] {
        let t = Tiled {
            dtype: self.dtype,
            address: 0,
            dims: &self.dims,
            strides: &self.strides,
            boxes: &self.boxes,
            element_strides: &self.es,
            swizzle: self.swizzle,
            oob_fill: u32::from(self.nan),
            ..Tiled::default()
        };
        encode_tiled(&t).expect("a valid map")
    }

    fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Elements along dimension `i` of the box: the traversal stride of dimension 0 does not apply.
    fn count(&self, i: usize) -> usize {
        let es = if i == 0 { 1 } else { self.es[i] };
        self.boxes[i].div_ceil(es) as usize
    }

    fn box_bytes(&self) -> usize {
        (0..self.rank()).map(|i| self.count(i)).product::<usize>() * self.elem
    }

    /// The tensor's size in bytes: the outermost dimension's extent at its stride.
    fn tensor_bytes(&self) -> usize {
        let r = self.rank();
        if r == 1 {
            self.dims[0] as usize * self.elem
        } else {
            (self.dims[r - 1] * self.strides[r - 2]) as usize
        }
    }

    /// Where the box's element `e` (row-major, dimension 0 fastest) lies in shared memory: the box is dense,
    /// then each 16-byte chunk within a swizzle span moves to the chunk whose index is XOR-ed with the
    /// 128-byte row's index modulo the number of chunks in the span.
    fn shared_offset(&self, e: usize) -> usize {
        let off = e * self.elem;
        if self.swizzle == 0 {
            return off;
        }
        let chunks = 1usize << self.swizzle;
        let span = 16 * chunks;
        let chunk = off % span / 16;
        let row = off / 128;
        off - chunk * 16 + (chunk ^ (row % chunks)) * 16
    }

    /// For each element of the box: its shared offset and its byte offset in the tensor (`None` outside).
    fn elements(&self, coords: &[i32]) -> Vec<(usize, Option<usize>)> {
        let counts: Vec<usize> = (0..self.rank()).map(|i| self.count(i)).collect();
        let total: usize = counts.iter().product();
        (0..total)
            .map(|e| {
                let mut rest = e;
                let mut at = Some(0usize);
                for i in 0..self.rank() {
                    let k = rest % counts[i];
                    rest /= counts[i];
                    let es = if i == 0 { 1 } else { self.es[i] };
                    let x = i64::from(coords[i]) + (k as i64) * i64::from(es);
                    let stride = if i == 0 { self.elem as u64 } else { self.strides[i - 1] };
                    at = match at {
                        Some(a) if x >= 0 && (x as u64) < self.dims[i] => Some(a + (x as u64 * stride) as usize),
                        _ => None,
                    };
                }
                (self.shared_offset(e), at)
            })
            .collect()
    }

    /// The shared-memory image a load of the box at `coords` produces.
    fn load(&self, tensor: &[u8], coords: &[i32]) -> Vec<u8> {
        let mut out = vec![0u8; self.box_bytes()];
        let fill: Vec<u8> = match (self.nan, self.elem) {
            (false, _) => vec![0; self.elem],
            (true, 2) => 0x7fffu16.to_le_bytes().to_vec(),
            (true, 4) => 0x7fff_ffffu32.to_le_bytes().to_vec(),
            (true, _) => 0x7fff_ffff_ffff_ffffu64.to_le_bytes().to_vec(),
        };
        for (s, g) in self.elements(coords) {
            let v = match g {
                Some(g) => &tensor[g..g + self.elem],
                None => &fill[..],
            };
            out[s..s + self.elem].copy_from_slice(v);
        }
        out
    }

    /// The tensor after a store (or, with `add`, a `.u32` add reduction) of the shared image `image`.
    fn store(&self, tensor: &[u8], image: &[u8], coords: &[i32], add: bool) -> Vec<u8> {
        let mut out = tensor.to_vec();
        for (s, g) in self.elements(coords) {
            let Some(g) = g else { continue };
            if add {
                let old = u32::from_le_bytes(out[g..g + 4].try_into().unwrap());
                let v = u32::from_le_bytes(image[s..s + 4].try_into().unwrap());
                out[g..g + 4].copy_from_slice(&old.wrapping_add(v).to_le_bytes());
            } else {
                out[g..g + self.elem].copy_from_slice(&image[s..s + self.elem]);
            }
        }
        out
    }
}

fn coord_params(rank: usize) -> (String, String, String) {
    let params: String = (0..rank).map(|i| format!(", .param .u32 c{i}")).collect();
    let loads: String = (0..rank).map(|i| format!("    ld.param.u32 %r{}, [c{i}];\n", 10 + i)).collect();
    let regs: Vec<String> = (0..rank).map(|i| format!("%r{}", 10 + i)).collect();
    (params, loads, regs.join(", "))
}

/// The words of the box, 32 threads copying words `t`, `t + 32`, ... between shared memory and `%rd3`
/// (`to_global`: shared to global).
fn word_loop(bytes: usize, to_global: bool) -> String {
    let (ld, st) = if to_global {
        ("ld.shared.u32 %r6, [%r5];", "st.global.u32 [%rd6], %r6;")
    } else {
        ("ld.global.u32 %r6, [%rd6];", "st.shared.u32 [%r5], %r6;")
    };
    format!(
        r#"    mov.u32 %r3, %r2;
LOOP:
    shl.b32 %r4, %r3, 2;
    setp.ge.u32 %p3, %r4, {bytes};
    @%p3 bra LOOPED;
    mov.u32 %r5, box;
    add.u32 %r5, %r5, %r4;
    cvt.u64.u32 %rd5, %r4;
    add.s64 %rd6, %rd3, %rd5;
    {ld}
    {st}
    add.u32 %r3, %r3, {THREADS};
    bra LOOP;
LOOPED:
"#
    )
}

/// A kernel loading the box at the coordinates `c0...` into shared memory (thread 0 issues the copy, all
/// threads wait on the mbarrier), then copying it to `out`. Its parameters: the tensor, the map, `out`,
/// the box's bytes (the arrival's expect-tx) and the coordinates.
fn load_kernel(rank: usize, bytes: usize, form: &str) -> String {
    let (params, loads, regs) = coord_params(rank);
    let words = word_loop(bytes, true);
    let size = bytes.max(16);
    format!(
        r#"{HEADER}
.visible .entry load(.param .u64 tensor, .param .align 64 .b8 map[128], .param .u64 out, .param .u32 bytes{params})
{{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    .reg .pred %p<4>;
    .shared .align 1024 .b8 box[{size}];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, map;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [out];
    ld.param.u32 %r1, [bytes];
{loads}    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra INITED;
    mbarrier.init.shared.b64 [bar], {THREADS};
INITED:
    bar.sync 0;
    @%p1 bra ARRIVE;
    fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
    cp.async.bulk.prefetch.tensor.{rank}d.L2.global.tile [%rd2, {{{regs}}}];
    cp.async.bulk.tensor.{rank}d.{form} [box], [%rd2, {{{regs}}}], [bar];
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [bar], %r1;
    bra WAIT;
ARRIVE:
    mbarrier.arrive.shared::cta.b64 %rd4, [bar];
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p2, [bar], %rd4;
    @!%p2 bra WAIT;
{words}    ret;
}}
"#
    )
}

/// A kernel filling the shared box from `in` and storing it (or reducing it, `op` the instruction) into
/// the tensor at the coordinates. Its parameters: the tensor, the map, `in`, the coordinates.
fn store_kernel(rank: usize, bytes: usize, op: &str) -> String {
    let (params, loads, regs) = coord_params(rank);
    let words = word_loop(bytes, false);
    format!(
        r#"{HEADER}
.visible .entry store(.param .u64 tensor, .param .align 64 .b8 map[128], .param .u64 in{params})
{{
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    .reg .pred %p<4>;
    .shared .align 1024 .b8 box[{bytes}];
    mov.b64 %rd1, map;
    cvta.param.u64 %rd2, %rd1;
    ld.param.u64 %rd3, [in];
{loads}    mov.u32 %r2, %tid.x;
{words}    fence.proxy.async.shared::cta;
    bar.sync 0;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    {op}.{rank}d.global.shared::cta.tile.bulk_group [%rd2, {{{regs}}}], [box];
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
DONE:
    ret;
}}
"#
    )
}

type Results = Vec<(&'static str, Result<Vec<Vec<u8>>, String>)>;

fn run_all(ptx: &str, kernel: &str, args: &[Arg]) -> Results {
    let module = ir::compile(ptx).unwrap_or_else(|d| panic!("{d:?}\n{ptx}"));
    let (g, b) = (Dim3::new(1, 1, 1), Dim3::new(THREADS, 1, 1));
    let mut out = vec![("emulator", launch(&mut emu::Emulator::new(), &module, kernel, g, b, 0, args).map(|r| r.0))];
    for (name, vectorize, threads) in [("JIT (scalar)", false, 1), ("JIT", true, 1), ("JIT (4 workers)", true, 4)] {
        let mut jit = jit::Jit::new(jit::Options { threads, vectorize, ..jit::Options::default() });
        out.push((name, launch(&mut jit, &module, kernel, g, b, 0, args).map(|r| r.0)));
    }
    out
}

fn scalar(v: i32) -> Arg {
    Arg::Scalar(v.to_le_bytes().to_vec())
}

/// A tensor of distinct bytes (no element is zero or the NaN fill by accident).
fn tensor_of(d: &Desc) -> Vec<u8> {
    (0..d.tensor_bytes()).map(|i| (i * 7 % 251 + 1) as u8).collect()
}

/// Loads the box at each of `coords` on every engine and compares with the model.
fn check_loads(d: &Desc, form: &str, coords: &[&[i32]]) {
    let tensor = tensor_of(d);
    let bytes = d.box_bytes();
    let ptx = load_kernel(d.rank(), bytes, form);
    for c in coords {
        let mut args =
            vec![Arg::Buf(tensor.clone()), Arg::TensorMap(0, d.map()), Arg::Buf(vec![0; bytes]), scalar(bytes as i32)];
        args.extend(c.iter().map(|&x| scalar(x)));
        let expected = d.load(&tensor, c);
        for (engine, r) in run_all(&ptx, "load", &args) {
            let bufs = r.unwrap_or_else(|e| panic!("{engine} at {c:?}: {e}"));
            assert_eq!(bufs[1], expected, "{engine}: the box at {c:?}");
        }
    }
}

/// Stores (or with `add`, reduces) a box at each of `coords` and compares the tensor with the model.
fn check_stores(d: &Desc, add: bool, coords: &[&[i32]]) {
    let tensor = tensor_of(d);
    let bytes = d.box_bytes();
    let image: Vec<u8> = (0..bytes).map(|i| (i * 13 % 241 + 3) as u8).collect();
    // `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group`: the operation follows the
    // spaces.
    let ptx = if add {
        store_kernel(d.rank(), bytes, "cp.reduce.async.bulk.tensor")
            .replace(".global.shared::cta.tile.bulk_group", ".global.shared::cta.add.tile.bulk_group")
    } else {
        store_kernel(d.rank(), bytes, "cp.async.bulk.tensor")
    };
    for c in coords {
        let mut args = vec![Arg::Buf(tensor.clone()), Arg::TensorMap(0, d.map()), Arg::Buf(image.clone())];
        args.extend(c.iter().map(|&x| scalar(x)));
        let expected = d.store(&tensor, &image, c, add);
        for (engine, r) in run_all(&ptx, "store", &args) {
            let bufs = r.unwrap_or_else(|e| panic!("{engine} at {c:?}: {e}"));
            assert_eq!(bufs[0], expected, "{engine}: the tensor after a store at {c:?}");
        }
    }
}

const U8: u32 = 0;
const U16: u32 = 1;
const U32: u32 = 2;
const F32: u32 = 7;
const CLUSTER: &str = "shared::cluster.global.tile.mbarrier::complete_tx::bytes";
const CTA: &str = "shared::cta.global.mbarrier::complete_tx::bytes";

#[test]
fn one_dimensional_boxes_at_both_edges() {
    let d = Desc::new(F32, 4, &[100], &[], &[32]);
    check_loads(&d, CLUSTER, &[&[12], &[-8], &[80], &[-40], &[100]]);
}

#[test]
fn two_dimensional_boxes_past_every_edge_and_corner() {
    // Rows of 40 u16 padded to 96 bytes.
    let d = Desc::new(U16, 2, &[40, 30], &[96], &[16, 8]);
    let coords: &[&[i32]] = &[&[8, 3], &[-8, 10], &[32, 10], &[8, -5], &[8, 25], &[-8, -6], &[32, 27], &[-8, 27]];
    check_loads(&d, CLUSTER, coords);
    check_loads(&d, CTA, &[&[32, 27]]);
}

#[test]
fn three_dimensional_boxes_with_traversal_strides() {
    let mut d = Desc::new(U8, 1, &[50, 7, 6], &[64, 448], &[16, 4, 5]);
    d.es = vec![4, 2, 3];
    check_loads(&d, CLUSTER, &[&[0, 0, 0], &[-16, 5, 4], &[48, -1, -2]]);
}

#[test]
fn four_and_five_dimensional_boxes() {
    let d = Desc::new(U32, 4, &[6, 3, 2, 3], &[32, 96, 192], &[4, 2, 2, 2]);
    check_loads(&d, CLUSTER, &[&[4, 2, -1, 2]]);
    let d = Desc::new(U32, 4, &[8, 2, 2, 2, 3], &[32, 64, 128, 256], &[4, 2, 1, 2, 2]);
    check_loads(&d, CLUSTER, &[&[4, -1, 1, 0, 2]]);
}

#[test]
fn nan_fill_of_float_tensors() {
    let mut d = Desc::new(F32, 4, &[20], &[], &[8]);
    d.nan = true;
    check_loads(&d, CLUSTER, &[&[-4], &[16]]);
}

#[test]
fn each_swizzle_mode_in_loads_and_stores() {
    for swizzle in 1..=3u32 {
        let span = 16u32 << swizzle;
        let mut d = Desc::new(F32, 4, &[64, 40], &[256], &[span / 4, 16]);
        d.swizzle = swizzle;
        check_loads(&d, CLUSTER, &[&[8, 4], &[-4, 30]]);
        check_stores(&d, false, &[&[60, 30]]);
    }
}

#[test]
fn stores_and_reductions_skip_out_of_bounds_elements() {
    let d = Desc::new(U32, 4, &[20, 12], &[96], &[8, 4]);
    check_stores(&d, false, &[&[4, 3], &[0, 0], &[16, 10]]);
    check_stores(&d, true, &[&[16, 9]]);
    let d = Desc::new(U8, 1, &[33, 5, 4], &[48, 240], &[32, 2, 2]);
    check_stores(&d, false, &[&[16, 4, 3]]);
}

/// What a GPU refuses with an illegal-instruction fault (an H200 with CUDA 13): a box whose innermost start is
/// not 16-byte aligned, and a store or reduction box starting before the tensor (loads may).
#[test]
fn boxes_a_gpu_refuses_are_illegal_instructions() {
    let d = Desc::new(F32, 4, &[100, 4], &[400], &[32, 2]);
    let tensor = tensor_of(&d);
    let bytes = d.box_bytes();
    let load = load_kernel(2, bytes, CLUSTER);
    let store = store_kernel(2, bytes, "cp.async.bulk.tensor");
    let cases: [(&str, &str, [i32; 2]); 3] =
        [(load.as_str(), "load", [5, 0]), (store.as_str(), "store", [0, -1]), (store.as_str(), "store", [-4, 0])];
    for (ptx, kernel, c) in cases {
        let mut args = vec![Arg::Buf(tensor.clone()), Arg::TensorMap(0, d.map()), Arg::Buf(vec![0; bytes])];
        if kernel == "load" {
            args.push(scalar(bytes as i32));
        }
        args.extend(c.iter().map(|&x| scalar(x)));
        for (engine, r) in run_all(ptx, kernel, &args) {
            let e = r.expect_err(&format!("{engine}: a {kernel} at {c:?} must fail"));
            assert!(e.to_string().contains("illegal instruction"), "{engine}: a {kernel} at {c:?}: {e}");
        }
    }
}

#[test]
fn a_map_that_does_not_fit_the_instruction_is_an_error() {
    // A 1-D map given to a 2-D copy.
    let d = Desc::new(F32, 4, &[64], &[], &[8]);
    let ptx = load_kernel(2, 32, CLUSTER);
    let args =
        [Arg::Buf(tensor_of(&d)), Arg::TensorMap(0, d.map()), Arg::Buf(vec![0; 32]), scalar(32), scalar(0), scalar(0)];
    for (engine, r) in run_all(&ptx, "load", &args) {
        let e = r.err().unwrap_or_else(|| panic!("{engine}: the launch succeeded"));
        assert!(e.contains("2d tensor copy with a tensor map of rank 1"), "{engine}: {e}");
    }
    // A box larger than the CTA's shared memory (16 bytes of box and an mbarrier).
    let d = Desc::new(F32, 4, &[64], &[], &[64]);
    let small = load_kernel(1, 16, CLUSTER);
    let args = [Arg::Buf(tensor_of(&d)), Arg::TensorMap(0, d.map()), Arg::Buf(vec![0; 16]), scalar(256), scalar(0)];
    for (engine, r) in run_all(&small, "load", &args) {
        let e = r.err().unwrap_or_else(|| panic!("{engine}: the launch succeeded"));
        assert!(e.contains("box of 256 bytes runs past the CTA's shared memory"), "{engine}: {e}");
    }
    // Parameter bytes that are no tensor map.
    let args =
        [Arg::Buf(vec![0; 64]), Arg::Scalar(vec![0; 128]), Arg::Buf(vec![0; 32]), scalar(32), scalar(0), scalar(0)];
    for (engine, r) in run_all(&ptx, "load", &args) {
        let e = r.err().unwrap_or_else(|| panic!("{engine}: the launch succeeded"));
        assert!(e.contains("cuTensorMapEncodeTiled"), "{engine}: {e}");
    }
}

/// A map rewritten on the device: the kernel parameter's map is copied to shared memory, its global address
/// replaced by `other`'s with `tensormap.replace`, copied out to global memory with
/// `tensormap.cp_fenceproxy` (by the whole warp, as `.sync.aligned` requires), and the load through the new
/// map after the tensormap proxy's acquire fence reads `other`.
#[test]
fn a_map_modified_on_the_device_reads_its_new_tensor() {
    let d = Desc::new(F32, 4, &[64], &[], &[16]);
    let ptx = format!(
        r#"{HEADER}
.visible .entry k(.param .u64 tensor, .param .align 64 .b8 map[128], .param .u64 other, .param .u64 gmap,
    .param .u64 out)
{{
    .reg .b32 %r<20>;
    .reg .b64 %rd<20>;
    .reg .pred %p<4>;
    .shared .align 128 .b8 smap[128];
    .shared .align 128 .b8 box[64];
    .shared .align 8 .b64 bar;
    ld.param.u64 %rd1, [other];
    ld.param.u64 %rd2, [gmap];
    ld.param.u64 %rd3, [out];
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra COPIED;
    mov.u32 %r3, 0;
COPY:
    mov.b64 %rd4, map;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd4, %rd4, %rd5;
    ld.param.u64 %rd6, [%rd4];
    mov.u32 %r4, smap;
    add.u32 %r4, %r4, %r3;
    st.shared.u64 [%r4], %rd6;
    add.u32 %r3, %r3, 8;
    setp.lt.u32 %p2, %r3, 128;
    @%p2 bra COPY;
    tensormap.replace.tile.global_address.shared::cta.b1024.b64 [smap], %rd1;
    mbarrier.init.shared.b64 [bar], 1;
COPIED:
    bar.sync 0;
    tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd2], [smap], 128;
    @%p1 bra DONE;
    fence.proxy.tensormap::generic.acquire.gpu [%rd2], 128;
    mov.u32 %r10, -4;
    cp.async.bulk.tensor.1d.shared::cta.global.tile.mbarrier::complete_tx::bytes [box], [%rd2, {{%r10}}], [bar];
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [bar], 64;
WAIT:
    mbarrier.try_wait.shared::cta.b64 %p3, [bar], %rd7;
    @!%p3 bra WAIT;
    mov.u32 %r3, 0;
OUT:
    mov.u32 %r5, box;
    add.u32 %r5, %r5, %r3;
    ld.shared.u32 %r6, [%r5];
    cvt.u64.u32 %rd8, %r3;
    add.s64 %rd9, %rd3, %rd8;
    st.global.u32 [%rd9], %r6;
    add.u32 %r3, %r3, 4;
    setp.lt.u32 %p2, %r3, 64;
    @%p2 bra OUT;
DONE:
    ret;
}}
"#
    );
    let other: Vec<u8> = (0..256).map(|i| (i * 5 % 253 + 2) as u8).collect();
    let args = [
        Arg::Buf(tensor_of(&d)),
        Arg::TensorMap(0, d.map()),
        Arg::Buf(other.clone()),
        Arg::Buf(vec![0; 128]),
        Arg::Buf(vec![0; 64]),
    ];
    let expected = d.load(&other, &[-4]);
    for (engine, r) in run_all(&ptx, "k", &args) {
        let bufs = r.unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert_eq!(bufs[3], expected, "{engine}");
    }
}
