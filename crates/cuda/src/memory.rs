//! Memory: device, pinned host, managed and registered host allocations, copies and sets in one, two and
//! three dimensions, CUDA arrays, texture and surface objects.
//!
//! A device pointer is a host address (`device::DeviceMemory`), so every kind of memory is one allocation
//! of the runtime, reachable by kernels on both engines and by the host alike; a side table records what
//! the program asked for (for `cudaPointerGetAttributes`, `cudaFreeHost`, `cudaHostUnregister`). Copies
//! check every device-side range against the allocations (an error, never a stray write) and then move the
//! bytes with `memmove`.

use std::collections::{BTreeMap, HashMap};

use device::texture::{Format, Kind, Resource, SurfaceDesc, TextureDesc};

use crate::{Cuda, Error, Inner, Result};

/// `cudaMemoryType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryType {
    Unregistered = 0,
    Host = 1,
    Device = 2,
    Managed = 3,
}

/// `cudaPointerGetAttributes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerAttributes {
    pub kind: MemoryType,
    /// The device (0), or -2 (`cudaInvalidDeviceId`) for unregistered memory.
    pub device: i32,
    /// 0 where the memory has no device address (unregistered host memory).
    pub device_pointer: u64,
    /// 0 where it has no host address (device memory).
    pub host_pointer: u64,
}

/// `cudaMemcpyKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    /// Inferred from the pointers (unified addressing).
    Default,
}

impl CopyKind {
    pub fn from_raw(kind: i32) -> Result<CopyKind> {
        Ok(match kind {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return Err(Error::INVALID_MEMCPY_DIRECTION),
        })
    }

    /// Whether the destination and the source must be device-accessible memory.
    fn device_sides(self) -> (bool, bool) {
        match self {
            CopyKind::HostToHost | CopyKind::Default => (false, false),
            CopyKind::HostToDevice => (true, false),
            CopyKind::DeviceToHost => (false, true),
            CopyKind::DeviceToDevice => (true, true),
        }
    }
}

/// A CUDA array: texels in device memory, rows packed (`pitch = width × element size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Array {
    pub ptr: u64,
    pub desc: ArrayDesc,
}

/// What `cudaMallocArray` / `cudaMalloc3DArray` describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayDesc {
    pub format: Format,
    pub width: u32,
    /// 0 for a 1-D array.
    pub height: u32,
    /// 0 unless 3-D (or the layer count of a layered array).
    pub depth: u32,
    /// `cudaArrayLayered`, `cudaArrayCubemap`, ...
    pub flags: u32,
}

impl ArrayDesc {
    pub fn row_bytes(&self) -> u64 {
        u64::from(self.width) * u64::from(self.format.bytes())
    }

    pub fn rows(&self) -> u64 {
        u64::from(self.height.max(1)) * u64::from(self.depth.max(1)) * if self.is_cubemap() { 6 } else { 1 }
    }

    fn is_cubemap(&self) -> bool {
        self.flags & 0x04 != 0
    }

    /// The texture resource over an array at `ptr`.
    pub fn resource(&self, ptr: u64) -> Resource {
        let layered = self.flags & 0x01 != 0;
        let kind = match (self.is_cubemap(), layered, self.height, self.depth) {
            (true, true, ..) => Kind::CubeLayered,
            (true, false, ..) => Kind::Cube,
            (false, true, 0, _) => Kind::Layered1D,
            (false, true, _, _) => Kind::Layered2D,
            (false, false, 0, _) => Kind::D1,
            (false, false, _, 0) => Kind::D2,
            _ => Kind::D3,
        };
        let (depth, layers) = match kind {
            Kind::D3 => (self.depth, 0),
            Kind::Layered1D | Kind::Layered2D | Kind::CubeLayered => (0, self.depth),
            _ => (0, 0),
        };
        let height = if kind == Kind::Layered1D { 0 } else { self.height };
        let mut r = Resource::new(kind, self.format, self.width, height, depth, layers);
        r.ptr = ptr;
        r
    }
}

/// What the program allocated, by base address.
#[derive(Default)]
pub(crate) struct Allocations {
    kinds: BTreeMap<u64, Alloc>,
    arrays: HashMap<u64, Array>,
    next_array: u64,
}

