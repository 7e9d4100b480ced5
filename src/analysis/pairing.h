/*
 * pairing.h - which reference set a set of output vectors matches: the
 * inference behind `--pair-by content` (runs whose ETDump carries no
 * bundled_input_index), reusable wherever N sets of vectors must each be
 * matched with one of M candidate sets (e.g. which test case's inputs a
 * run used).
 *
 * The score of candidate k for set i is the SNR pooled over the outputs:
 *   SNR = 10 log10( sum_p sum r^2 / sum_p sum (a - r)^2 )   (dB)
 * (r: candidate k's values, a: set i's values, p: output), i.e. the
 * candidate that leaves the least error energy relative to its own signal.
 * The cosine is pooled the same way. Both come from the Gram terms sum r*a
 * of one matrix product of sets x candidates per output (OpenBLAS, double),
 * plus each vector's sum of squares: sum (a - r)^2 = sum a^2 - 2 sum ra +
 * sum r^2. Where that difference cancels (the error energy below 1e-7 of
 * the energies: an SNR above ~67 dB) it is recomputed by a direct pass
 * over (a - r), so near-identical pairs get exact numbers.
 *
 * Sets with identical values and shapes (the same input run again) are
 * found by a hash pass, confirmed by a full comparison, and scored once.
 *
 * Set and candidate are comparable only when they have the same number of
 * outputs and, output by output, the same element count (and the same
 * shape text when both give one). Only when no candidate is comparable are
 * the partly comparable ones ranked (scored on the outputs that agree in
 * size and shape), and the choice says so; a set with neither has none.
 */
#ifndef ETC_ANALYSIS_PAIRING_H
#define ETC_ANALYSIS_PAIRING_H

#include "etcompare/common.h"
#include "etcompare/metrics.h"

#include <stdbool.h>
#include <stddef.h>

/* One set of output vectors. An output whose `read` is NULL has no data: it
 * must still agree in size but is left out of the scores. */
/* The raw bytes of a dense output: identical sets are then found without
 * converting their values. */
typedef struct etc_pair_raw {
	const void *data; /* NULL: compare the values read */
	size_t size;
} etc_pair_raw;

typedef struct etc_pair_set {
	const etc_values *outputs;
	const etc_pair_raw *raw;   /* per output, or NULL */
	const char *const *shapes; /* per output ("[1, 10]"), or NULL: counts only */
	size_t count;
} etc_pair_set;

/* The score of one (set, candidate). */
typedef struct etc_pair_score {
	bool usable;   /* comparable (same outputs and sizes) */
	bool partial;  /* some outputs agree in size and shape: scored on those */
	bool refined;  /* error energy from a direct pass, not the Gram terms */
	double snr_db; /* pooled; +inf when equal, NaN when nothing had data */
	double cosine; /* pooled sum ra / sqrt(sum aa sum rr); NaN for zero norms */
	double noise;  /* sum (a - r)^2 over the outputs */
	double signal; /* sum r^2 over the outputs */
} etc_pair_score;

/* The inference for one set. */
typedef struct etc_pair_choice {
	long best, second; /* candidate indices, -1 when none */
	double margin_db;  /* SNR of best minus SNR of second; +inf without a second */
	bool ambiguous;    /* margin below min_margin_db, best SNR below floor_db,
	                      or nothing to score */
	size_t usable;     /* comparable candidates */
	bool partial;      /* none was: ranked among the partly comparable */
} etc_pair_choice;

typedef struct etc_pair_options {
	double min_margin_db; /* 1 dB */
	double floor_db;      /* 0 dB: no candidate is closer than its own energy */
	size_t block_sets;    /* sets converted per product (0: 128) */
	size_t block_elems;   /* elements per product (0: 4096) */
} etc_pair_options;

void etc_pair_options_init_(etc_pair_options *o);

/*
 * Scores every set against every candidate: scores[i * m + k], and the
 * choice of each set in choice[i]. Memory beyond the outputs is one block
 * of sets and one of candidates in double (block_sets + m) x block_elems,
 * and the n x m Gram terms of one output. Ties rank by candidate index; a
 * NaN score ranks below every number.
 * @return 0, ETC_ERR_NOMEM or ETC_ERR_USAGE.
 */
int etc_pair_infer_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                    const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                    etc_error *err);

#endif
