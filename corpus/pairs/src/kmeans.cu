// kmeans (CUDA side): the assignment step, one point per thread: a loop over
// the clusters, each a loop over the features (coalesced: feature-major),
// keeping the nearest. CPU side: kmeans.c.
#include "kmeans.h"

__global__ void kmeans_assign(const float *features, const float *clusters, int *membership,
                              int npoints, int nfeatures, int nclusters) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < npoints) {
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
  const int block = 256;
  if (nclusters > 64) FAIL("at most 64 clusters");
  float *features = (float *)malloc(npoints * nfeatures * sizeof(float));
  float *clusters = (float *)malloc(nclusters * nfeatures * sizeof(float));
  int *membership = (int *)malloc(npoints * sizeof(int));
  kmeans_inputs(features, clusters, npoints, nfeatures, nclusters);
  float *dfeat, *dclus;
  int *dmem;
  CHECK(cudaMalloc(&dfeat, npoints * nfeatures * sizeof(float)));
  CHECK(cudaMalloc(&dclus, nclusters * nfeatures * sizeof(float)));
  CHECK(cudaMalloc(&dmem, npoints * sizeof(int)));
  CHECK(cudaMemcpy(dfeat, features, npoints * nfeatures * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dclus, clusters, nclusters * nfeatures * sizeof(float), cudaMemcpyHostToDevice));
  kmeans_assign<<<(npoints + block - 1) / block, block>>>(dfeat, dclus, dmem, npoints, nfeatures, nclusters);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(membership, dmem, npoints * sizeof(int), cudaMemcpyDeviceToHost));
  return kmeans_report(features, clusters, membership, npoints, nfeatures, nclusters);
}