#[derive(Clone, Copy, Debug)]
struct Alloc {
    kind: MemoryType,
    size: u64,
    /// `cudaHostAlloc` / `cudaHostRegister` flags.
    flags: u32,
    /// Host memory the program owns (`cudaHostRegister`), not ours to free.
    registered: bool,
}

/// CUDA array handles live in a window no pointer uses (positive as a signed integer, as streams'; see
/// `stream.rs`).
const ARRAY_WINDOW: u64 = 0x7A00_0000_0000_0000;
/// `cudaMallocPitch`'s row alignment.
const PITCH_ALIGNMENT: u64 = 512;

impl Allocations {
    /// The allocation holding `ptr`, from the side table.
    fn find(&self, ptr: u64) -> Option<(u64, Alloc)> {
        let (&base, &a) = self.kinds.range(..=ptr).next_back()?;
        (ptr - base < a.size.max(1)).then_some((base, a))
    }
}

impl Cuda {
    fn allocate(&self, size: u64, kind: MemoryType, flags: u32, what: &str) -> Result<u64> {
        self.check_sticky()?;
        let mut inner = self.lock();
        let n = inner.memory.kinds.len();
        let rt = inner.runtime(&self.config);
        let ptr = rt.alloc_labeled(size, format!("{what} {n} ({size} bytes)")).map_err(|_| Error::MEMORY_ALLOCATION)?;
        inner.memory.kinds.insert(ptr, Alloc { kind, size, flags, registered: false });
        Ok(ptr)
    }

    /// `cudaMalloc`: `size` bytes of device memory (0 bytes give the null pointer).
    pub fn malloc(&self, size: u64) -> Result<u64> {
        // cudaMalloc may synchronize: a capture in global or thread-local mode forbids it.
        self.check_unsafe_call()?;
        self.device_malloc(size)
    }

    /// Device memory for lockstep's own uses of it (pools, graph allocations): [`Cuda::malloc`] without the
    /// capture rule, which is the program's call's.
    pub(crate) fn device_malloc(&self, size: u64) -> Result<u64> {
        if size == 0 {
            return self.check_sticky().map(|_| 0);
        }
        self.allocate(size, MemoryType::Device, 0, "cudaMalloc allocation")
    }

    /// `cudaMallocHost` / `cudaHostAlloc`: page-locked host memory, also device-accessible.
    pub fn malloc_host(&self, size: u64, flags: u32) -> Result<u64> {
        if flags & !0x0f != 0 {
            return Err(Error::INVALID_VALUE);
        }
        if size == 0 {
            return self.check_sticky().map(|_| 0);
        }
        self.allocate(size, MemoryType::Host, flags, "host allocation")
    }

    /// `cudaMallocManaged`: memory that host and device share.
    pub fn malloc_managed(&self, size: u64, flags: u32) -> Result<u64> {
        if !matches!(flags, 1 | 2) {
            return Err(Error::INVALID_VALUE);
        }
        if size == 0 {
            return Err(Error::INVALID_VALUE);
        }
        self.allocate(size, MemoryType::Managed, flags, "managed allocation")
    }

    /// `cudaMallocPitch`: `height` rows of at least `width` bytes; returns the pointer and the pitch.
    pub fn malloc_pitch(&self, width: u64, height: u64) -> Result<(u64, u64)> {
        let pitch = width.max(1).div_ceil(PITCH_ALIGNMENT) * PITCH_ALIGNMENT;
        let size = pitch.checked_mul(height).ok_or(Error::MEMORY_ALLOCATION)?;
        if size == 0 {
            return self.check_sticky().map(|_| (0, pitch));
        }
        Ok((self.allocate(size, MemoryType::Device, 0, "cudaMallocPitch allocation")?, pitch))
    }

    /// `cudaFree` (also of managed memory): the null pointer is fine; anything else that no allocation
    /// starts at is `cudaErrorInvalidValue`.
    pub fn free(&self, ptr: u64) -> Result<()> {
        self.synchronize_faults()?;
        if ptr == 0 {
            return Ok(());
        }
        if let Some(r) = self.free_graph_alloc(ptr) {
            return r;
        }
        self.free_now(ptr)
    }

