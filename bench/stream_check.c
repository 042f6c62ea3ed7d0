/* An independent STREAM-style check of host memory bandwidth, written apart from the probe so the
 * two can be compared (issue 4's acceptance: the probe within 20% of an independent measurement).
 * OpenMP instead of std::thread, a different array size, gettimeofday instead of steady_clock,
 * no hwloc binding; same counting rule as STREAM (copy moves 2 arrays, triad 3).
 *
 *   cc -O2 -fopenmp bench/stream_check.c -o stream_check && ./stream_check [doubles per array]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static double now(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 250000000L; /* 2 GB per array: > 4 x a 480 MiB L3 */
  const int reps = 10;
  double* a = malloc(sizeof(double) * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  double* c = malloc(sizeof(double) * (size_t)n);
  if (!a || !b || !c) {
    fprintf(stderr, "stream_check: cannot allocate 3 x %ld doubles\n", n);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  double best_copy = 1e30, best_triad = 1e30;
  for (int k = 0; k < reps; ++k) {
    double t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) c[i] = a[i];
    t = now() - t;
    if (k > 0 && t < best_copy) best_copy = t;
    t = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    t = now() - t;
    if (k > 0 && t < best_triad) best_triad = t;
  }
  const double bytes = (double)n * sizeof(double);
  printf("stream_check: %d threads, %.0f MiB per array, best of %d\n", omp_get_max_threads(), bytes / 1048576.0,
         reps - 1);
  printf("Copy:  %.1f GB/s\nTriad: %.1f GB/s\n", 2 * bytes / best_copy / 1e9, 3 * bytes / best_triad / 1e9);
  printf("check: a[n/2] = %g\n", a[n / 2]);
  free(a);
  free(b);
  free(c);
  return 0;
}
