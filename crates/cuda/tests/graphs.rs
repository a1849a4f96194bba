//! CUDA Graphs and stream capture, with host-function nodes that log the order they run in: explicit graphs
//! run in an order their edges allow (not their creation order), cycles are refused at instantiation, and
//! captures record instead of running, fork and join through events, and fail as CUDA documents.

use std::sync::Mutex;

use cuda::{CallConfig, CaptureStatus, Config, Cuda, Error, Kernel, NodeOp, NodeType};
use device::Dim3;

fn cuda() -> Cuda {
    Cuda::new(Config { jit_cache: None, threads: 1, ..Config::default() }, Box::new(std::io::sink()))
}

/// A log per test (the tests run in parallel): host nodes push their tag into the `Mutex<Vec<u64>>` their
/// user data points at.
unsafe extern "C" fn log_tag(data: *mut libc::c_void) {
    // SAFETY: each test passes a pointer to a `Slot` that outlives its work.
    let slot = unsafe { &*(data as *const Slot) };
    slot.log.lock().unwrap().push(slot.tag);
}

struct Slot {
    log: &'static Mutex<Vec<u64>>,
    tag: u64,
}

fn slots(log: &'static Mutex<Vec<u64>>, n: u64) -> Vec<Slot> {
    (0..n).map(|tag| Slot { log, tag }).collect()
}

fn host(slot: &Slot) -> NodeOp {
    NodeOp::Host { f: log_tag, data: slot as *const Slot as u64 }
}

#[test]
fn explicit_graphs_run_in_dependency_order_and_refuse_cycles() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 4);
    let g = c.graph_create(0).unwrap();
    // Created 0, 1, 2, 3; edges 2 -> 0 -> 1, 3 after 1 and 2.
    let n: Vec<u64> = s.iter().map(|slot| c.graph_add_node(g, host(slot), &[]).unwrap()).collect();
    c.graph_add_dependencies(g, &[n[2], n[0], n[1], n[2]], &[n[0], n[1], n[3], n[3]]).unwrap();
    assert_eq!(c.graph_root_nodes(g).unwrap(), vec![n[2]]);
    assert_eq!(c.graph_edges(g).unwrap().len(), 4);
    assert_eq!(c.graph_node_type(n[0]).unwrap(), NodeType::Host);
    assert_eq!(c.graph_add_dependencies(g, &[n[0]], &[n[0]]), Err(Error::INVALID_VALUE), "a self edge");
    let exec = c.graph_instantiate(g, 0).unwrap();
    let stream = c.stream_create(0, 0).unwrap();
    c.graph_launch(exec, stream).unwrap();
    c.graph_launch(exec, stream).unwrap();
    c.stream_synchronize(stream).unwrap();
    assert_eq!(*LOG.lock().unwrap(), vec![2, 0, 1, 3, 2, 0, 1, 3]);
    // A clone keeps the edges that run from later nodes to earlier ones (2 -> 0).
    let copy = c.graph_clone(g).unwrap();
    assert_eq!(c.graph_edges(copy).unwrap().len(), 4);
    let copied = c.graph_instantiate(copy, 0).unwrap();
    c.graph_launch(copied, stream).unwrap();
    c.stream_synchronize(stream).unwrap();
    assert_eq!(LOG.lock().unwrap()[8..], [2, 0, 1, 3]);
    c.graph_exec_destroy(copied).unwrap();
    c.graph_destroy(copy).unwrap();
    LOG.lock().unwrap().truncate(8);
    // 3 -> 2 closes the cycle 2 -> 0 -> 1 -> 3 -> 2. Without 0 -> 1 and 3 -> 2, the edges 2 -> 0, 1 -> 3 and
    // 2 -> 3 leave 1 and 2 ready (1 created first), then 0 and 3.
    c.graph_add_dependencies(g, &[n[3]], &[n[2]]).unwrap();
    assert_eq!(c.graph_instantiate(g, 0), Err(Error::INVALID_VALUE));
    assert_eq!(c.graph_remove_dependencies(g, &[n[1]], &[n[0]]), Err(Error::INVALID_VALUE), "no such edge");
    c.graph_remove_dependencies(g, &[n[0], n[3]], &[n[1], n[2]]).unwrap();
    assert_eq!(c.graph_node_graph(n[1]).unwrap(), g);
    let again = c.graph_instantiate(g, 0).unwrap();
    LOG.lock().unwrap().clear();
    c.graph_launch(again, stream).unwrap();
    c.stream_synchronize(stream).unwrap();
    assert_eq!(*LOG.lock().unwrap(), vec![1, 2, 0, 3]);
    c.graph_exec_destroy(exec).unwrap();
    c.graph_destroy(g).unwrap();
    assert_eq!(c.graph_nodes(g), Err(Error::INVALID_VALUE));
}

