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
 * Large outputs (more elements than sketch_elems) are ranked on a sketch
 * and confirmed exactly: the Gram terms above are computed on a fixed,
 * deterministic selection of each output (chunks of 16 elements at jittered
 * strides, the same for sets and candidates; small outputs whole), which
 * gives each (set, candidate) an estimate and, with the candidates' exact
 * energies, a proven upper bound on the exact SNR (an error energy summed
 * over a subset of the elements is at most the full one). The candidates
 * near the top of the sketch are then scored exactly by a direct pass over
 * all elements, and again any other whose bound does not clear the exact
 * best by min_margin_db, until every candidate left is proven more than
 * min_margin_db below the best. The best, the ambiguity and the scores of
 * the confirmed candidates are therefore those of the exact method; the
 * runner-up and margin are the best among the confirmed (an unconfirmed
 * candidate's exact SNR is at most choice.others_below_db, itself below the
 * best by more than min_margin_db). Unconfirmed scores are the sketch's,
 * flagged `estimated`.
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
#include <stdint.h>

/* One set of output vectors. An output whose `read` is NULL has no data: it
 * must still agree in size but is left out of the scores. */
/* The raw bytes of a dense output: identical sets are then found without
 * converting their values. */
typedef struct etc_pair_raw {
	const void *data; /* NULL: compare the values read */
	size_t size;
} etc_pair_raw;

/* A CRC-32 to continue over the raw bytes of a candidate's output in the
 * first comparison of etc_pair_infer_compare_ that reads them (float32
 * outputs; a checksum of the file the bytes come from, e.g. an .npz
 * member, checked by the caller): in, pending and the CRC so far; out,
 * done and the CRC continued over every byte of the output. */
typedef struct etc_pair_crc {
	uint32_t crc;
	bool pending, done;
} etc_pair_crc;

typedef struct etc_pair_set {
	const etc_values *outputs;
	const etc_pair_raw *raw;   /* per output, or NULL */
	const char *const *shapes; /* per output ("[1, 10]"), or NULL: counts only */
	size_t count;
	etc_pair_crc *crc; /* per output, or NULL (candidates of etc_pair_infer_compare_) */
} etc_pair_set;

/* The score of one (set, candidate). */
typedef struct etc_pair_score {
	bool usable;     /* comparable (same outputs and sizes) */
	bool partial;    /* some outputs agree in size and shape: scored on those */
	bool refined;    /* error energy from a direct pass, not the Gram terms */
	bool estimated;  /* not confirmed: snr_db and cosine are the sketch's
	                    estimates, the exact SNR is at most bound_db */
	double bound_db; /* proven upper bound on the exact SNR (= snr_db when exact) */
	double snr_db;   /* pooled; +inf when equal, NaN when nothing had data */
	double cosine;   /* pooled sum ra / sqrt(sum aa sum rr); NaN for zero norms */
	double noise;    /* sum (a - r)^2 over the outputs */
	double signal;   /* sum r^2 over the outputs */
} etc_pair_score;

/* The inference for one set. */
typedef struct etc_pair_choice {
	long best, second;     /* candidate indices, -1 when none */
	double margin_db;      /* SNR of best minus SNR of second; +inf without a second */
	bool ambiguous;        /* margin below min_margin_db, best SNR below floor_db,
	                          or nothing to score */
	size_t usable;         /* comparable candidates */
	bool partial;          /* none was: ranked among the partly comparable */
	size_t confirmed;      /* ranked candidates scored exactly (all of them without a sketch) */
	bool second_estimated; /* no runner-up was confirmed: `second` is the first
	                          on the sketch and margin_db the proven lower bound
	                          best - others_below_db (confirm_top 1 only) */
	double others_below_db; /* the other ranked candidates' exact SNR is at most
	                           this (proven); -inf when every one was confirmed */
} etc_pair_choice;

typedef struct etc_pair_options {
	double min_margin_db; /* 1 dB */
	double floor_db;      /* 0 dB: no candidate is closer than its own energy */
	size_t block_sets;    /* sets converted per product (0: 128) */
	size_t block_elems;   /* elements per product (0: 4096) */
	size_t sketch_elems;  /* elements sampled per large output (0: 4096) */
	bool exact;           /* no sketch: every pair scored on all elements */
	size_t confirm_top;   /* candidates confirmed first, on the sketch: 2 (the
	                         runner-up exact too), or 1 (the runner-up only when
	                         it is not proven far; one pass less) */
} etc_pair_options;

void etc_pair_options_init_(etc_pair_options *o);

/*
 * The values' read functions must be safe to call from several threads at
 * once (those of etcompare/metrics.h are): the blocks of the product are
 * converted over the threads, and with large outputs the exact
 * confirmation runs sets in parallel (ETC_THREADS).
 *
 * Scores every set against every candidate: scores[i * m + k], and the
 * choice of each set in choice[i]. Memory beyond the outputs is one block
 * of sets and one of candidates in double (block_sets + m) x block_elems,
 * and the n x m Gram terms of one output; with large outputs also the
 * n x m bounds, lists and exact sums of the confirmation (about 56 bytes
 * per pair). Ties rank by candidate index; a
 * NaN score ranks below every number.
 * @return 0, ETC_ERR_NOMEM or ETC_ERR_USAGE.
 */
int etc_pair_infer_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                    const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                    etc_error *err);

/*
 * etc_pair_infer_ (the same choices, ambiguity, margins and candidates) that
 * also compares every set with the candidate chosen for it, output by
 * output (etc_metrics_compare of candidate output p as the reference with
 * set output p as the actual): metrics[at_i + p], where at_i is the sum of
 * the counts of the sets before i, and compared[at_i + p] true when that
 * comparison was made (a best was chosen, both outputs have data and they
 * agree in size and shape). This is what a caller that compares each run
 * with its inferred reference wants, at the cost of about one comparison a
 * run more than the comparisons alone for large outputs, not two: the
 * exact confirmation of the best is that comparison, and the runner-up's
 * error energy is summed in the same read of the run (pairing.c, "the
 * confirmation fused with the comparisons"). Scores and choices can differ
 * from etc_pair_infer_'s in the last bits of the confirmed SNRs (the
 * comparison sums in another order, compensated). Sets are confirmed one
 * after the other, each comparison over the threads.
 * @return 0, ETC_ERR_NOMEM or ETC_ERR_USAGE.
 */
int etc_pair_infer_compare_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                            const etc_pair_options *opt, etc_pair_score *scores,
                            etc_pair_choice *choice, etc_metrics *metrics, bool *compared,
                            etc_error *err);

#endif
