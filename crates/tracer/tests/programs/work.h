/* work(n): exactly 3*n + 2 instructions for n >= 1 (xor; n x {add, dec, jnz}; ret), returns n(n+1)/2.
 * Written in assembly so that the instruction count does not depend on the compiler. */
__asm__(".text\n"
        ".globl work\n"
        ".type work, @function\n"
        "work:\n"
        "  xor %eax, %eax\n"
        "1:\n"
        "  add %rdi, %rax\n"
        "  dec %rdi\n"
        "  jnz 1b\n"
        "  ret\n"
        ".size work, .-work\n");
#ifdef __cplusplus
extern "C"
#endif
long work(long n);