#[test]
fn child_graphs_are_copied_when_added_and_flattened_in_place() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 4);
    let child = c.graph_create(0).unwrap();
    let c1 = c.graph_add_node(child, host(&s[1]), &[]).unwrap();
    c.graph_add_node(child, host(&s[2]), &[c1]).unwrap();
    let g = c.graph_create(0).unwrap();
    let first = c.graph_add_node(g, host(&s[0]), &[]).unwrap();
    let node = c.graph_add_node(g, NodeOp::Graph(child), &[first]).unwrap();
    c.graph_add_node(g, host(&s[3]), &[node]).unwrap();
    // Changing the child afterwards does not change the node's copy.
    c.graph_add_node(child, NodeOp::Empty, &[]).unwrap();
    c.graph_destroy(child).unwrap();
    let exec = c.graph_instantiate(g, 0).unwrap();
    c.graph_launch(exec, cuda::PER_THREAD_STREAM).unwrap();
    c.synchronize().unwrap();
    assert_eq!(*LOG.lock().unwrap(), vec![0, 1, 2, 3]);
}

#[test]
fn capture_records_forks_and_joins_and_checks_the_join() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 3);
    let (s1, s2) = (c.stream_create(0, 0).unwrap(), c.stream_create(0x1, 0).unwrap());
    let (fork, join) = (c.event_create(0).unwrap(), c.event_create(0).unwrap());
    c.begin_capture(s1, 0).unwrap();
    assert_eq!(c.begin_capture(s1, 0), Err(Error::ILLEGAL_STATE));
    c.launch_host_fn(s1, log_tag, &s[0] as *const Slot as *mut libc::c_void).unwrap();
    c.event_record(fork, s1).unwrap();
    assert_eq!(c.event_query(fork), Err(Error::CAPTURED_EVENT));
    c.stream_wait_event(s2, fork).unwrap();
    assert_eq!(c.capture_info(s2).unwrap().status, CaptureStatus::Active);
    c.launch_host_fn(s2, log_tag, &s[1] as *const Slot as *mut libc::c_void).unwrap();
    c.launch_host_fn(s1, log_tag, &s[2] as *const Slot as *mut libc::c_void).unwrap();
    assert_eq!(c.end_capture(s2), Err(Error::STREAM_CAPTURE_UNMATCHED));
    c.event_record(join, s2).unwrap();
    c.stream_wait_event(s1, join).unwrap();
    let info = c.capture_info(s1).unwrap();
    assert_eq!((info.status, info.count), (CaptureStatus::Active, 2));
    let g = c.end_capture(s1).unwrap();
    c.stream_synchronize(s1).unwrap();
    c.stream_synchronize(s2).unwrap();
    assert!(LOG.lock().unwrap().is_empty(), "captured work does not run");
    assert_eq!(c.capture_info(s2).unwrap().status, CaptureStatus::None);
    assert_eq!(c.graph_nodes(g).unwrap().len(), 3);
    assert_eq!(c.graph_edges(g).unwrap().len(), 2, "0 -> 1 and 0 -> 2");
    let exec = c.graph_instantiate(g, 0).unwrap();
    c.graph_launch(exec, s1).unwrap();
    c.stream_synchronize(s1).unwrap();
    assert_eq!(*LOG.lock().unwrap(), vec![0, 1, 2]);

    // The same fork without the join.
    c.begin_capture(s1, 0).unwrap();
    c.event_record(fork, s1).unwrap();
    c.stream_wait_event(s2, fork).unwrap();
    c.launch_host_fn(s2, log_tag, &s[1] as *const Slot as *mut libc::c_void).unwrap();
    assert_eq!(c.end_capture(s1), Err(Error::STREAM_CAPTURE_UNJOINED));
    assert_eq!(c.capture_info(s2).unwrap().status, CaptureStatus::None);
}

