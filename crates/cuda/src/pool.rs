//! Memory pools (`cudaMemPool_t`): the device's default pool, pools the program creates, the device's
//! current pool that `cudaMallocAsync` allocates from, their attributes and usage counters.
//!
//! Allocation itself is [`Cuda::malloc`]'s: streams are synchronous, so a block freed with
//! `cudaFreeAsync` is free when the call returns and goes straight back to the system. A pool therefore
//! holds no memory of its own: its reserved memory is the memory in use from it (`ReservedMemCurrent ==
//! UsedMemCurrent`), the release threshold and the reuse policies are kept and read back but change
//! nothing, and trimming has nothing to release. Access from the one device is always read-write.

use std::collections::HashMap;

use crate::{Cuda, Error, Result};

/// Pool handles live in a window no pointer or other handle uses (see `memory.rs` and `stream.rs`).
const POOL_WINDOW: u64 = 0x7B00_0000_0000_0000;
/// The default pool of device 0.
pub const DEFAULT_POOL: u64 = POOL_WINDOW;

/// `cudaMemPoolAttr` (the driver's `CUmemPool_attribute` has the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolAttr {
    ReuseFollowEventDependencies,
    ReuseAllowOpportunistic,
    ReuseAllowInternalDependencies,
    ReleaseThreshold,
    ReservedMemCurrent,
    ReservedMemHigh,
    UsedMemCurrent,
    UsedMemHigh,
}

impl PoolAttr {
    pub fn from_raw(attr: i32) -> Result<PoolAttr> {
        Ok(match attr {
            1 => PoolAttr::ReuseFollowEventDependencies,
            2 => PoolAttr::ReuseAllowOpportunistic,
            3 => PoolAttr::ReuseAllowInternalDependencies,
            4 => PoolAttr::ReleaseThreshold,
            5 => PoolAttr::ReservedMemCurrent,
            6 => PoolAttr::ReservedMemHigh,
            7 => PoolAttr::UsedMemCurrent,
            8 => PoolAttr::UsedMemHigh,
            _ => return Err(Error::INVALID_VALUE),
        })
    }

    /// Whether the value is an `int` (the reuse policies); the others are `cuuint64_t`.
    pub fn is_int(self) -> bool {
        matches!(
            self,
            PoolAttr::ReuseFollowEventDependencies
                | PoolAttr::ReuseAllowOpportunistic
                | PoolAttr::ReuseAllowInternalDependencies
        )
    }
}

/// `cudaMemAccessFlagsProtReadWrite`.
pub const ACCESS_READ_WRITE: i32 = 3;
/// `cudaMemAccessFlagsProtNone`, `cudaMemAccessFlagsProtRead`.
const ACCESS_NONE: i32 = 0;
const ACCESS_READ: i32 = 1;

/// Where a pool's memory lives and of which kind (`cudaMemAllocationType` and `cudaMemLocation`): the
/// device, page-locked host memory (as a whole or NUMA node 0, the only one lockstep presents), or managed
/// memory (with no preferred location, or preferring the device or the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub alloc_type: i32,
    pub location_type: i32,
    pub id: i32,
}

/// `cudaMemAllocationTypePinned`, `cudaMemAllocationTypeManaged`.
const PINNED: i32 = 1;
const MANAGED: i32 = 2;
/// `cudaMemLocationType`: none, device, host, host NUMA node, device locality domain.
const LOC_NONE: i32 = 0;
const LOC_DEVICE: i32 = 1;
const LOC_HOST: i32 = 2;
const LOC_HOST_NUMA: i32 = 3;
const LOC_LOCALITY_DOMAIN: i32 = 6;

impl Place {
    /// The device's own pinned memory: the pools of `cudaDeviceGetDefaultMemPool` and `cudaMallocAsync`.
    const DEVICE: Place = Place { alloc_type: PINNED, location_type: LOC_DEVICE, id: 0 };

