/* virtual: classes and host code shared by virtual.cu and virtual.cpp: four
 * shape classes with a virtual measure(), each object in a 32-byte slot (the
 * vtable pointer and its fields), reached through an array of base-class
 * pointers. Kinds: mode 0 draws each object's kind at random (a warp holds
 * all four kinds), mode 1 sorts them (n/4 objects of each kind in a row, so
 * every warp is one kind). */
#include "pairs.h"
#include <math.h>
#include <new>

#define SLOT_BYTES 32

struct Shape {
  PAIRS_HD virtual float measure() const = 0;
};

struct Circle : Shape {
  float r;
  PAIRS_HD explicit Circle(float r_) : r(r_) {}
  PAIRS_HD float measure() const override { return 3.14159265f * r * r; }
};

struct Rect : Shape {
  float w, h;
  PAIRS_HD Rect(float w_, float h_) : w(w_), h(h_) {}
  PAIRS_HD float measure() const override { return w * h; }
};

struct Triangle : Shape {
  float a, b, c;
  PAIRS_HD Triangle(float a_, float b_, float c_) : a(a_), b(b_), c(c_) {}
  PAIRS_HD float measure() const override {  // Heron's formula
    float s = 0.5f * (a + b + c);
    return sqrtf(s * (s - a) * (s - b) * (s - c));
  }
};

struct Polygon : Shape {
  int sides;
  float len;
  PAIRS_HD Polygon(int sides_, float len_) : sides(sides_), len(len_) {}
  PAIRS_HD float measure() const override {  // a loop of 3..10 steps
    float acc = 0.0f;
    for (int k = 0; k < sides; k++) acc += len * len * (float)(k + 1);
    return acc / (float)sides;
  }
};

/* Builds object i of the given kind in slot (what the setup kernel and the
 * CPU side's setup loop do per object). */
static inline PAIRS_HD Shape *shape_make(void *slot, int kind, float p, float q, float s) {
  switch (kind) {
    case 0:
      return new (slot) Circle(p);
    case 1:
      return new (slot) Rect(p, q);
    case 2: {
      float lo = p > q ? p - q : q - p;
      return new (slot) Triangle(p, q, lo + (p + q - lo) * (0.1f + 0.8f * s));
    }
    default:
      return new (slot) Polygon(3 + (int)(s * 8.0f), p);
  }
}

/* Kinds and parameters of the n objects. */
static void shape_inputs(int *kind, float *p, float *q, float *s, int n, int mode) {
  lcg_t g = lcg_seed(14);
  for (int i = 0; i < n; i++) {
    kind[i] = mode == 0 ? (int)lcg_below(&g, 4) : (int)((long)i * 4 / n);
    p[i] = 0.5f + 2.0f * lcg_unit(&g);
    q[i] = 0.5f + 2.0f * lcg_unit(&g);
    s[i] = lcg_unit(&g);
  }
}

static int shape_report(const int *kind, const float *p, const float *q, const float *s, const float *out,
                        int n, int mode) {
  char *slots = (char *)malloc((size_t)n * SLOT_BYTES);
  double sum = 0;
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) {
    Shape *o = shape_make(slots + (size_t)i * SLOT_BYTES, kind[i], p[i], q[i], s[i]);
    float want = o->measure();
    if (out[i] != want) FAIL("object %d (kind %d) measured %g, expected %g", i, kind[i], out[i], want);
    sum += out[i];
    count[kind[i]]++;
  }
  printf("virtual n=%d kinds=%s\ncircles %d rects %d triangles %d polygons %d\nchecksum %.4f\nPASSED\n", n,
         mode == 0 ? "mixed" : "sorted", count[0], count[1], count[2], count[3], sum);
  free(slots);
  return 0;
}