#[test]
fn synchronizing_with_a_capture_invalidates_it() {
    let c = cuda();
    let (blocking, non_blocking) = (c.stream_create(0, 0).unwrap(), c.stream_create(0x1, 0).unwrap());
    assert_eq!(c.begin_capture(cuda::LEGACY_STREAM, 0), Err(Error::INVALID_VALUE));
    c.begin_capture(blocking, 0).unwrap();
    assert_eq!(c.stream_query(blocking), Err(Error::STREAM_CAPTURE_UNSUPPORTED));
    assert_eq!(c.capture_info(blocking).unwrap().status, CaptureStatus::Invalidated);
    assert_eq!(c.end_capture(blocking), Err(Error::STREAM_CAPTURE_INVALIDATED));

    // Legacy-stream work waits for blocking streams only (relaxed captures, which allow synchronizing
    // other streams).
    c.begin_capture(non_blocking, 2).unwrap();
    c.stream_synchronize(cuda::LEGACY_STREAM).unwrap();
    c.begin_capture(blocking, 2).unwrap();
    assert_eq!(c.stream_synchronize(cuda::LEGACY_STREAM), Err(Error::STREAM_CAPTURE_IMPLICIT));
    assert_eq!(c.capture_info(cuda::LEGACY_STREAM), Err(Error::STREAM_CAPTURE_IMPLICIT));
    assert_eq!(c.capture_info(non_blocking).unwrap().status, CaptureStatus::Active);
    assert_eq!(c.end_capture(blocking), Err(Error::STREAM_CAPTURE_INVALIDATED));
    assert!(c.graph_nodes(c.end_capture(non_blocking).unwrap()).unwrap().is_empty());

    // Global and thread-local captures forbid synchronizing another stream, querying an event or cudaMalloc
    // in their thread, and are invalidated by it.
    for mode in [0, 1] {
        c.begin_capture(blocking, mode).unwrap();
        assert_eq!(c.stream_synchronize(non_blocking), Err(Error::STREAM_CAPTURE_UNSUPPORTED));
        assert_eq!(c.malloc(64), Err(Error::STREAM_CAPTURE_UNSUPPORTED));
        assert_eq!(c.capture_info(blocking).unwrap().status, CaptureStatus::Invalidated);
        assert_eq!(c.end_capture(blocking), Err(Error::STREAM_CAPTURE_INVALIDATED));
    }

    // A thread whose own mode is relaxed may make them during its capture.
    c.begin_capture(blocking, 0).unwrap();
    assert_eq!(cuda::exchange_thread_capture_mode(2), Ok(0));
    let p = c.malloc(64).unwrap();
    assert_eq!(cuda::exchange_thread_capture_mode(0), Ok(2));
    assert_eq!(c.capture_info(blocking).unwrap().status, CaptureStatus::Active);
    c.end_capture(blocking).unwrap();
    c.free(p).unwrap();
    // Another thread's global capture forbids them here too, and is invalidated; a thread-local one does not.
    for (mode, forbidden) in [(0, true), (1, false)] {
        let (begun, called) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
        std::thread::scope(|s| {
            let other = s.spawn(|| {
                c.begin_capture(non_blocking, mode).unwrap();
                begun.wait();
                called.wait();
                c.end_capture(non_blocking)
            });
            begun.wait();
            let r = c.malloc(64);
            called.wait();
            let ended = other.join().unwrap();
            if forbidden {
                assert_eq!(r, Err(Error::STREAM_CAPTURE_UNSUPPORTED));
                assert_eq!(ended, Err(Error::STREAM_CAPTURE_INVALIDATED));
            } else {
                c.free(r.unwrap()).unwrap();
                assert!(ended.is_ok());
            }
        });
    }

    // An event recorded outside the capture is a dependency on uncaptured work.
    let e = c.event_create(0).unwrap();
    c.event_record(e, non_blocking).unwrap();
    c.begin_capture(blocking, 0).unwrap();
    assert_eq!(c.stream_wait_event(blocking, e), Err(Error::STREAM_CAPTURE_ISOLATION));
    assert_eq!(c.end_capture(blocking), Err(Error::STREAM_CAPTURE_INVALIDATED));
    assert_eq!(c.end_capture(blocking), Err(Error::ILLEGAL_STATE), "no longer capturing");
}