    /// A place pools can have (the ids a location type ignores read as 0); `cudaErrorInvalidValue` for the
    /// combinations CUDA refuses, `cudaErrorNotSupported` for device locality domains.
    pub fn new(alloc_type: i32, location_type: i32, id: i32) -> Result<Place> {
        let id = match (alloc_type, location_type) {
            (PINNED | MANAGED, LOC_DEVICE) => {
                check_device(id)?;
                0
            }
            (PINNED | MANAGED, LOC_HOST) | (MANAGED, LOC_NONE) => 0,
            (PINNED | MANAGED, LOC_HOST_NUMA) if id == 0 => 0,
            (PINNED, LOC_LOCALITY_DOMAIN) => return Err(Error::NOT_SUPPORTED),
            _ => return Err(Error::INVALID_VALUE),
        };
        Ok(Place { alloc_type, location_type, id })
    }

    /// Page-locked host memory: the device may use it only as its pool allows (`Pool::device_access`).
    fn is_host(self) -> bool {
        self.alloc_type == PINNED && matches!(self.location_type, LOC_HOST | LOC_HOST_NUMA)
    }
}

/// Gives kernels the access `flags` (`cudaMemAccessFlags`) to the pool allocation at `ptr`.
fn grant(rt: &mut runtime::Runtime, ptr: u64, flags: i32) {
    rt.set_device_access(ptr, flags != ACCESS_NONE, flags == ACCESS_READ);
}

#[derive(Clone, Debug)]
struct Pool {
    place: Place,
    /// The three reuse policies (all enabled by default).
    reuse: [bool; 3],
    release_threshold: u64,
    used: u64,
    used_high: u64,
    reserved_high: u64,
    /// Destroyed while allocations from it were live: gone once they are freed.
    destroyed: bool,
    /// The device's access (`cudaMemAccessFlags`): its own memory and managed memory always read-write; a
    /// host pool's memory only once `cudaMemPoolSetAccess` grants it (none at first, as on a GPU).
    device_access: i32,
}

impl Pool {
    fn new(place: Place) -> Pool {
        Pool {
            device_access: if place.is_host() { ACCESS_NONE } else { ACCESS_READ_WRITE },
            place,
            reuse: [true; 3],
            release_threshold: 0,
            used: 0,
            used_high: 0,
            reserved_high: 0,
            destroyed: false,
        }
    }
}

/// The pools of the device, behind the device lock.
#[derive(Debug)]
pub(crate) struct Pools {
    pools: HashMap<u64, Pool>,
    /// `cudaDeviceSetMemPool`'s pool: what `cudaMallocAsync` allocates from.
    current: u64,
    /// The default and current pools of the other places (`cudaMemGetDefaultMemPool`, `cudaMemSetMemPool`),
    /// made when first asked for.
    defaults: HashMap<Place, u64>,
    currents: HashMap<Place, u64>,
    next: u64,
    /// Live allocations made from a pool: base address → (pool, size).
    owners: HashMap<u64, (u64, u64)>,
}

impl Default for Pools {
    fn default() -> Pools {
        Pools {
            pools: HashMap::from([(DEFAULT_POOL, Pool::new(Place::DEVICE))]),
            current: DEFAULT_POOL,
            defaults: HashMap::new(),
            currents: HashMap::new(),
            next: DEFAULT_POOL + 1,
            owners: HashMap::new(),
        }
    }
}

impl Pools {
    fn create(&mut self, place: Place) -> u64 {
        let handle = self.next;
        self.next += 1;
        self.pools.insert(handle, Pool::new(place));
        handle
    }

    /// The default pool of `place`.
    fn default_of(&mut self, place: Place) -> u64 {
        if place == Place::DEVICE {
            return DEFAULT_POOL;
        }
        if let Some(&p) = self.defaults.get(&place) {
            return p;
        }
        let p = self.create(place);
        self.defaults.insert(place, p);
        p
    }