    /// Gives device memory back (a graph allocation's too, once its graph is done with it).
    pub(crate) fn free_now(&self, ptr: u64) -> Result<()> {
        let mut inner = self.lock();
        inner.flush_printf();
        match inner.memory.kinds.get(&ptr) {
            Some(a) if !a.registered => {}
            _ => return Err(Error::INVALID_VALUE),
        }
        inner.memory.kinds.remove(&ptr);
        inner.pools.freed(ptr);
        inner.runtime(&self.config).free(ptr).map_err(|_| Error::INVALID_VALUE)
    }

    /// `cudaFreeHost`.
    pub fn free_host(&self, ptr: u64) -> Result<()> {
        self.synchronize_faults()?;
        if ptr == 0 {
            return Ok(());
        }
        let mut inner = self.lock();
        match inner.memory.kinds.get(&ptr) {
            Some(a) if a.kind == MemoryType::Host && !a.registered => {}
            _ => return Err(Error::INVALID_VALUE),
        }
        inner.memory.kinds.remove(&ptr);
        inner.pools.freed(ptr);
        inner.runtime(&self.config).free(ptr).map_err(|_| Error::INVALID_VALUE)
    }

    /// `cudaHostRegister`: the program's own memory becomes device-accessible.
    ///
    /// # Safety
    /// `[ptr, ptr + size)` must stay valid until [`Cuda::host_unregister`].
    pub unsafe fn host_register(&self, ptr: u64, size: u64, flags: u32) -> Result<()> {
        self.check_sticky()?;
        if ptr == 0 || size == 0 || flags & !0x0f != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let mut inner = self.lock();
        if let Some((base, a)) = inner.memory.find(ptr) {
            return Err(if a.registered && base == ptr {
                Error::HOST_MEMORY_ALREADY_REGISTERED
            } else {
                Error::INVALID_VALUE
            });
        }
        let n = inner.memory.kinds.len();
        // SAFETY: the caller's promise.
        unsafe { inner.runtime(&self.config).register_host(ptr, size, format!("registered host memory {n}")) }
            .map_err(|_| Error::HOST_MEMORY_ALREADY_REGISTERED)?;
        inner.memory.kinds.insert(ptr, Alloc { kind: MemoryType::Host, size, flags, registered: true });
        Ok(())
    }

    /// `cudaHostUnregister`.
    pub fn host_unregister(&self, ptr: u64) -> Result<()> {
        self.check_sticky()?;
        let mut inner = self.lock();
        match inner.memory.kinds.get(&ptr) {
            Some(a) if a.registered => {}
            _ => return Err(Error::HOST_MEMORY_NOT_REGISTERED),
        }
        inner.memory.kinds.remove(&ptr);
        inner.runtime(&self.config).unregister_host(ptr).map_err(|_| Error::HOST_MEMORY_NOT_REGISTERED)
    }

