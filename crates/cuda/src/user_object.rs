//! User objects (`cudaUserObjectCreate` and friends): a destructor with a reference count, whose references
//! the program, graphs and executable graphs hold, so that what a graph's nodes use lives as long as the
//! graph (cuda.core keeps its kernels' argument objects alive this way).
//!
//! A graph owns the references given to it (`cudaGraphRetainUserObject`); a copy of the graph
//! (`cudaGraphClone`, a child-graph node) and every executable graph made from it own references of their
//! own, and destroying any of them releases them. When the count reaches zero the destructor runs, on the
//! thread whose call released the last reference, after lockstep has let go of its own locks (CUDA runs it
//! on a thread of its own, later; in both cases it must not call CUDA).

use std::collections::HashMap;

use crate::graph::State;
use crate::stream::HostFn;
use crate::{Cuda, Error, Result};

const USER_OBJECT_WINDOW: u64 = 0x7400_0000_0000_0000;

/// `cudaUserObjectNoDestructorSync`: the one flag `cudaUserObjectCreate` takes (and must be given).
pub const NO_DESTRUCTOR_SYNC: u32 = 1;
/// `cudaGraphUserObjectMove`: the references come from the caller's instead of new ones.
pub const GRAPH_USER_OBJECT_MOVE: u32 = 1;

pub(crate) struct UserObject {
    destroy: HostFn,
    data: usize,
    refs: u64,
}

/// References held by a graph or an executable graph: object → count.
pub(crate) type Owned = HashMap<u64, u64>;

/// Work due once the graph lock is released: a user object's destructor, or a graph allocation's memory
/// to give back (`graph_memory.rs`).
pub(crate) enum Doomed {
    Destructor { destroy: HostFn, data: usize },
    Memory(u64),
}

/// The largest count one call may retain or release (`INT_MAX`).
const MAX_COUNT: u32 = i32::MAX as u32;

impl State {
    /// Adds `count` references to `obj`.
    pub(crate) fn retain_user_object(&mut self, obj: u64, count: u64) -> Result<()> {
        let o = self.user_objects.get_mut(&obj).ok_or(Error::INVALID_VALUE)?;
        o.refs = o.refs.checked_add(count).ok_or(Error::INVALID_VALUE)?;
        Ok(())
    }

    /// Drops `count` references of `obj` (at most as many as it has); the last one dooms its destructor.
    pub(crate) fn release_user_object(&mut self, obj: u64, count: u64) -> Result<()> {
        let o = self.user_objects.get_mut(&obj).ok_or(Error::INVALID_VALUE)?;
        if count > o.refs {
            return Err(Error::INVALID_VALUE);
        }
        o.refs -= count;
        if o.refs == 0 {
            if let Some(o) = self.user_objects.remove(&obj) {
                self.doomed.push(Doomed::Destructor { destroy: o.destroy, data: o.data });
            }
        }
        Ok(())
    }

    /// New references, one set for a new owner of the same objects as `owned` (a copy, an executable graph).
    pub(crate) fn retain_all(&mut self, owned: &Owned) -> Owned {
        for (&obj, &n) in owned {
            let _ = self.retain_user_object(obj, n);
        }
        owned.clone()
    }

    /// Releases an owner's references (the owner is gone).
    pub(crate) fn release_all(&mut self, owned: Owned) {
        for (obj, n) in owned {
            let _ = self.release_user_object(obj, n);
        }
    }
}