    /// The current pool of `place`.
    fn current_of(&mut self, place: Place) -> u64 {
        if place == Place::DEVICE {
            return self.current;
        }
        match self.currents.get(&place) {
            Some(&p) => p,
            None => self.default_of(place),
        }
    }

    fn is_default(&self, pool: u64) -> bool {
        pool == DEFAULT_POOL || self.defaults.values().any(|&p| p == pool)
    }

    fn live(&mut self, pool: u64) -> Result<&mut Pool> {
        self.pools.get_mut(&pool).filter(|p| !p.destroyed).ok_or(Error::INVALID_VALUE)
    }

    /// An allocation from `pool` of `size` bytes at `ptr`.
    fn allocated(&mut self, pool: u64, ptr: u64, size: u64) {
        if let Some(p) = self.pools.get_mut(&pool) {
            p.used += size;
            p.used_high = p.used_high.max(p.used);
            p.reserved_high = p.reserved_high.max(p.used);
            self.owners.insert(ptr, (pool, size));
        }
    }

    /// `ptr` was freed: its pool (if any) no longer counts it; a destroyed pool with nothing left goes.
    pub(crate) fn freed(&mut self, ptr: u64) {
        let Some((pool, size)) = self.owners.remove(&ptr) else { return };
        if let Some(p) = self.pools.get_mut(&pool) {
            p.used -= size;
            if p.destroyed && p.used == 0 {
                self.pools.remove(&pool);
            }
        }
    }
}

/// The one device's ordinal, or `cudaErrorInvalidDevice`.
fn check_device(device: i32) -> Result<()> {
    if device == 0 {
        Ok(())
    } else {
        Err(Error::INVALID_DEVICE)
    }
}

impl Cuda {
    /// `cudaDeviceGetDefaultMemPool`.
    pub fn default_mem_pool(&self, device: i32) -> Result<u64> {
        check_device(device)?;
        Ok(DEFAULT_POOL)
    }

    /// `cudaDeviceGetMemPool`: the device's current pool.
    pub fn mem_pool(&self, device: i32) -> Result<u64> {
        check_device(device)?;
        Ok(self.lock().pools.current)
    }

    /// `cudaDeviceSetMemPool`.
    pub fn set_mem_pool(&self, device: i32, pool: u64) -> Result<()> {
        check_device(device)?;
        self.set_mem_pool_of(Place::DEVICE, pool)
    }

    /// `cudaMemPoolCreate` of a pool of any [`Place`]; `handle_types` must be none (pools cannot be shared
    /// between processes here).
    pub fn mem_pool_create(&self, alloc_type: i32, handle_types: i32, location_type: i32, id: i32) -> Result<u64> {
        let place = Place::new(alloc_type, location_type, id)?;
        if handle_types != 0 {
            return Err(Error::NOT_SUPPORTED);
        }
        Ok(self.lock().pools.create(place))
    }

    /// `cudaMemGetDefaultMemPool`: the default pool of a place (the device's is `cudaDeviceGetDefaultMemPool`'s).
    pub fn default_mem_pool_of(&self, place: Place) -> Result<u64> {
        Ok(self.lock().pools.default_of(place))
    }

    /// `cudaMemGetMemPool`: the place's current pool (the device's is `cudaDeviceGetMemPool`'s).
    pub fn mem_pool_of(&self, place: Place) -> Result<u64> {
        Ok(self.lock().pools.current_of(place))
    }

    /// `cudaMemSetMemPool`: `pool` must be of `place`.
    pub fn set_mem_pool_of(&self, place: Place, pool: u64) -> Result<()> {
        let mut inner = self.lock();
        let pools = &mut inner.pools;
        if pools.live(pool)?.place != place {
            return Err(Error::INVALID_VALUE);
        }
        if place == Place::DEVICE {
            pools.current = pool;
        } else {
            pools.currents.insert(place, pool);
        }
        Ok(())
    }

