"""CUDA graphs from cuda.core under lockstep (`lockstep exec -- python cuda_core_graphs.py`): kernels compiled
by NVRTC, recorded by stream capture (cuda.core's GraphBuilder) and built node by node (GraphDefinition:
kernel, set, copy, host callback, join, allocation, free and event nodes), instantiated, uploaded and launched through the driver API;
results checked against NumPy. Prints one line per check and "cuda.core graphs: ok"."""

import numpy as np
from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch
from cuda.core.graph import GraphDefinition

SOURCE = r"""
extern "C" __global__ void add_one(float *y, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += 1.0f;
}
extern "C" __global__ void scale(float *y, float a, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}
"""


def main():
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(v) for v in dev.compute_capability)
    options = ProgramOptions(std="c++17", arch=f"sm_{arch}")
    module = Program(SOURCE, code_type="c++", options=options).compile("ptx")
    add_one, scale = module.get_kernel("add_one"), module.get_kernel("scale")

    n = 4096
    pinned = LegacyPinnedMemoryResource()
    host_buf = pinned.allocate(n * 4, stream=stream)
    host = np.from_dlpack(host_buf).view(np.float32)[:n]
    host[:] = np.arange(n, dtype=np.float32)
    want = host.copy()
    d = dev.allocate(n * 4, stream=stream)
    d.copy_from(host_buf, stream=stream)
    config = LaunchConfig(grid=n // 256, block=256)

    # Stream capture: two launches recorded (not run), then the graph run twice.
    builder = stream.create_graph_builder()
    builder.begin_building()
    launch(builder, config, add_one, d, np.uint64(n))
    launch(builder, config, scale, d, np.float32(2.0), np.uint64(n))
    builder.end_building()
    graph = builder.complete()
    d.copy_to(host_buf, stream=stream)
    stream.sync()
    if not np.array_equal(host, want):
        raise SystemExit("graph builder: the captured launches ran while capturing")
    graph.upload(stream)
    graph.launch(stream)
    graph.launch(stream)
    for _ in range(2):
        want = (want + 1) * 2
    d.copy_to(host_buf, stream=stream)
    stream.sync()
    if not np.array_equal(host, want):
        raise SystemExit(f"graph builder: mismatch: {host[:4]} against {want[:4]}")
    print("graph builder (stream capture): ok")

    # Node by node: d = 0 (set), d += 1, then d *= 3 and a host callback after it, joined, then a copy of d
    # into the pinned buffer.
    calls = []
    definition = GraphDefinition()
    cleared = definition.memset(d, np.uint32(0), n)
    added = cleared.launch(config, add_one, d, np.uint64(n))
    scaled = added.launch(config, scale, d, np.float32(3.0), np.uint64(n))
    called = added.callback(lambda: calls.append(1))
    joined = definition.join(scaled, called)
    joined.memcpy(host_buf, d, n * 4)
    executable = definition.instantiate()
    host[:] = -1
    executable.launch(stream)
    stream.sync()
    if not np.all(host == 3.0) or calls != [1]:
        raise SystemExit(f"graph definition: mismatch: {host[:4]}, callbacks {calls}")
    print("graph definition (set, kernel, callback, join, copy nodes): ok")

    # Graph memory and events: a scratch buffer allocated by the graph, set to 5, incremented, copied out and
    # freed by the graph (so that it can run again), with an event recorded after the increment.
    definition = GraphDefinition()
    alloc = definition.allocate(n * 4)
    scratch = alloc.dptr
    cleared = alloc.memset(scratch, np.uint32(0x40A00000), n)  # 5.0f
    added = cleared.launch(config, add_one, scratch, np.uint64(n))
    done = dev.create_event()
    recorded = added.record(done)
    copied = recorded.memcpy(host_buf, scratch, n * 4)
    copied.deallocate(scratch)
    executable = definition.instantiate()
    for _ in range(2):
        host[:] = -1
        executable.launch(stream)
        stream.sync()
        if not np.all(host == 6.0) or not done.is_done:
            raise SystemExit(f"graph memory: {host[:4]}, event done {done.is_done}")
    print("graph definition (allocation, free and event record nodes): ok")
    print("cuda.core graphs: ok")


if __name__ == "__main__":
    main()
