//! `printf` output across barriers comes in the emulator's order on the JIT too: by barrier phase, then
//! warp, then each thread's k-th call, then lane. The kernel's only yields are plain `bar.sync 0`, so the
//! generated loop releases the CTA itself and must count the phases as the runtime does.

mod common;

use device::{Backend, Dim3};

/// Each thread prints "p<phase> t<tid>" before the first barrier, between the two, and after the second;
/// threads of the second warp print twice in the middle phase.
const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 $str[10] = {112, 37, 100, 32, 116, 37, 100, 10, 0, 0};
.visible .entry phases()
{
    .local .align 8 .b8 __local_depot0[8];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .pred %p<2>;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
    mov.u32 %r1, %tid.x;
    add.u64 %rd1, %SP, 0;
    add.u64 %rd2, %SPL, 0;
    mov.u64 %rd3, $str;
    cvta.global.u64 %rd4, %rd3;
    mov.u32 %r2, 0;
    st.local.v2.u32 [%rd2], {%r2, %r1};
    { .param .b64 param0; st.param.b64 [param0+0], %rd4; .param .b64 param1; st.param.b64 [param1+0], %rd1;
      .param .b32 retval0; call.uni (retval0), vprintf, (param0, param1); }
    bar.sync 0;
    mov.u32 %r2, 1;
    st.local.v2.u32 [%rd2], {%r2, %r1};
    { .param .b64 param0; st.param.b64 [param0+0], %rd4; .param .b64 param1; st.param.b64 [param1+0], %rd1;
      .param .b32 retval0; call.uni (retval0), vprintf, (param0, param1); }
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra SKIP;
    { .param .b64 param0; st.param.b64 [param0+0], %rd4; .param .b64 param1; st.param.b64 [param1+0], %rd1;
      .param .b32 retval0; call.uni (retval0), vprintf, (param0, param1); }
SKIP:
    bar.sync 0;
    mov.u32 %r2, 2;
    st.local.v2.u32 [%rd2], {%r2, %r1};
    { .param .b64 param0; st.param.b64 [param0+0], %rd4; .param .b64 param1; st.param.b64 [param1+0], %rd1;
      .param .b32 retval0; call.uni (retval0), vprintf, (param0, param1); }
    ret;
}
"#;

fn run(backend: &mut dyn Backend, ctas: u32) -> Vec<u8> {
    let module = ir::compile(PTX).expect("the test kernel compiles");
    let (grid, block) = (Dim3::new(ctas, 1, 1), Dim3::new(64, 1, 1));
    common::launch(backend, &module, "phases", grid, block, 0, &[]).expect("runs").1
}

#[test]
fn printf_order_across_counted_barriers() {
    let expected = run(&mut emu::Emulator::new(), 3);
    let text = String::from_utf8_lossy(&expected);
    // The emulator's order, spelled out for the first CTA: phase 0 of both warps before phase 1.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 * (64 * 3 + 32));
    assert_eq!(lines[0], "p0 t0");
    assert_eq!(lines[63], "p0 t63");
    assert_eq!(lines[64], "p1 t0");
    for threads in [1, 2] {
        let mut jit = jit::Jit::new(jit::Options { threads, ..jit::Options::default() });
        let got = run(&mut jit, 3);
        assert_eq!(String::from_utf8_lossy(&got), text, "{threads} worker(s)");
    }
}
