// Host wrappers exported by second.cu.
#pragma once
void run_second(int* d, int n);
int second_factor_sum();
