//! `istypep` (PTX ISA, "Texture Instructions: istypep") on 64-bit handles, on the emulator and the JIT:
//! `istypep.texref` is true exactly for a texture object of the launch, `istypep.surfref` for a surface
//! object; a destroyed object, any other number, or an object of the other kind gives false.
//! `istypep.samplerref` is refused: lockstep has no sampler objects.

mod common;

use common::{engines, refusal};
use device::texture::{ChannelType, Format, Kind, Resource, Sampler, SurfaceDesc, TextureDesc};
use device::{DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

/// Thread t tests handle `h[t % 5]` and writes (texref, surfref) as two words.
const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 h, .param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [h];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 5;
    mul.wide.u32 %rd3, %r2, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    istypep.texref %p1, %rd5;
    istypep.surfref %p2, %rd5;
    selp.u32 %r3, 1, 0, %p1;
    selp.u32 %r4, 1, 0, %p2;
    mul.wide.u32 %rd6, %r1, 8;
    add.s64 %rd7, %rd2, %rd6;
    st.global.v2.u32 [%rd7], {%r3, %r4};
    ret;
}
"#;

#[test]
fn istypep_tells_textures_from_surfaces_and_from_other_numbers() {
    let module = ir::compile(KERNEL).unwrap();
    for (name, mut backend) in engines() {
        let mut memory = DeviceMemory::new();
        let loaded = LoadedModule::load(module.clone(), &mut memory).unwrap();
        let k = loaded.module.function("k").unwrap();
        let res = |ptr| Resource { ptr, ..Resource::new(Kind::D1, Format::new(1, ChannelType::U32), 16, 0, 0, 0) };
        let buf = memory.alloc_bytes(&[0; 64], "texels");
        let tex = memory.create_texture(TextureDesc { resource: res(buf), sampler: Sampler::default() }).unwrap();
        let surf = memory.create_surface(SurfaceDesc { resource: res(buf) }).unwrap();
        let gone = memory.create_surface(SurfaceDesc { resource: res(buf) }).unwrap();
        assert!(memory.destroy_object(gone));
        // (handle, is a texture, is a surface)
        let cases = [(tex, 1, 0), (surf, 0, 1), (gone, 0, 0), (0, 0, 0), (buf, 0, 0)];
        let handles: Vec<u8> = cases.iter().flat_map(|c| c.0.to_le_bytes()).collect();
        let h = memory.alloc_bytes(&handles, "handles");
        let threads = 32u32;
        let out = memory.alloc_bytes(&vec![0xff; 8 * threads as usize], "out");
        let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
        params.set(0, &h.to_le_bytes()).unwrap();
        params.set(1, &out.to_le_bytes()).unwrap();
        let config = LaunchConfig { grid: Dim3::new(1, 1, 1), block: Dim3::new(threads, 1, 1), dynamic_shared: 0 };
        let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
        backend.launch(&launch, &mut memory, &mut std::io::sink()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = common::words(memory.bytes(out).unwrap());
        let expected: Vec<u32> = (0..threads as usize).flat_map(|t| [cases[t % 5].1, cases[t % 5].2]).collect();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn istypep_samplerref_is_refused() {
    let e = refusal("sm_80", "istypep.samplerref %p1, %rd1;");
    assert!(e.contains("PTX line 11") && e.contains("no sampler objects"), "{e}");
}