    /// `cudaMemPoolDestroy`: not the default pool; a pool with live allocations goes once they are freed;
    /// the device's current pool reverts to the default.
    pub fn mem_pool_destroy(&self, pool: u64) -> Result<()> {
        let mut inner = self.lock();
        let pools = &mut inner.pools;
        if pools.is_default(pool) {
            return Err(Error::INVALID_VALUE);
        }
        let p = pools.live(pool)?;
        if p.used == 0 {
            pools.pools.remove(&pool);
        } else {
            p.destroyed = true;
        }
        if pools.current == pool {
            pools.current = DEFAULT_POOL;
        }
        pools.currents.retain(|_, p| *p != pool);
        Ok(())
    }

    /// `cudaMemPoolGetAttribute` (an `int` attribute's value is 0 or 1).
    pub fn mem_pool_attribute(&self, pool: u64, attr: PoolAttr) -> Result<u64> {
        let mut inner = self.lock();
        let p = inner.pools.live(pool)?;
        Ok(match attr {
            PoolAttr::ReuseFollowEventDependencies => u64::from(p.reuse[0]),
            PoolAttr::ReuseAllowOpportunistic => u64::from(p.reuse[1]),
            PoolAttr::ReuseAllowInternalDependencies => u64::from(p.reuse[2]),
            PoolAttr::ReleaseThreshold => p.release_threshold,
            PoolAttr::ReservedMemCurrent | PoolAttr::UsedMemCurrent => p.used,
            PoolAttr::ReservedMemHigh => p.reserved_high,
            PoolAttr::UsedMemHigh => p.used_high,
        })
    }

    /// `cudaMemPoolSetAttribute`: the current amounts are read-only, and the high watermarks may only be
    /// reset (set to 0, which makes them the current amount).
    pub fn set_mem_pool_attribute(&self, pool: u64, attr: PoolAttr, value: u64) -> Result<()> {
        let mut inner = self.lock();
        let p = inner.pools.live(pool)?;
        match attr {
            PoolAttr::ReuseFollowEventDependencies => p.reuse[0] = value != 0,
            PoolAttr::ReuseAllowOpportunistic => p.reuse[1] = value != 0,
            PoolAttr::ReuseAllowInternalDependencies => p.reuse[2] = value != 0,
            PoolAttr::ReleaseThreshold => p.release_threshold = value,
            PoolAttr::ReservedMemHigh if value == 0 => p.reserved_high = p.used,
            PoolAttr::UsedMemHigh if value == 0 => p.used_high = p.used,
            PoolAttr::ReservedMemHigh
            | PoolAttr::UsedMemHigh
            | PoolAttr::ReservedMemCurrent
            | PoolAttr::UsedMemCurrent => return Err(Error::INVALID_VALUE),
        }
        Ok(())
    }

    /// `cudaMemPoolTrimTo`: the pool holds no unused memory (see the module documentation).
    pub fn mem_pool_trim_to(&self, pool: u64) -> Result<()> {
        self.lock().pools.live(pool).map(|_| ())
    }

    /// `cudaMemPoolSetAccess` for one location: the device keeps read-write access to its own memory (and to
    /// managed memory); a host pool's memory it may be given (read-write or read-only) or denied. Any other
    /// location is not a device here. The emulator and the checked JIT fault a kernel that uses a host pool's
    /// memory without access (an illegal address, as on a GPU); the unchecked JIT does not see it.
    pub fn set_mem_pool_access(&self, pool: u64, location_type: i32, device: i32, flags: i32) -> Result<()> {
        let mut inner = self.lock();
        let p = inner.pools.live(pool)?;
        if location_type != 1 {
            return Err(Error::INVALID_VALUE);
        }
        check_device(device)?;
        match flags {
            ACCESS_READ_WRITE => {}
            ACCESS_NONE | ACCESS_READ if p.place.is_host() => {}
            _ => return Err(Error::INVALID_VALUE),
        }
        p.device_access = flags;
        // The pool's live allocations follow: the checking engines fault a kernel that uses them without it.
        let ptrs: Vec<u64> = inner.pools.owners.iter().filter(|(_, o)| o.0 == pool).map(|(&ptr, _)| ptr).collect();
        let rt = inner.runtime(&self.config);
        for ptr in ptrs {
            grant(rt, ptr, flags);
        }
        Ok(())
    }