impl Cuda {
    /// Runs `f` on the graph state, then what it doomed, with the lock released.
    pub(crate) fn with_graphs<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let (r, doomed) = {
            let mut s = self.graphs.lock();
            let r = f(&mut s);
            (r, std::mem::take(&mut s.doomed))
        };
        for d in doomed {
            match d {
                // SAFETY: the program's destructor with the program's pointer, called once, as CUDA calls it.
                Doomed::Destructor { destroy, data } => unsafe { destroy(data as *mut libc::c_void) },
                Doomed::Memory(ptr) => {
                    let _ = self.free_now(ptr);
                }
            }
        }
        r
    }

    /// `cudaUserObjectCreate`: `initial` references (at least one) owned by the caller; `flags` must be
    /// [`NO_DESTRUCTOR_SYNC`].
    pub fn user_object_create(
        &self,
        data: *mut libc::c_void,
        destroy: Option<HostFn>,
        initial: u32,
        flags: u32,
    ) -> Result<u64> {
        let destroy = destroy.ok_or(Error::INVALID_VALUE)?;
        if initial == 0 || initial > MAX_COUNT || flags != NO_DESTRUCTOR_SYNC {
            return Err(Error::INVALID_VALUE);
        }
        let mut s = self.graphs.lock();
        let h = s.handle(USER_OBJECT_WINDOW);
        s.user_objects.insert(h, UserObject { destroy, data: data as usize, refs: u64::from(initial) });
        Ok(h)
    }

    /// `cudaUserObjectRetain`.
    pub fn user_object_retain(&self, obj: u64, count: u32) -> Result<()> {
        if count == 0 || count > MAX_COUNT {
            return Err(Error::INVALID_VALUE);
        }
        self.graphs.lock().retain_user_object(obj, u64::from(count))
    }

    /// `cudaUserObjectRelease`: releasing more references than the object has is `cudaErrorInvalidValue`
    /// (undefined in CUDA).
    pub fn user_object_release(&self, obj: u64, count: u32) -> Result<()> {
        if count == 0 || count > MAX_COUNT {
            return Err(Error::INVALID_VALUE);
        }
        self.with_graphs(|s| s.release_user_object(obj, u64::from(count)))
    }

    /// `cudaGraphRetainUserObject`: `graph` gets `count` references, new ones or, with
    /// [`GRAPH_USER_OBJECT_MOVE`], the caller's.
    pub fn graph_retain_user_object(&self, graph: u64, obj: u64, count: u32, flags: u32) -> Result<()> {
        if count == 0 || count > MAX_COUNT || flags & !GRAPH_USER_OBJECT_MOVE != 0 {
            return Err(Error::INVALID_VALUE);
        }
        let mut s = self.graphs.lock();
        if !s.graph_exists(graph) || !s.user_objects.contains_key(&obj) {
            return Err(Error::INVALID_VALUE);
        }
        if flags & GRAPH_USER_OBJECT_MOVE == 0 {
            s.retain_user_object(obj, u64::from(count))?;
        }
        *s.graph_owned(graph)?.entry(obj).or_default() += u64::from(count);
        Ok(())
    }

    /// `cudaGraphReleaseUserObject`: drops `count` of the references `graph` holds.
    pub fn graph_release_user_object(&self, graph: u64, obj: u64, count: u32) -> Result<()> {
        if count == 0 || count > MAX_COUNT {
            return Err(Error::INVALID_VALUE);
        }
        let count = u64::from(count);
        self.with_graphs(|s| {
            let owned = s.graph_owned(graph)?;
            let held = owned.get_mut(&obj).filter(|n| **n >= count).ok_or(Error::INVALID_VALUE)?;
            *held -= count;
            if *held == 0 {
                owned.remove(&obj);
            }
            s.release_user_object(obj, count)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static DESTROYED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count_destroy(data: *mut libc::c_void) {
        DESTROYED.fetch_add(data as usize, Ordering::SeqCst);
    }

    #[test]
    fn references_of_the_program_graphs_copies_and_executable_graphs() {
        let config = crate::Config { backend: crate::Backend::Emu, ..crate::Config::default() };
        let c = Cuda::new(config, Box::new(std::io::sink()));
        let before = DESTROYED.load(Ordering::SeqCst);
        let destroyed = || DESTROYED.load(Ordering::SeqCst) - before;
        // The destructor adds its pointer's value: 1000 marks this object.
        let obj = c.user_object_create(1000 as *mut _, Some(count_destroy), 1, NO_DESTRUCTOR_SYNC).unwrap();
        assert_eq!(c.user_object_create(1000 as *mut _, Some(count_destroy), 1, 0), Err(Error::INVALID_VALUE));
        assert_eq!(c.user_object_create(1000 as *mut _, Some(count_destroy), 0, 1), Err(Error::INVALID_VALUE));
        assert_eq!(c.user_object_create(1000 as *mut _, None, 1, 1), Err(Error::INVALID_VALUE));
        let g = c.graph_create(0).unwrap();
        // The program's reference moves to the graph; the graph's copy and an executable graph get their own.
        c.graph_retain_user_object(g, obj, 1, GRAPH_USER_OBJECT_MOVE).unwrap();
        assert_eq!(c.graph_retain_user_object(g, obj, 1, 2), Err(Error::INVALID_VALUE));
        let copy = c.graph_clone(g).unwrap();
        let exec = c.graph_instantiate(g, 0).unwrap();
        c.graph_destroy(g).unwrap();
        c.graph_destroy(copy).unwrap();
        assert_eq!(destroyed(), 0, "the executable graph still holds a reference");
        c.graph_exec_destroy(exec).unwrap();
        assert_eq!(destroyed(), 1000);
        assert_eq!(c.user_object_retain(obj, 1), Err(Error::INVALID_VALUE), "destroyed");

        let obj = c.user_object_create(1000 as *mut _, Some(count_destroy), 2, NO_DESTRUCTOR_SYNC).unwrap();
        let g = c.graph_create(0).unwrap();
        c.graph_retain_user_object(g, obj, 3, 0).unwrap();
        assert_eq!(c.graph_release_user_object(g, obj, 4), Err(Error::INVALID_VALUE), "more than the graph has");
        c.graph_release_user_object(g, obj, 3).unwrap();
        c.user_object_retain(obj, 1).unwrap();
        assert_eq!(c.user_object_release(obj, 4), Err(Error::INVALID_VALUE), "more than it has");
        c.user_object_release(obj, 2).unwrap();
        assert_eq!(destroyed(), 1000);
        c.user_object_release(obj, 1).unwrap();
        assert_eq!(destroyed(), 2000);
        c.graph_destroy(g).unwrap();
    }
}
