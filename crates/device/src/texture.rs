//! Texture and surface objects: what `cudaCreateTextureObject` / `cudaCreateSurfaceObject` make on the host.
//!
//! A kernel sees a texture or surface only as an opaque 64-bit handle (a `.u64` kernel parameter used by
//! `tex`, `tld4`, `txq`, `suld`, `sust`, `suq`). [`Textures`] maps each handle to its description: a
//! [`Resource`] (a device buffer holding the texels, their [`Format`] and the extent) and, for textures, a
//! [`Sampler`] (addressing, filtering, normalized coordinates, read mode). Handles live in an address
//! window no device pointer uses (`HANDLE_WINDOW + index`); they are never reused, so a destroyed or made-up
//! handle is recognised as invalid.
//!
//! Texel layout in the buffer: rows of `pitch` bytes (`width × element size` when the pitch is 0), `height`
//! rows per slice (one for 1-D kinds), slices one after another — the `depth` slices of a 3-D resource, the
//! `layers` of a layered one, the six faces (`+x −x +y −y +z −z`) of each cubemap. So element `(x, y, s)`
//! is at `ptr + (s · rows + y) · pitch + x · element size`, channel `c` of it `c · channel size` bytes further.

use crate::memory::{DeviceMemory, DevicePtr};

/// Handles are `HANDLE_WINDOW + index`; no host pointer (and so no device pointer) lies there.
pub const HANDLE_WINDOW: u64 = 0xFB00_0000_0000_0000;

/// The type of each channel of an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelType {
    U8,
    U16,
    U32,
    S8,
    S16,
    S32,
    F16,
    F32,
}

impl ChannelType {
    pub fn bytes(self) -> u32 {
        match self {
            ChannelType::U8 | ChannelType::S8 => 1,
            ChannelType::U16 | ChannelType::S16 | ChannelType::F16 => 2,
            ChannelType::U32 | ChannelType::S32 | ChannelType::F32 => 4,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ChannelType::F16 | ChannelType::F32)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, ChannelType::S8 | ChannelType::S16 | ChannelType::S32)
    }

    /// Parses `u8 u16 u32 s8 s16 s32 f16 f32`.
    pub fn from_name(name: &str) -> Option<ChannelType> {
        Some(match name {
            "u8" => ChannelType::U8,
            "u16" => ChannelType::U16,
            "u32" => ChannelType::U32,
            "s8" => ChannelType::S8,
            "s16" => ChannelType::S16,
            "s32" => ChannelType::S32,
            "f16" => ChannelType::F16,
            "f32" => ChannelType::F32,
            _ => return None,
        })
    }
}

/// The format of one element: 1, 2 or 4 channels of one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    pub channels: u32,
    pub ty: ChannelType,
}

impl Format {
    pub fn new(channels: u32, ty: ChannelType) -> Format {
        Format { channels, ty }
    }

    /// Bytes per element.
    pub fn bytes(&self) -> u32 {
        self.channels * self.ty.bytes()
    }
}

/// The shape of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    D1,
    D2,
    D3,
    Layered1D,
    Layered2D,
    /// Six square faces; `layers` cubemaps (1 for a plain cubemap).
    Cube,
    CubeLayered,
}

/// Where the texels are and how they are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Resource {
    /// The device buffer (filled in by the runtime when it allocates one).
    pub ptr: DevicePtr,
    pub format: Format,
    pub kind: Kind,
    /// Elements per row.
    pub width: u32,
    /// Rows per slice (2-D, 3-D, layered 2-D and cube kinds; 0 for 1-D kinds, as in a `cudaExtent`).
    pub height: u32,
    /// Slices of a 3-D resource (0 otherwise).
    pub depth: u32,
    /// Layers of a layered resource, cubemaps of a layered cubemap (0 otherwise).
    pub layers: u32,
    /// Bytes from one row to the next; 0 means `width × element size`.
    pub pitch: u64,
}

impl Resource {
    /// A resource of `kind` with extent `(width, height, depth)` and `layers` (unused dimensions 0).
    pub fn new(kind: Kind, format: Format, width: u32, height: u32, depth: u32, layers: u32) -> Resource {
        Resource { ptr: 0, format, kind, width, height, depth, layers, pitch: 0 }
    }

    pub fn row_pitch(&self) -> u64 {
        if self.pitch == 0 {
            u64::from(self.width) * u64::from(self.format.bytes())
        } else {
            self.pitch
        }
    }

    /// Rows per slice.
    pub fn rows(&self) -> u32 {
        match self.kind {
            Kind::D1 | Kind::Layered1D => 1,
            _ => self.height.max(1),
        }
    }

    /// Slices: 3-D depth, layers, or six faces per cubemap.
    pub fn slices(&self) -> u32 {
        match self.kind {
            Kind::D1 | Kind::D2 => 1,
            Kind::D3 => self.depth.max(1),
            Kind::Layered1D | Kind::Layered2D => self.layers.max(1),
            Kind::Cube => 6,
            Kind::CubeLayered => 6 * self.layers.max(1),
        }
    }