    /// `cudaMemPoolGetAccess`.
    pub fn mem_pool_access(&self, pool: u64, location_type: i32, device: i32) -> Result<i32> {
        let mut inner = self.lock();
        let p = inner.pools.live(pool)?;
        if location_type != 1 {
            return Err(Error::INVALID_VALUE);
        }
        check_device(device)?;
        Ok(p.device_access)
    }

    /// `cudaMallocAsync` (`pool` `None`: the device's current pool) and `cudaMallocFromPoolAsync`.
    pub fn malloc_from_pool(&self, size: u64, pool: Option<u64>) -> Result<u64> {
        let (pool, place) = {
            let mut inner = self.lock();
            let pool = pool.unwrap_or(inner.pools.current);
            let place = inner.pools.live(pool)?.place;
            (pool, place)
        };
        let ptr = match (place.alloc_type, place.location_type) {
            (MANAGED, _) => self.malloc_managed(size, 1 /* cudaMemAttachGlobal */)?,
            (_, LOC_DEVICE) => self.device_malloc(size)?,
            _ => self.malloc_host(size, 0)?,
        };
        if ptr != 0 {
            let mut inner = self.lock();
            inner.pools.allocated(pool, ptr, size);
            let access = inner.pools.live(pool).map_or(ACCESS_READ_WRITE, |p| p.device_access);
            if access != ACCESS_READ_WRITE {
                grant(inner.runtime(&self.config), ptr, access);
            }
        }
        Ok(ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda() -> Cuda {
        let config = crate::Config { backend: crate::Backend::Emu, ..crate::Config::default() };
        Cuda::new(config, Box::new(std::io::sink()))
    }

    #[test]
    fn usage_counters_follow_allocations_and_frees() {
        let c = cuda();
        let pool = c.mem_pool_create(1, 0, 1, 0).unwrap();
        let a = c.malloc_from_pool(1000, Some(pool)).unwrap();
        let b = c.malloc_from_pool(24, Some(pool)).unwrap();
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemCurrent).unwrap(), 1024);
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::ReservedMemCurrent).unwrap(), 1024);
        c.free(a).unwrap();
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemCurrent).unwrap(), 24);
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemHigh).unwrap(), 1024);
        // The high watermark may only be reset, to the current amount.
        assert_eq!(c.set_mem_pool_attribute(pool, PoolAttr::UsedMemHigh, 5), Err(Error::INVALID_VALUE));
        c.set_mem_pool_attribute(pool, PoolAttr::UsedMemHigh, 0).unwrap();
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemHigh).unwrap(), 24);
        assert_eq!(c.set_mem_pool_attribute(pool, PoolAttr::UsedMemCurrent, 0), Err(Error::INVALID_VALUE));
        // The default pool is untouched.
        assert_eq!(c.mem_pool_attribute(DEFAULT_POOL, PoolAttr::UsedMemCurrent).unwrap(), 0);
        c.free(b).unwrap();
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemCurrent).unwrap(), 0);
    }

    #[test]
    fn current_pool_and_destruction() {
        let c = cuda();
        assert_eq!(c.mem_pool(0).unwrap(), DEFAULT_POOL);
        assert_eq!(c.mem_pool(1), Err(Error::INVALID_DEVICE));
        let pool = c.mem_pool_create(1, 0, 1, 0).unwrap();
        c.set_mem_pool(0, pool).unwrap();
        let p = c.malloc_from_pool(64, None).unwrap();
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemCurrent).unwrap(), 64);
        assert_eq!(c.mem_pool_destroy(DEFAULT_POOL), Err(Error::INVALID_VALUE));
        // Destroyed with a live allocation: unusable at once, the device falls back to its default pool.
        c.mem_pool_destroy(pool).unwrap();
        assert_eq!(c.mem_pool(0).unwrap(), DEFAULT_POOL);
        assert_eq!(c.mem_pool_attribute(pool, PoolAttr::UsedMemCurrent), Err(Error::INVALID_VALUE));
        assert_eq!(c.malloc_from_pool(8, Some(pool)), Err(Error::INVALID_VALUE));
        c.free(p).unwrap();
        assert_eq!(c.set_mem_pool(0, pool), Err(Error::INVALID_VALUE));
    }

    #[test]
    fn places_have_default_and_current_pools() {
        let c = cuda();
        let device = Place::new(1, 1, 0).unwrap();
        assert_eq!(c.default_mem_pool_of(device), Ok(DEFAULT_POOL));
        let host = Place::new(1, 2, 5).unwrap();
        assert_eq!(host, Place::new(1, 2, 0).unwrap(), "the host's id is ignored");
        let host_default = c.default_mem_pool_of(host).unwrap();
        assert_eq!(c.default_mem_pool_of(host), Ok(host_default), "made once");
        assert_eq!(c.mem_pool_of(host), Ok(host_default));
        let managed = Place::new(2, 0, 0).unwrap();
        let managed_default = c.default_mem_pool_of(managed).unwrap();
        assert_ne!(managed_default, host_default);
        assert_eq!(c.set_mem_pool_of(host, managed_default), Err(Error::INVALID_VALUE));
        let own = c.mem_pool_create(1, 0, 2, 0).unwrap();
        c.set_mem_pool_of(host, own).unwrap();
        assert_eq!(c.mem_pool_of(host), Ok(own));
        assert_eq!(c.mem_pool(0), Ok(DEFAULT_POOL), "the device's current pool is its own");
        assert_eq!(c.mem_pool_destroy(host_default), Err(Error::INVALID_VALUE), "a default pool");
        c.mem_pool_destroy(own).unwrap();
        assert_eq!(c.mem_pool_of(host), Ok(host_default));
    }

    #[test]
    fn creation_is_checked() {
        let c = cuda();
        assert_eq!(c.mem_pool_create(0, 0, 1, 0), Err(Error::INVALID_VALUE));
        assert_eq!(c.mem_pool_create(1, 0, 0, 0), Err(Error::INVALID_VALUE), "pinned memory needs a location");
        assert_eq!(c.mem_pool_create(2, 0, 6, 0), Err(Error::INVALID_VALUE), "managed locality domain");
        assert_eq!(c.mem_pool_create(1, 0, 6, 0), Err(Error::NOT_SUPPORTED));
        assert_eq!(c.mem_pool_create(1, 0, 3, 1), Err(Error::INVALID_VALUE), "one NUMA node");
        let host = c.mem_pool_create(1, 0, 2, 7).unwrap();
        assert_eq!(c.set_mem_pool(0, host), Err(Error::INVALID_VALUE), "not the device's");
        assert_eq!(c.mem_pool_create(1, 0, 1, 3), Err(Error::INVALID_DEVICE));
        assert_eq!(c.mem_pool_create(1, 1, 1, 0), Err(Error::NOT_SUPPORTED));
        assert_eq!(c.mem_pool_access(DEFAULT_POOL, 1, 0), Ok(ACCESS_READ_WRITE));
        assert_eq!(c.set_mem_pool_access(DEFAULT_POOL, 1, 0, 1), Err(Error::INVALID_VALUE));
        assert_eq!(c.mem_pool_attribute(12345, PoolAttr::ReleaseThreshold), Err(Error::INVALID_VALUE));
    }
}