    /// `cudaHostGetDevicePointer`: the device address of pinned or registered host memory (the same).
    pub fn host_device_pointer(&self, ptr: u64) -> Result<u64> {
        let inner = self.lock();
        match inner.memory.find(ptr) {
            Some((_, a)) if a.kind == MemoryType::Host => Ok(ptr),
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// `cudaHostGetFlags`.
    pub fn host_flags(&self, ptr: u64) -> Result<u32> {
        let inner = self.lock();
        match inner.memory.find(ptr) {
            Some((_, a)) if a.kind == MemoryType::Host => Ok(a.flags),
            _ => Err(Error::INVALID_VALUE),
        }
    }

    /// `cudaPointerGetAttributes`.
    pub fn pointer_attributes(&self, ptr: u64) -> Result<PointerAttributes> {
        self.check_sticky()?;
        let mut inner = self.lock();
        let kind = match inner.memory.find(ptr) {
            Some((_, a)) => a.kind,
            // Module variables and array storage are device memory the side table does not list.
            None if inner.runtime.as_ref().is_some_and(|rt| rt.locate_range(ptr, 1).is_ok()) => MemoryType::Device,
            None => MemoryType::Unregistered,
        };
        let _ = &mut inner;
        Ok(match kind {
            MemoryType::Unregistered => PointerAttributes { kind, device: -2, device_pointer: 0, host_pointer: ptr },
            MemoryType::Device => PointerAttributes { kind, device: 0, device_pointer: ptr, host_pointer: 0 },
            MemoryType::Host | MemoryType::Managed => {
                PointerAttributes { kind, device: 0, device_pointer: ptr, host_pointer: ptr }
            }
        })
    }

    /// `cudaMemGetInfo`: free and total bytes (the host's memory, less what the program allocated).
    pub fn mem_info(&self) -> Result<(u64, u64)> {
        self.check_sticky()?;
        let total = self.properties.total_global_mem;
        let inner = self.lock();
        let used = inner.runtime.as_ref().map_or(0, |rt| rt.memory().allocated());
        Ok((total.saturating_sub(used), total))
    }

    /// `cudaMemcpy`: `n` bytes from `src` to `dst`. A side that `kind` says is device memory must lie
    /// inside one allocation. Like CUDA's blocking copies, it prints what kernels printed.
    pub fn memcpy(&self, dst: u64, src: u64, n: u64, kind: CopyKind) -> Result<()> {
        self.check_legacy_capture()?;
        self.copy(dst, src, n, kind, true)
    }

    /// `cudaMemcpyAsync` on `stream` (done when it returns, after the stream's host functions).
    pub fn memcpy_async(&self, dst: u64, src: u64, n: u64, kind: CopyKind, stream: u64) -> Result<()> {
        if n != 0 && (dst == 0 || src == 0) {
            return Err(Error::INVALID_VALUE);
        }
        if self.capture_copy(stream, crate::graph::CopyNode::linear(dst, src, n, kind))? {
            return Ok(());
        }
        self.enter_stream(stream)?;
        self.copy(dst, src, n, kind, false)
    }

    fn copy(&self, dst: u64, src: u64, n: u64, kind: CopyKind, blocking: bool) -> Result<()> {
        if blocking {
            self.synchronize_faults()?;
        } else {
            self.check_sticky()?;
        }
        if n == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(Error::INVALID_VALUE);
        }
        let mut inner = self.lock();
        if blocking {
            inner.flush_printf();
        }
        inner.check_copy(dst, src, n, kind, &self.config)?;
        // SAFETY: device-side ranges lie inside allocations (checked); host-side ranges are the program's,
        // as with CUDA; `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n as usize) };
        Ok(())
    }

    /// `cudaMemcpy2D`: `height` rows of `width` bytes, rows `spitch` and `dpitch` bytes apart.
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d(
        &self,
        dst: u64,
        dpitch: u64,
        src: u64,
        spitch: u64,
        width: u64,
        height: u64,
        kind: CopyKind,
    ) -> Result<()> {
        self.synchronize_faults()?;
        if width == 0 || height == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(Error::INVALID_VALUE);
        }
        if width > dpitch || width > spitch {
            return Err(Error::INVALID_PITCH_VALUE);
        }
        let mut inner = self.lock();
        inner.flush_printf();
        let span = |pitch: u64| pitch.checked_mul(height - 1).and_then(|s| s.checked_add(width));
        let (dspan, sspan) = (span(dpitch).ok_or(Error::INVALID_VALUE)?, span(spitch).ok_or(Error::INVALID_VALUE)?);
        let (dev_dst, dev_src) = inner.device_sides(dst, src, kind);
        if dev_dst {
            inner.check_device(dst, dspan, &self.config)?;
        }
        if dev_src {
            inner.check_device(src, sspan, &self.config)?;
        }
        for row in 0..height {
            // SAFETY: each row lies inside the checked spans (device sides) or the program's memory.
            unsafe {
                std::ptr::copy((src + row * spitch) as *const u8, (dst + row * dpitch) as *mut u8, width as usize)
            };
        }
        Ok(())
    }

