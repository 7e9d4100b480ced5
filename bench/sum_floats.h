/*
 * sum_floats.h - the benchmarks' one-core read limit (bench_metrics, limit).
 */
#ifndef ETC_BENCH_SUM_FLOATS_H
#define ETC_BENCH_SUM_FLOATS_H

#include <stddef.h>

/*
 * The one-core read limit: a float32 sum with four independent vector
 * accumulators (AVX2 where the CPU has it), i.e. the least work per byte a
 * pass that reads every byte can do.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static double sum_floats_avx2(const float *p, size_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		s0 = _mm256_add_ps(s0, _mm256_loadu_ps(p + i));
		s1 = _mm256_add_ps(s1, _mm256_loadu_ps(p + i + 8));
		s2 = _mm256_add_ps(s2, _mm256_loadu_ps(p + i + 16));
		s3 = _mm256_add_ps(s3, _mm256_loadu_ps(p + i + 24));
	}
	float lanes[8];
	_mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
	double t = 0;
	for (int k = 0; k < 8; k++)
		t += lanes[k];
	for (; i < n; i++)
		t += p[i];
	return t;
}
#endif

static double sum_floats(const float *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2"))
		return sum_floats_avx2(p, n);
#endif
	float s[16] = {0};
	size_t i = 0;
	for (; i + 16 <= n; i += 16)
		for (int k = 0; k < 16; k++)
			s[k] += p[i + k];
	double t = 0;
	for (; i < n; i++)
		t += p[i];
	for (int k = 0; k < 16; k++)
		t += s[k];
	return t;
}

#endif
