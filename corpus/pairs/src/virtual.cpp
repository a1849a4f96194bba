/* virtual (CPU side): the objects are built in 32-byte slots before the
 * traced function (as virtual.cu's setup kernel does); iteration i of
 * measure_step's loop is thread i of measure_all: one virtual call.
 * Traced: measure_step._omp_fn.0 (extern "C": an unmangled name). */
#include "virtual.h"

extern "C" PAIRS_TRACED void measure_step(Shape *const *objs, float *out, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) out[i] = objs[i]->measure();
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 16384);
  const int mode = argc > 2 && argv[2][0] == '1' ? 1 : 0;
  int *kind = (int *)malloc(n * sizeof(int));
  float *p = (float *)malloc(n * sizeof(float)), *q = (float *)malloc(n * sizeof(float));
  float *s = (float *)malloc(n * sizeof(float));
  shape_inputs(kind, p, q, s, n, mode);
  char *slots = (char *)pairs_alloc((size_t)n * SLOT_BYTES);
  Shape **objs = (Shape **)pairs_alloc(n * sizeof(Shape *));
  float *out = (float *)pairs_alloc(n * sizeof(float));
  for (int i = 0; i < n; i++) objs[i] = shape_make(slots + (size_t)i * SLOT_BYTES, kind[i], p[i], q[i], s[i]);
  measure_step(objs, out, n);
  return shape_report(kind, p, q, s, out, n, mode);
}