#[test]
fn a_kernel_node_with_an_impossible_shape_is_refused_when_made() {
    let c = cuda();
    let g = c.graph_create(0).unwrap();
    let config = |block: Dim3| CallConfig { grid: Dim3::new(1, 1, 1), block, shared: 0, stream: 0, cooperative: false };
    let kernel = Kernel::HostStub(0x1234);
    for block in [Dim3::new(2048, 1, 1), Dim3::new(0, 1, 1), Dim3::new(1, 1, 65)] {
        // SAFETY: no arguments are read: the shape is refused first.
        let r = unsafe { c.graph_add_kernel_node(g, &[], kernel, config(block), std::ptr::null()) };
        assert_eq!(r, Err(Error::INVALID_VALUE), "{block:?}");
    }
    // A valid shape gets as far as the kernel, which is not registered.
    // SAFETY: as above.
    let r = unsafe { c.graph_add_kernel_node(g, &[], kernel, config(Dim3::new(32, 1, 1)), std::ptr::null()) };
    assert_eq!(r, Err(Error::INVALID_DEVICE_FUNCTION));
}

#[test]
fn ids_clones_and_the_graphviz_file() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 3);
    let g = c.graph_create(0).unwrap();
    let a = c.graph_add_node(g, host(&s[0]), &[]).unwrap();
    let b = c.graph_add_node(g, NodeOp::Empty, &[a]).unwrap();
    let child = c.graph_create(0).unwrap();
    c.graph_add_node(child, host(&s[1]), &[]).unwrap();
    let ch = c.graph_add_node(g, NodeOp::Graph(child), &[b]).unwrap();
    assert_eq!((c.graph_node_local_id(a), c.graph_node_local_id(ch)), (Ok(0), Ok(2)));
    c.graph_destroy_node(b).unwrap();
    let d = c.graph_add_node(g, NodeOp::Empty, &[a]).unwrap();
    assert_eq!(c.graph_node_local_id(d), Ok(3), "local ids are not reused");
    let id = c.graph_id(g).unwrap();
    assert_eq!(c.graph_node_tools_id(d), Ok((u64::from(id) << 32) | 3));
    let copy = c.graph_clone(g).unwrap();
    let d2 = c.graph_node_find_in_clone(d, copy).unwrap();
    assert_ne!(d2, d);
    assert_eq!(c.graph_node_type(d2), Ok(NodeType::Empty));
    assert_eq!(c.graph_node_find_in_clone(d, g), Err(Error::INVALID_VALUE), "not a clone");
    let exec = c.graph_instantiate(g, 1).unwrap();
    assert_eq!(c.graph_exec_flags(exec), Ok(1));
    assert_ne!(c.graph_exec_id(exec).unwrap(), id);

    let path = std::env::temp_dir().join(format!("lockstep-graph-{}.dot", std::process::id()));
    c.graph_debug_dot_print(g, &path).unwrap();
    let dot = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(dot.starts_with(&format!("digraph \"graph_{id}\"")), "{dot}");
    assert!(dot.contains("subgraph \"cluster_graph_") && dot.contains("HOST") && dot.contains("EMPTY"), "{dot}");
    assert!(dot.contains(&format!("\"graph_{id}_node_0\" -> \"graph_{id}_node_3\";")), "{dot}");
    let bad = std::env::temp_dir().join("lockstep-no-such-dir").join("g.dot");
    assert_eq!(c.graph_debug_dot_print(g, &bad), Err(Error::OPERATING_SYSTEM));
    c.graph_exec_destroy(exec).unwrap();
    c.graph_destroy(copy).unwrap();
    c.graph_destroy(g).unwrap();
    c.graph_destroy(child).unwrap();
}

