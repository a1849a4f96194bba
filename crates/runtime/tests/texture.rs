//! Texture and surface objects through the runtime: creation over runtime allocations, the handle a kernel
//! receives as a `.u64` argument, validation errors, destruction.

use std::io::Write;
use std::sync::{Arc, Mutex};

use device::texture::{ChannelType, FilterMode, Format, Kind, Object, Resource, Sampler};
use device::{Backend, DeviceMemory, ExecError, Launch, LaunchReport, LoadedModule, SurfaceDesc, TextureDesc};
use ir::FuncId;
use runtime::{Arg, Dim3, LaunchConfig, LaunchOptions, MemoryError, Runtime};

/// Records, for every `.u64` parameter, the object its value names in device memory at launch time.
struct Probe(Arc<Mutex<Vec<Option<Object>>>>);

impl Backend for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }

    fn check_supported(&self, _: &LoadedModule, _: FuncId) -> Result<(), ExecError> {
        Ok(())
    }

    fn launch(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut DeviceMemory,
        _: &mut dyn Write,
    ) -> Result<LaunchReport, ExecError> {
        let bytes = &launch.params.bytes;
        let seen = bytes
            .chunks_exact(8)
            .map(|c| memory.textures().get(u64::from_le_bytes(c.try_into().unwrap())).copied())
            .collect();
        *self.0.lock().unwrap() = seen;
        Ok(LaunchReport::default())
    }
}

const PTX: &str = ".version 7.8\n.target sm_80\n.address_size 64\n\
    .visible .entry k(.param .u64 t, .param .u64 s)\n{\n    ret;\n}\n";

#[test]
fn objects_are_created_passed_and_destroyed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::new(Box::new(Probe(seen.clone())));
    let module = rt.load_ptx(PTX, "k.ptx").unwrap();
    let kernel = rt.kernel(module, Some("k")).unwrap();
    let resource = Resource::new(Kind::D2, Format::new(4, ChannelType::F32), 8, 4, 0, 0);
    let ptr = rt.alloc(resource.size()).unwrap();
    let sampler = Sampler { filter: FilterMode::Linear, ..Sampler::default() };
    let tex = TextureDesc { resource: Resource { ptr, ..resource }, sampler };
    let t = rt.create_texture(tex).unwrap();
    let surf = SurfaceDesc { resource: Resource { ptr, ..resource } };
    let s = rt.create_surface(surf).unwrap();
    assert_ne!(t, s);
    let config = LaunchConfig { grid: Dim3::new(1, 1, 1), block: Dim3::new(1, 1, 1), dynamic_shared: 0 };
    rt.launch(module, kernel, config, &[Arg::U64(t), Arg::U64(s)], LaunchOptions::default()).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![Some(Object::Texture(tex)), Some(Object::Surface(surf))]);

    // texels that do not fit the allocation, and an invalid description
    let e = rt.create_texture(TextureDesc { resource: Resource { ptr, height: 5, ..resource }, sampler }).unwrap_err();
    assert!(matches!(&e, MemoryError::Object { detail } if detail.contains("not inside one allocation")), "{e}");
    let ints = Resource { ptr, format: Format::new(4, ChannelType::S32), ..resource };
    let e = rt.create_texture(TextureDesc { resource: ints, sampler }).unwrap_err();
    assert!(e.to_string().contains("linear filtering"), "{e}");

    // destroyed handles name nothing
    rt.destroy_object(t).unwrap();
    assert!(rt.destroy_object(t).unwrap_err().to_string().contains("destroyed"));
    rt.launch(module, kernel, config, &[Arg::U64(t), Arg::U64(s)], LaunchOptions::default()).unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![None, Some(Object::Surface(surf))]);
}
