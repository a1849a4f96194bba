//! The part of CUDA's device runtime (`libcudadevrt.a`) that programs reach for grid-wide synchronization:
//! `cudaCGGetIntrinsicHandle` and `cudaCGSynchronize`, which Numba's `cuda.cg.this_grid().sync()` calls (newer
//! nvcc inlines the same barrier, `device::Backend::launch_cooperative`). The archive holds only GPU machine
//! code, so lockstep links its own PTX for them into a module that declares them without defining them.

use std::borrow::Cow;

/// The grid's handle is the address of its workspace (`%envreg1:%envreg2`; 0 outside cooperative launches).
/// `cudaCGSynchronize` is the barrier nvcc 13 inlines for `this_grid().sync()`: the CTA meets, its first
/// thread adds to the barrier word at offset 4 (CTA 0 adds `0x80000001 - CTAs`, the others 1, so the word's
/// top bit flips when all have arrived) and polls until it flips, and the CTA meets again. A null handle
/// traps, as cooperative groups do.
const DEVICE_RUNTIME: &str = r#".version 7.0
.target sm_70
.address_size 64

.visible .func (.param .b64 handle) cudaCGGetIntrinsicHandle(.param .b32 scope)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	mov.u32 %r1, %envreg1;
	mov.u32 %r2, %envreg2;
	cvt.u64.u32 %rd1, %r1;
	cvt.u64.u32 %rd2, %r2;
	shl.b64 %rd1, %rd1, 32;
	or.b64 %rd3, %rd1, %rd2;
	st.param.b64 [handle], %rd3;
	ret;
}

.visible .func (.param .b32 status) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)
{
	.reg .pred %p<5>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [handle];
	setp.ne.s64 %p1, %rd1, 0;
	@%p1 bra HAVE;
	trap;
HAVE:
	barrier.sync 0;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	or.b32 %r1, %r1, %r2;
	or.b32 %r1, %r1, %r3;
	setp.ne.s32 %p2, %r1, 0;
	@%p2 bra DONE;
	add.s64 %rd2, %rd1, 4;
	mov.u32 %r4, %nctaid.x;
	mov.u32 %r5, %nctaid.y;
	mov.u32 %r6, %nctaid.z;
	mul.lo.s32 %r4, %r4, %r5;
	mul.lo.s32 %r4, %r4, %r6;
	mov.u32 %r7, %ctaid.x;
	mov.u32 %r8, %ctaid.y;
	mov.u32 %r9, %ctaid.z;
	or.b32 %r7, %r7, %r8;
	or.b32 %r7, %r7, %r9;
	setp.eq.s32 %p3, %r7, 0;
	sub.s32 %r10, -2147483647, %r4;
	selp.b32 %r11, %r10, 1, %p3;
	atom.add.release.gpu.u32 %r12, [%rd2], %r11;
SPIN:
	ld.acquire.gpu.u32 %r13, [%rd2];
	xor.b32 %r14, %r13, %r12;
	setp.gt.s32 %p4, %r14, -1;
	@%p4 bra SPIN;
DONE:
	barrier.sync 0;
	st.param.b32 [status], 0;
	ret;
}
"#;

/// `text` with the device runtime's PTX linked in where it declares one of its functions without defining
/// it; `text` itself otherwise.
pub fn link<'a>(text: &'a str, name: &str) -> Result<Cow<'a, str>, String> {
    let declares = |f: &str| text.lines().any(|l| l.contains(".extern") && l.contains(".func") && l.contains(f));
    if !["cudaCGGetIntrinsicHandle", "cudaCGSynchronize"].iter().any(|f| declares(f)) {
        return Ok(Cow::Borrowed(text));
    }
    let units = [
        ptxlink::Unit { name: name.to_string(), text: text.to_string() },
        ptxlink::Unit { name: "lockstep's device runtime".into(), text: DEVICE_RUNTIME.into() },
    ];
    ptxlink::link(&units).map(Cow::Owned)
}