    /// Bytes the texels take in the buffer.
    pub fn size(&self) -> u64 {
        self.row_pitch() * u64::from(self.rows()) * u64::from(self.slices())
    }

    /// The device address of element `(x, y)` of slice `slice` (coordinates in range).
    pub fn element_address(&self, x: u32, y: u32, slice: u32) -> u64 {
        self.ptr
            + (u64::from(slice) * u64::from(self.rows()) + u64::from(y)) * self.row_pitch()
            + u64::from(x) * u64::from(self.format.bytes())
    }

    fn validate(&self) -> Result<(), String> {
        if !matches!(self.format.channels, 1 | 2 | 4) {
            return Err(format!("elements have 1, 2 or 4 channels, not {}", self.format.channels));
        }
        if self.width == 0 {
            return Err("the width is 0".to_string());
        }
        let needs_height = !matches!(self.kind, Kind::D1 | Kind::Layered1D);
        if needs_height && self.height == 0 {
            return Err(format!("a {:?} resource needs a height", self.kind));
        }
        if self.kind == Kind::D3 && self.depth == 0 {
            return Err("a 3-D resource needs a depth".to_string());
        }
        if matches!(self.kind, Kind::Layered1D | Kind::Layered2D | Kind::CubeLayered) && self.layers == 0 {
            return Err(format!("a {:?} resource needs a layer count", self.kind));
        }
        if matches!(self.kind, Kind::Cube | Kind::CubeLayered) && self.width != self.height {
            return Err(format!("cubemap faces are square: width {} != height {}", self.width, self.height));
        }
        let row = u64::from(self.width) * u64::from(self.format.bytes());
        if self.pitch != 0 && self.pitch < row {
            return Err(format!("the pitch ({} bytes) is smaller than a row ({row} bytes)", self.pitch));
        }
        Ok(())
    }
}

/// What a texture fetch does with coordinates outside the texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// `cudaAddressModeWrap` (normalized coordinates only): repeat.
    Wrap,
    /// `cudaAddressModeClamp`: the nearest edge texel.
    Clamp,
    /// `cudaAddressModeMirror` (normalized coordinates only): repeat mirrored.
    Mirror,
    /// `cudaAddressModeBorder`: texels outside read as zero.
    Border,
}