    /// `cudaMemset`: `n` bytes at `ptr` (device-accessible memory) set to `value`'s low byte.
    pub fn memset(&self, ptr: u64, value: i32, n: u64) -> Result<()> {
        self.check_legacy_capture()?;
        self.memset_2d(ptr, n, value, n, 1)
    }

    /// `cudaMemsetAsync` and `cudaMemset2DAsync` on `stream` (recorded as a set node while it captures).
    pub fn memset_async(&self, ptr: u64, pitch: u64, value: i32, width: u64, height: u64, stream: u64) -> Result<()> {
        let node = crate::graph::SetNode { ptr, pitch, value: value as u8 as u32, element: 1, width, height };
        if self.capture(stream, || Ok(crate::graph::NodeOp::Memset(node)))? {
            return Ok(());
        }
        self.enter_stream(stream)?;
        self.memset_2d(ptr, pitch, value, width, height)
    }

    /// `cudaMemcpy2DAsync` on `stream` (recorded as a copy node while it captures).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d_async(
        &self,
        dst: u64,
        dpitch: u64,
        src: u64,
        spitch: u64,
        width: u64,
        height: u64,
        kind: CopyKind,
        stream: u64,
    ) -> Result<()> {
        let node = crate::graph::CopyNode {
            dst,
            dpitch,
            dslice: dpitch * height,
            src,
            spitch,
            sslice: spitch * height,
            width,
            height,
            depth: 1,
            kind,
        };
        if self.capture(stream, || Ok(crate::graph::NodeOp::Memcpy(node)))? {
            return Ok(());
        }
        self.enter_stream(stream)?;
        self.memcpy_2d(dst, dpitch, src, spitch, width, height, kind)
    }

    /// `cudaMemset2D`: `height` rows of `width` bytes, `pitch` apart.
    pub fn memset_2d(&self, ptr: u64, pitch: u64, value: i32, width: u64, height: u64) -> Result<()> {
        self.memset_elements(ptr, pitch, value as u32, 1, width, height)
    }

    /// `cuMemsetD8/D16/D32` and their 2D forms: `height` rows of `width` elements of `element` bytes (1, 2
    /// or 4), each set to the low bytes of `value`, rows `pitch` bytes apart. The pointer (and the pitch of
    /// a 2D set) must be aligned to the element.
    pub fn memset_elements(
        &self,
        ptr: u64,
        pitch: u64,
        value: u32,
        element: u64,
        width: u64,
        height: u64,
    ) -> Result<()> {
        self.synchronize_faults()?;
        if width == 0 || height == 0 {
            return Ok(());
        }
        let row = width.checked_mul(element).ok_or(Error::INVALID_VALUE)?;
        if row > pitch && height > 1 {
            return Err(Error::INVALID_PITCH_VALUE);
        }
        if !ptr.is_multiple_of(element) || (height > 1 && !pitch.is_multiple_of(element)) {
            return Err(Error::INVALID_VALUE);
        }
        let span = pitch.checked_mul(height - 1).and_then(|s| s.checked_add(row)).ok_or(Error::INVALID_VALUE)?;
        let mut inner = self.lock();
        inner.check_device(ptr, span, &self.config)?;
        let pattern = value.to_le_bytes();
        for r in 0..height {
            let start = (ptr + r * pitch) as *mut u8;
            if element == 1 {
                // SAFETY: inside the checked span.
                unsafe { std::ptr::write_bytes(start, value as u8, row as usize) };
                continue;
            }
            for i in 0..width {
                // SAFETY: inside the checked span; element-aligned (checked).
                unsafe {
                    std::ptr::copy_nonoverlapping(pattern.as_ptr(), start.add((i * element) as usize), element as usize)
                };
            }
        }
        Ok(())
    }

    /// `cuMemGetAddressRange`: the base and size of the allocation (or module variable) holding `ptr`.
    pub fn address_range(&self, ptr: u64) -> Result<(u64, u64)> {
        let mut inner = self.lock();
        let rt = inner.runtime(&self.config);
        let (a, _) = rt.memory().find(ptr, 1).map_err(|_| Error::INVALID_VALUE)?;
        Ok((a.base(), a.size))
    }

    /// `cudaMemcpyToSymbol`: `n` bytes from `src` to `offset` bytes into the variable of host shadow
    /// `symbol`.
    /// With a stream, `cudaMemcpyToSymbolAsync` (recorded as a copy node while the stream captures).
    pub fn memcpy_to_symbol(
        &self,
        symbol: u64,
        src: u64,
        n: u64,
        offset: u64,
        kind: CopyKind,
        stream: Option<u64>,
    ) -> Result<()> {
        if !matches!(kind, CopyKind::HostToDevice | CopyKind::DeviceToDevice | CopyKind::Default) {
            return Err(Error::INVALID_MEMCPY_DIRECTION);
        }
        let (ptr, size) = self.symbol(symbol)?;
        if offset.checked_add(n).is_none_or(|end| end > size) {
            return Err(Error::INVALID_VALUE);
        }
        match stream {
            None => self.memcpy(ptr + offset, src, n, kind),
            Some(s) => self.memcpy_async(ptr + offset, src, n, kind, s),
        }
    }

    /// The copy of a graph node to (`to_symbol`) or from the variable of host shadow `symbol`
    /// (`cudaGraphAddMemcpyNodeToSymbol`, `...FromSymbol`): the symbol's address now, the direction and
    /// range checked as the stream API checks them.
    pub fn symbol_copy_node(
        &self,
        symbol: u64,
        other: u64,
        n: u64,
        offset: u64,
        kind: CopyKind,
        to_symbol: bool,
    ) -> Result<crate::graph::CopyNode> {
        let allowed = if to_symbol { CopyKind::HostToDevice } else { CopyKind::DeviceToHost };
        if !matches!(kind, CopyKind::DeviceToDevice | CopyKind::Default) && kind != allowed {
            return Err(Error::INVALID_MEMCPY_DIRECTION);
        }
        let (ptr, size) = self.symbol(symbol)?;
        if offset.checked_add(n).is_none_or(|end| end > size) {
            return Err(Error::INVALID_VALUE);
        }
        let (dst, src) = if to_symbol { (ptr + offset, other) } else { (other, ptr + offset) };
        Ok(crate::graph::CopyNode::linear(dst, src, n, kind))
    }

    /// `cudaMemcpyFromSymbol`.
    /// With a stream, `cudaMemcpyFromSymbolAsync` (recorded as a copy node while the stream captures).
    pub fn memcpy_from_symbol(
        &self,
        dst: u64,
        symbol: u64,
        n: u64,
        offset: u64,
        kind: CopyKind,
        stream: Option<u64>,
    ) -> Result<()> {
        if !matches!(kind, CopyKind::DeviceToHost | CopyKind::DeviceToDevice | CopyKind::Default) {
            return Err(Error::INVALID_MEMCPY_DIRECTION);
        }
        let (ptr, size) = self.symbol(symbol)?;
        if offset.checked_add(n).is_none_or(|end| end > size) {
            return Err(Error::INVALID_VALUE);
        }
        match stream {
            None => self.memcpy(dst, ptr + offset, n, kind),
            Some(s) => self.memcpy_async(dst, ptr + offset, n, kind, s),
        }
    }

    // ---- CUDA arrays ----------------------------------------------------------------------------------

    /// `cudaMallocArray` / `cudaMalloc3DArray`: returns the array's handle.
    pub fn malloc_array(&self, desc: ArrayDesc) -> Result<u64> {
        if desc.width == 0 || !matches!(desc.format.channels, 1 | 2 | 4) {
            return Err(Error::INVALID_VALUE);
        }
        let size = desc.row_bytes().checked_mul(desc.rows()).ok_or(Error::MEMORY_ALLOCATION)?;
        self.check_sticky()?;
        let mut inner = self.lock();
        let ptr = inner
            .runtime(&self.config)
            .alloc_labeled(size, format!("CUDA array {}x{}x{}", desc.width, desc.height, desc.depth))
            .map_err(|_| Error::MEMORY_ALLOCATION)?;
        let handle = ARRAY_WINDOW + inner.memory.next_array * 16;
        inner.memory.next_array += 1;
        inner.memory.arrays.insert(handle, Array { ptr, desc });
        Ok(handle)
    }

    /// `cudaFreeArray`.
    pub fn free_array(&self, handle: u64) -> Result<()> {
        self.synchronize_faults()?;
        if handle == 0 {
            return Ok(());
        }
        let mut inner = self.lock();
        let array = inner.memory.arrays.remove(&handle).ok_or(Error::INVALID_VALUE)?;
        inner.runtime(&self.config).free(array.ptr).map_err(|_| Error::INVALID_VALUE)
    }

    /// The array behind a handle.
    pub fn array(&self, handle: u64) -> Result<Array> {
        self.lock().memory.arrays.get(&handle).copied().ok_or(Error::INVALID_RESOURCE_HANDLE)
    }

    /// `cudaMemcpy2DToArray` (and `cudaMemcpyToArray`, one row): `height` rows of `width` bytes from `src`
    /// (rows `spitch` apart) to the array at byte `x_bytes`, row `y`.
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d_to_array(
        &self,
        array: u64,
        x_bytes: u64,
        y: u64,
        src: u64,
        spitch: u64,
        width: u64,
        height: u64,
        kind: CopyKind,
    ) -> Result<()> {
        let a = self.array(array)?;
        let dst = a.array_region(x_bytes, y, width, height)?;
        let kind = match kind {
            CopyKind::HostToHost | CopyKind::DeviceToHost => return Err(Error::INVALID_MEMCPY_DIRECTION),
            k => k,
        };
        self.memcpy_2d(dst, a.desc.row_bytes(), src, spitch, width, height, kind)
    }

    /// `cudaMemcpy2DFromArray` (and `cudaMemcpyFromArray`).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d_from_array(
        &self,
        dst: u64,
        dpitch: u64,
        array: u64,
        x_bytes: u64,
        y: u64,
        width: u64,
        height: u64,
        kind: CopyKind,
    ) -> Result<()> {
        let a = self.array(array)?;
        let src = a.array_region(x_bytes, y, width, height)?;
        let kind = match kind {
            CopyKind::HostToHost | CopyKind::HostToDevice => return Err(Error::INVALID_MEMCPY_DIRECTION),
            k => k,
        };
        self.memcpy_2d(dst, dpitch, src, a.desc.row_bytes(), width, height, kind)
    }

    /// `cudaMemcpy2DArrayToArray`: `height` rows of `width` bytes between two arrays (device memory both:
    /// `kind` must be device to device or default).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_2d_array_to_array(
        &self,
        dst: u64,
        dst_x_bytes: u64,
        dst_y: u64,
        src: u64,
        src_x_bytes: u64,
        src_y: u64,
        width: u64,
        height: u64,
        kind: CopyKind,
    ) -> Result<()> {
        let (d, s) = (self.array(dst)?, self.array(src)?);
        let to = d.array_region(dst_x_bytes, dst_y, width, height)?;
        let from = s.array_region(src_x_bytes, src_y, width, height)?;
        if !matches!(kind, CopyKind::DeviceToDevice | CopyKind::Default) {
            return Err(Error::INVALID_MEMCPY_DIRECTION);
        }
        self.memcpy_2d(to, d.desc.row_bytes(), from, s.desc.row_bytes(), width, height, CopyKind::DeviceToDevice)
    }

    /// `cudaMemcpyArrayToArray`: `count` bytes from byte `src_x_bytes` of row `src_y` of one array to
    /// byte `dst_x_bytes` of row `dst_y` of another, through the rows (the arrays as linear memory).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_array_to_array(
        &self,
        dst: u64,
        dst_x_bytes: u64,
        dst_y: u64,
        src: u64,
        src_x_bytes: u64,
        src_y: u64,
        count: u64,
        kind: CopyKind,
    ) -> Result<()> {
        let to = self.array(dst)?.linear_region(dst_x_bytes, dst_y, count)?;
        let from = self.array(src)?.linear_region(src_x_bytes, src_y, count)?;
        if !matches!(kind, CopyKind::DeviceToDevice | CopyKind::Default) {
            return Err(Error::INVALID_MEMCPY_DIRECTION);
        }
        self.memcpy(to, from, count, CopyKind::DeviceToDevice)
    }

    // ---- texture and surface objects -------------------------------------------------------------------

    /// `cudaCreateTextureObject` over described texels (the C shell resolves arrays and pitched memory).
    pub fn create_texture(&self, desc: TextureDesc) -> Result<u64> {
        self.check_sticky()?;
        let mut inner = self.lock();
        inner.runtime(&self.config).create_texture(desc).map_err(|e| {
            self.warn(&format!("texture {e}"), &format!("error: cudaCreateTextureObject: {e}"));
            Error::INVALID_VALUE
        })
    }

    /// `cudaCreateSurfaceObject`.
    pub fn create_surface(&self, desc: SurfaceDesc) -> Result<u64> {
        self.check_sticky()?;
        let mut inner = self.lock();
        inner.runtime(&self.config).create_surface(desc).map_err(|e| {
            self.warn(&format!("surface {e}"), &format!("error: cudaCreateSurfaceObject: {e}"));
            Error::INVALID_VALUE
        })
    }

    /// `cudaDestroyTextureObject` / `cudaDestroySurfaceObject`.
    pub fn destroy_object(&self, handle: u64) -> Result<()> {
        if handle == 0 {
            return Ok(());
        }
        let mut inner = self.lock();
        inner.runtime(&self.config).destroy_object(handle).map_err(|_| Error::INVALID_VALUE)
    }

    /// The description of a texture or surface object.
    pub fn object(&self, handle: u64) -> Result<device::texture::Object> {
        let inner = self.lock();
        let rt = inner.runtime.as_ref().ok_or(Error::INVALID_VALUE)?;
        rt.memory().textures().get(handle).copied().ok_or(Error::INVALID_VALUE)
    }
}

