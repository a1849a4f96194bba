/* Functions whose instruction counts and memory accesses are known exactly, written in assembly so that they
 * do not depend on the compiler:
 *   work(n), work_a(n), work_b(n): 3n + 2 instructions for n >= 1 (xor; n x {add, dec, jnz}; ret); the loop is
 *     one basic block of 3 instructions executed n times.
 *   load_c(p), load_s(p): 2 instructions, one 4-byte load from p (then ret). Two copies so that the coalesced
 *     and the strided loads are reported as different functions. */
#define FUSE_WORK(name)                   \
    ".globl " #name "\n"                  \
    ".type " #name ", @function\n" #name  \
    ":\n"                                 \
    "  xor %eax, %eax\n"                  \
    "1:\n"                                \
    "  add %rdi, %rax\n"                  \
    "  dec %rdi\n"                        \
    "  jnz 1b\n"                          \
    "  ret\n"                             \
    ".size " #name ", .-" #name "\n"
#define FUSE_LOAD(name)                   \
    ".globl " #name "\n"                  \
    ".type " #name ", @function\n" #name  \
    ":\n"                                 \
    "  movl (%rdi), %eax\n"               \
    "  ret\n"                             \
    ".size " #name ", .-" #name "\n"
__asm__(".text\n" FUSE_WORK(work) FUSE_WORK(work_a) FUSE_WORK(work_b) FUSE_LOAD(load_c) FUSE_LOAD(load_s));
long work(long n);
long work_a(long n);
long work_b(long n);
int load_c(const int *p);
int load_s(const int *p);