#[test]
fn capture_into_the_programs_graph_and_update_its_dependencies() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 4);
    let data = |k: usize| &s[k] as *const Slot as *mut libc::c_void;
    let g = c.graph_create(0).unwrap();
    let first = c.graph_add_node(g, host(&s[0]), &[]).unwrap();
    let other = c.graph_add_node(g, host(&s[3]), &[]).unwrap();
    let stream = c.stream_create(0x1, 0).unwrap();
    let elsewhere = c.graph_create(0).unwrap();
    let foreign = c.graph_add_node(elsewhere, NodeOp::Empty, &[]).unwrap();
    assert_eq!(c.begin_capture_to_graph(stream, g, &[foreign], 0), Err(Error::INVALID_VALUE), "not g's node");
    c.begin_capture_to_graph(stream, g, &[first], 0).unwrap();
    c.launch_host_fn(stream, log_tag, data(1)).unwrap();
    // The next work also waits for `other`; then only for `other`.
    c.update_capture_dependencies(stream, &[other], false).unwrap();
    c.launch_host_fn(stream, log_tag, data(2)).unwrap();
    assert_eq!(c.update_capture_dependencies(stream, &[foreign], true), Err(Error::INVALID_VALUE));
    assert_eq!(c.end_capture(stream), Ok(g));
    assert_eq!(c.update_capture_dependencies(stream, &[other], true), Err(Error::ILLEGAL_STATE), "not capturing");
    assert!(LOG.lock().unwrap().is_empty(), "captured, not run");
    let nodes = c.graph_nodes(g).unwrap();
    assert_eq!(nodes.len(), 4);
    assert_eq!(c.graph_node_dependencies(nodes[2]).unwrap(), vec![first]);
    let mut deps = c.graph_node_dependencies(nodes[3]).unwrap();
    deps.sort_unstable();
    let mut want = vec![nodes[2], other];
    want.sort_unstable();
    assert_eq!(deps, want);
    // A failed capture into the program's graph leaves the graph.
    c.begin_capture_to_graph(stream, g, &[], 0).unwrap();
    assert_eq!(c.stream_synchronize(stream), Err(Error::STREAM_CAPTURE_UNSUPPORTED));
    assert_eq!(c.end_capture(stream), Err(Error::STREAM_CAPTURE_INVALIDATED));
    assert_eq!(c.graph_nodes(g).unwrap().len(), 4);
    c.graph_destroy(g).unwrap();
    c.graph_destroy(elsewhere).unwrap();
}

#[test]
fn an_executable_graphs_child_graph_takes_another_graphs_parameters() {
    static LOG: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let c = cuda();
    let s = slots(&LOG, 5);
    let child = c.graph_create(0).unwrap();
    let a = c.graph_add_node(child, host(&s[0]), &[]).unwrap();
    c.graph_add_node(child, host(&s[1]), &[a]).unwrap();
    let g = c.graph_create(0).unwrap();
    let node = c.graph_add_node(g, NodeOp::Graph(child), &[]).unwrap();
    let exec = c.graph_instantiate(g, 0).unwrap();
    let other = c.graph_create(0).unwrap();
    let b = c.graph_add_node(other, host(&s[2]), &[]).unwrap();
    c.graph_add_node(other, host(&s[3]), &[b]).unwrap();
    c.graph_exec_child_graph_set_params(exec, node, other).unwrap();
    let unlike = c.graph_create(0).unwrap();
    c.graph_add_node(unlike, host(&s[4]), &[]).unwrap();
    assert_eq!(c.graph_exec_child_graph_set_params(exec, node, unlike), Err(Error::INVALID_VALUE), "topology");
    let stream = c.stream_create(0, 0).unwrap();
    c.graph_launch(exec, stream).unwrap();
    c.stream_synchronize(stream).unwrap();
    assert_eq!(*LOG.lock().unwrap(), vec![2, 3]);
    for h in [g, child, other, unlike] {
        c.graph_destroy(h).unwrap();
    }
    c.graph_exec_destroy(exec).unwrap();
}
