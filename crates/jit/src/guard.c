/* Recovering from a fault in generated code: the worker enters compiled code through
 * lockstep_jit_guarded_call, which remembers where to come back to; when compiled code touches unmapped
 * memory (the JIT does not check accesses unless asked), the SIGSEGV handler (fault.rs) calls
 * lockstep_jit_recover, which jumps back there, and the launch reports an error instead of the process
 * dying. Only generated code (no Rust frame with anything to drop) lies between the two. */
#include <setjmp.h>
#include <stdint.h>

typedef void (*lockstep_call_fn)(void *data);

static __thread jmp_buf *guard_buf;
static __thread uint64_t guard_addr;

/* Runs f(data): 0, or 1 with *fault_addr set when compiled code faulted inside it. */
int lockstep_jit_guarded_call(lockstep_call_fn f, void *data, uint64_t *fault_addr) {
    jmp_buf buf;
    jmp_buf *outer = guard_buf;
    if (_setjmp(buf)) {
        guard_buf = outer;
        *fault_addr = guard_addr;
        return 1;
    }
    guard_buf = &buf;
    f(data);
    guard_buf = outer;
    return 0;
}

/* From the signal handler, for a fault in compiled code: back to the innermost guarded call of this
 * thread; returns only when there is none. (The handler is installed with SA_NODEFER, so the signal mask
 * needs no restoring.) */
void lockstep_jit_recover(uint64_t addr) {
    if (guard_buf) {
        guard_addr = addr;
        _longjmp(*guard_buf, 1);
    }
}
