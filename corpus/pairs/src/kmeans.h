/* kmeans: host code shared by kmeans.cu and kmeans.c: the assignment step of
 * k-means (Rodinia's kmeans kernel): npoints points of nfeatures floats,
 * stored feature-major (features[f * npoints + p], Rodinia's transposed
 * layout for the GPU), nclusters centres (clusters[c * nfeatures + f]). The
 * points are drawn around the centres, with noise, so the nearest centre
 * varies from point to point. */
#include "pairs.h"

static void kmeans_inputs(float *features, float *clusters, int npoints, int nfeatures, int nclusters) {
  lcg_t g = lcg_seed(11);
  for (int c = 0; c < nclusters; c++)
    for (int f = 0; f < nfeatures; f++) clusters[c * nfeatures + f] = lcg_unit(&g) * 4.0f;
  for (int p = 0; p < npoints; p++) {
    int c = (int)lcg_below(&g, (uint32_t)nclusters);
    for (int f = 0; f < nfeatures; f++)
      features[f * npoints + p] = clusters[c * nfeatures + f] + (lcg_unit(&g) - 0.5f) * 3.0f;
  }
}

/* The nearest centre of point p, as one thread finds it. */
static inline PAIRS_HD int kmeans_nearest(const float *features, const float *clusters, int npoints,
                                          int nfeatures, int nclusters, int p) {
  int index = 0;
  float min_dist = 3.0e38f;
  for (int c = 0; c < nclusters; c++) {
    float dist = 0.0f;
    for (int f = 0; f < nfeatures; f++) {
      float d = features[f * npoints + p] - clusters[c * nfeatures + f];
      dist += d * d;
    }
    if (dist < min_dist) {
      min_dist = dist;
      index = c;
    }
  }
  return index;
}

static int kmeans_report(const float *features, const float *clusters, const int *membership,
                         int npoints, int nfeatures, int nclusters) {
  int counts[64] = {0};
  for (int p = 0; p < npoints; p++) {
    int want = kmeans_nearest(features, clusters, npoints, nfeatures, nclusters, p);
    if (membership[p] != want) FAIL("membership[%d] = %d, expected %d", p, membership[p], want);
    counts[want]++;
  }
  printf("kmeans points=%d features=%d clusters=%d\nsizes", npoints, nfeatures, nclusters);
  for (int c = 0; c < nclusters; c++) printf(" %d", counts[c]);
  printf("\nPASSED\n");
  return 0;
}