impl AddressMode {
    /// The CUDA enumeration value (`txq.addr_mode_N` returns it).
    pub fn code(self) -> u32 {
        match self {
            AddressMode::Wrap => 0,
            AddressMode::Clamp => 1,
            AddressMode::Mirror => 2,
            AddressMode::Border => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterMode {
    Point,
    Linear,
}

/// `cudaReadModeElementType` or `cudaReadModeNormalizedFloat` (8- and 16-bit integer channels read as
/// floats in [0, 1] or [-1, 1]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadMode {
    ElementType,
    NormalizedFloat,
}

/// How a texture is read (`cudaTextureDesc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sampler {
    /// Per dimension (x, y, z).
    pub address: [AddressMode; 3],
    pub filter: FilterMode,
    pub normalized: bool,
    pub read_mode: ReadMode,
}

impl Default for Sampler {
    fn default() -> Sampler {
        Sampler {
            address: [AddressMode::Clamp; 3],
            filter: FilterMode::Point,
            normalized: false,
            read_mode: ReadMode::ElementType,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    pub resource: Resource,
    pub sampler: Sampler,
}

impl TextureDesc {
    /// Whether fetches return floats (float channels, or integer channels read as normalized floats).
    pub fn returns_float(&self) -> bool {
        self.resource.format.ty.is_float() || self.sampler.read_mode == ReadMode::NormalizedFloat
    }

    fn validate(&self) -> Result<(), String> {
        self.resource.validate()?;
        let ty = self.resource.format.ty;
        if self.sampler.read_mode == ReadMode::NormalizedFloat
            && !matches!(ty, ChannelType::U8 | ChannelType::U16 | ChannelType::S8 | ChannelType::S16)
        {
            return Err(format!("normalized-float reads need 8- or 16-bit integer channels, not {ty:?}"));
        }
        if self.sampler.filter == FilterMode::Linear && !self.returns_float() {
            return Err("linear filtering needs a texture that returns floats".to_string());
        }
        if !self.sampler.normalized
            && self.sampler.address.iter().any(|m| matches!(m, AddressMode::Wrap | AddressMode::Mirror))
        {
            return Err("wrap and mirror addressing need normalized coordinates".to_string());
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SurfaceDesc {
    pub resource: Resource,
}

/// A texture or surface object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Object {
    Texture(TextureDesc),
    Surface(SurfaceDesc),
}

/// Every texture and surface object, by handle.
#[derive(Clone, Debug, Default)]
pub struct Textures {
    /// Index `i` is handle `HANDLE_WINDOW + i`; destroyed objects stay `None`.
    objects: Vec<Option<Object>>,
}

impl Textures {
    fn insert(&mut self, object: Object) -> u64 {
        self.objects.push(Some(object));
        HANDLE_WINDOW + (self.objects.len() as u64 - 1)
    }

    pub fn get(&self, handle: u64) -> Option<&Object> {
        let index = handle.checked_sub(HANDLE_WINDOW)?;
        self.objects.get(usize::try_from(index).ok()?)?.as_ref()
    }

    pub fn texture(&self, handle: u64) -> Option<&TextureDesc> {
        match self.get(handle)? {
            Object::Texture(t) => Some(t),
            Object::Surface(_) => None,
        }
    }

    pub fn surface(&self, handle: u64) -> Option<&SurfaceDesc> {
        match self.get(handle)? {
            Object::Surface(s) => Some(s),
            Object::Texture(_) => None,
        }
    }

    /// Why `handle` names no object of the wanted kind, for error messages.
    pub fn describe(&self, handle: u64) -> String {
        match self.get(handle) {
            Some(Object::Texture(_)) => format!("{handle:#x} is a texture object, not a surface object"),
            Some(Object::Surface(_)) => format!("{handle:#x} is a surface object, not a texture object"),
            None => match handle.checked_sub(HANDLE_WINDOW) {
                Some(i) if (i as usize) < self.objects.len() => format!("{handle:#x} was destroyed"),
                _ => format!("{handle:#x} is not a texture or surface object handle"),
            },
        }
    }

    pub fn len(&self) -> usize {
        self.objects.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl DeviceMemory {
    fn check_resource(&self, r: &Resource) -> Result<(), String> {
        self.find(r.ptr, 1).ok().filter(|(a, off)| *off as u64 + r.size() <= a.size).map(|_| ()).ok_or_else(|| {
            format!(
                "the texels ({} bytes at {:#x}) are not inside one allocation{}",
                r.size(),
                r.ptr,
                self.describe_near(r.ptr, 1).map(|d| format!(" ({d})")).unwrap_or_default()
            )
        })
    }

    /// Creates a texture object over device memory (`cudaCreateTextureObject`); returns its handle.
    pub fn create_texture(&mut self, desc: TextureDesc) -> Result<u64, String> {
        desc.validate()?;
        self.check_resource(&desc.resource)?;
        Ok(self.textures.insert(Object::Texture(desc)))
    }

    /// Creates a surface object over device memory (`cudaCreateSurfaceObject`); returns its handle.
    pub fn create_surface(&mut self, desc: SurfaceDesc) -> Result<u64, String> {
        desc.resource.validate()?;
        if matches!(desc.resource.kind, Kind::Cube | Kind::CubeLayered) {
            return Err("cubemap surfaces are not supported".to_string());
        }
        self.check_resource(&desc.resource)?;
        Ok(self.textures.insert(Object::Surface(desc)))
    }

    /// Destroys a texture or surface object; `false` if the handle names none.
    pub fn destroy_object(&mut self, handle: u64) -> bool {
        let Some(index) = handle.checked_sub(HANDLE_WINDOW) else { return false };
        match self.textures.objects.get_mut(index as usize) {
            Some(slot @ Some(_)) => {
                *slot = None;
                true
            }
            _ => false,
        }
    }

    /// Every texture and surface object.
    pub fn textures(&self) -> &Textures {
        &self.textures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_layout_and_validation() {
        let mut mem = DeviceMemory::new();
        let r = Resource::new(Kind::D2, Format::new(4, ChannelType::F32), 8, 4, 0, 0);
        let ptr = mem.alloc(r.size(), "texels");
        let t =
            mem.create_texture(TextureDesc { resource: Resource { ptr, ..r }, sampler: Sampler::default() }).unwrap();
        let s = mem.create_surface(SurfaceDesc { resource: Resource { ptr, ..r } }).unwrap();
        assert_eq!(t, HANDLE_WINDOW);
        assert!(mem.textures().texture(t).is_some() && mem.textures().surface(t).is_none());
        assert!(mem.textures().surface(s).is_some());
        assert_eq!(mem.textures().texture(t).unwrap().resource.element_address(3, 2, 0), ptr + 2 * 128 + 3 * 16);
        assert!(mem.destroy_object(t));
        assert!(!mem.destroy_object(t));
        assert!(mem.textures().describe(t).contains("destroyed"));
        assert!(mem.textures().describe(5).contains("not a texture"));
        // too big for the buffer
        let big = Resource { ptr, height: 5, ..r };
        assert!(mem.create_texture(TextureDesc { resource: big, sampler: Sampler::default() }).is_err());
        // wrap needs normalized coordinates, linear needs float results
        let wrap = Sampler { address: [AddressMode::Wrap; 3], ..Sampler::default() };
        assert!(mem.create_texture(TextureDesc { resource: Resource { ptr, ..r }, sampler: wrap }).is_err());
        let ints = Resource { ptr, format: Format::new(4, ChannelType::S32), ..r };
        let linear = Sampler { filter: FilterMode::Linear, ..Sampler::default() };
        assert!(mem.create_texture(TextureDesc { resource: ints, sampler: linear }).is_err());
    }
}