impl Array {
    /// The address of `height` rows of `width` bytes from byte `x_bytes` of row `y`, checked against the
    /// array's extent.
    /// The address of `count` bytes from byte `x_bytes` of row `y`, running on through the following rows
    /// (the deprecated one-dimensional array copies), or `cudaErrorInvalidValue` past the array's end.
    pub fn linear_region(&self, x_bytes: u64, y: u64, count: u64) -> Result<u64> {
        let start = y.checked_mul(self.desc.row_bytes()).and_then(|o| o.checked_add(x_bytes));
        match start {
            Some(s) if s.checked_add(count).is_some_and(|e| e <= self.desc.row_bytes() * self.desc.rows()) => {
                Ok(self.ptr + s)
            }
            _ => Err(Error::INVALID_VALUE),
        }
    }

    fn array_region(&self, x_bytes: u64, y: u64, width: u64, height: u64) -> Result<u64> {
        let row = self.desc.row_bytes();
        if x_bytes.checked_add(width).is_none_or(|e| e > row)
            || y.checked_add(height).is_none_or(|e| e > self.desc.rows())
        {
            return Err(Error::INVALID_VALUE);
        }
        Ok(self.ptr + y * row + x_bytes)
    }
}

impl Inner {
    /// Which sides of a copy of `kind` are device memory (for `Default`, those that lie in an allocation).
    fn device_sides(&self, dst: u64, src: u64, kind: CopyKind) -> (bool, bool) {
        match kind {
            CopyKind::Default => {
                let known = |p: u64| self.runtime.as_ref().is_some_and(|rt| rt.locate_range(p, 1).is_ok());
                (known(dst), known(src))
            }
            k => k.device_sides(),
        }
    }

    /// `[ptr, ptr + n)` must lie inside one allocation.
    fn check_device(&mut self, ptr: u64, n: u64, config: &crate::Config) -> Result<()> {
        self.runtime(config).locate_range(ptr, n).map(|_| ()).map_err(|_| Error::INVALID_VALUE)
    }

    fn check_copy(&mut self, dst: u64, src: u64, n: u64, kind: CopyKind, config: &crate::Config) -> Result<()> {
        let (dev_dst, dev_src) = self.device_sides(dst, src, kind);
        if dev_dst {
            self.check_device(dst, n, config)?;
        }
        if dev_src {
            self.check_device(src, n, config)?;
        }
        Ok(())
    }
}
