/* halfdiv (CPU side): iteration i of halfdiv_step's parallel loop is CUDA thread i of halfdiv.cu.
 * Traced: halfdiv_step._omp_fn.0. */
#include "halfdiv.h"

PAIRS_TRACED void halfdiv_step(const unsigned *in, unsigned *out, int n, int k) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) out[i] = (i & 1) ? chain_odd(in[i], k) : chain_even(in[i], k);
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 8192), k = arg_int(argc, argv, 2, 256);
  unsigned *in = (unsigned *)pairs_alloc(n * sizeof(unsigned)), *out = (unsigned *)pairs_alloc(n * sizeof(unsigned));
  lcg_t g = lcg_seed(11);
  for (int i = 0; i < n; i++) in[i] = lcg_next(&g);
  halfdiv_step(in, out, n, k);
  return halfdiv_report(in, out, n, k);
}
