/* kmeans (CPU side): iteration p of kmeans_step's loop is thread p of
 * kmeans.cu's assignment kernel. Traced: kmeans_step._omp_fn.0. */
#include "kmeans.h"

PAIRS_TRACED void kmeans_step(const float *features, const float *clusters, int *membership,
                              int npoints, int nfeatures, int nclusters) {
#pragma omp parallel for schedule(static)
  for (int p = 0; p < npoints; p++) {
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
    membership[p] = index;
  }
}

int main(int argc, char **argv) {
  const int npoints = arg_int(argc, argv, 1, 8192);
  const int nfeatures = arg_int(argc, argv, 2, 8);
  const int nclusters = arg_int(argc, argv, 3, 5);
  if (nclusters > 64) FAIL("at most 64 clusters");
  float *features = (float *)pairs_alloc(npoints * nfeatures * sizeof(float));
  float *clusters = (float *)pairs_alloc(nclusters * nfeatures * sizeof(float));
  int *membership = (int *)pairs_alloc(npoints * sizeof(int));
  kmeans_inputs(features, clusters, npoints, nfeatures, nclusters);
  kmeans_step(features, clusters, membership, npoints, nfeatures, nclusters);
  return kmeans_report(features, clusters, membership, npoints, nfeatures, nclusters);
}
