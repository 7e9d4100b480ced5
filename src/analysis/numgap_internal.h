/*
 * numgap_internal.h - the state of one numeric gap run shared by its files
 * (numgap.c, numgap_gather.c, numgap_align.c, numgap_rows.c,
 * numgap_check.c): items, their output tensors, the rows' read contexts,
 * struct etc_numgap, and the functions that cross those files.
 * numgap_private.h stays the part the unit tests and benchmark see.
 */
#ifndef ETC_NUMGAP_INTERNAL_H
#define ETC_NUMGAP_INTERNAL_H

#include "etcompare/numgap.h"
#include "etcompare/accuracy.h"
#include "analysis/compare_private.h"
#include "analysis/numgap_compare.h"
#include "analysis/numgap_private.h"
#include "analysis/values_private.h"
#include "core/internal.h"
#include "core/fmt.h"
#include "format/npz_private.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One intermediate output record: an event's debug data, or one .npz array. */
typedef struct item {
	int side;
	uint32_t order;                /* execution (or file) order on its side */
	const etc_inspector_event *ev; /* NULL for an .npz array */
	const char *name;              /* event name or array name */
	int64_t *handles;              /* ascending, unique */
	uint32_t nh;
	uint32_t first, nout; /* outputs: tensors[first .. first+nout) */
	/* a reference graph's node: its re-run on the runtime's inputs */
	const char *local_note; /* NULL or what stood in, why no re-run */
	uint32_t local_inputs, local_standins;
} item;

typedef struct otensor {
	etc_tensor t;
	bool has_data;
	etc_npz_crc check; /* an .npz array's CRC-32, verified in the comparison or at the end */
	char why[128];     /* when !has_data */
	bool has_local;    /* a reference graph's re-run output (local), same shape as t */
	etc_tensor local;
	/* or, when the runtime output was plain (float, same shape), the local
	 * metrics computed in the run against the runtime data at local_vs */
	bool has_local_m;
	etc_metrics local_m;
	const uint8_t *local_vs;
	/* a reference graph's output under drop_reference_values: the row's
	 * comparison made as the node ran (pre, against runtime tensor
	 * pre_act of the gather), its values summarized (preview) and not kept
	 * (dropped: t.data NULL, has_data still true) */
	uint8_t stream; /* ETC_NG_KEPT, _PRE or _UNUSED */
	bool dropped;
	etc_metrics pre_m;
	uint32_t pre_act;      /* index in the gather's tensors */
	const uint8_t *pre_vs; /* its data */
	const struct etc_ng_preview *preview;
} otensor;

/* What became of a reference graph's output under drop_reference_values. */
enum {
	ETC_NG_KEPT = 0, /* values kept: compared after alignment (or not streaming) */
	ETC_NG_PRE,      /* compared as the node ran (otensor.pre_m) */
	ETC_NG_UNUSED    /* no row compares its values: not kept */
};

/* A reference output not kept: its first values and the summary of all. */
typedef struct etc_ng_preview {
	etc_tensor t; /* data: the first ETC_NUMGAP_PREVIEW_VALUES values at most */
	etc_tensor_summary summary;
	uint64_t extremes[2]; /* int64/uint64: the smallest and largest value's bits */
} etc_ng_preview;

typedef struct gather {
	item *items;
	size_t n, cap;
	otensor *ts;
	size_t nt, capt;
} gather;

/* How a row's runtime values are read: permuted and/or dequantized. */
typedef struct rowx {
	bool permute, dequant;
	etc_permuted perm;
	etc_dequant dq;
	/* an integer reference of a quantized tensor, read dequantized with the
	 * runtime's parameters (its codes against the runtime's, in real units) */
	bool dequant_ref;
	etc_dequant dq_ref;
	const etc_ng_preview *preview; /* the reference's values were not kept */
} rowx;

/* How well a graph run reproduces the runtime's program outputs (numgap_refgraph.c). */
typedef struct etc_ng_score etc_ng_score;

struct etc_numgap {
	etc_arena arena;
	int alignment;
	etc_numgap_row *rows;
	etc_tensor *act, *ref; /* per row */
	etc_tensor *loc;       /* per row: the reference graph's re-run (sizes_le NULL: none) */
	rowx *xf;              /* per row */
	size_t nrows, caprows;
	etc_numgap_unmatched *un;
	size_t nun, capun;
	long first;
	etc_numgap_options opt;
	/* for op names and stack traces: each side's ETRecord and method */
	const etc_etrecord *rec, *ref_rec;
	int method, ref_method;
	const etc_npz *npz; /* the .npz reference, for its CRC checks */
	etc_ng_graph g_rt;  /* the runtime ETRecord's graph: quantize nodes, SNR drops */
	etc_ng_qfile qfile;
	bool has_qfile;
	long qfile_misfit; /* a row whose --quant-params entry does not fit it, or -1 */
	const char **warn;
	size_t nwarn, capwarn;
	etc_ng_pending pending; /* rows compared after alignment, on several threads */
	size_t block;           /* the runtime's block and run compared */
	uint32_t run, etdump_run;
	void *first_copy; /* drop_reference_values: the values of the first failing row */
	/* scoring candidate inputs (etc_numgap_inputs_match_at): no local re-runs,
	 * and the program outputs scored in the same run of the graph */
	bool no_local;
	etc_ng_score *score;
	double output_snr; /* options.score_program_outputs: etc_numgap_program_output_snr */
};

/* A score of block `block` run `run`'s program outputs against graph `g`'s
 * outputs (NULL: out of memory), its result (NAN: none compared), free. */
etc_ng_score *etc_ng_score_new_(const etc_inspector *insp, size_t block, uint32_t run,
                                const etc_refgraph *g);
double etc_ng_score_result_(const etc_ng_score *s);
void etc_ng_score_free_(etc_ng_score *s);

/* etc_numgap_run_at, for candidate inputs: without local re-runs when
 * `no_local`, and with `score` (or NULL) fed every node's outputs. */
int etc_ng_run_(etc_numgap **out, const etc_inspector *insp, size_t block_index, uint32_t run,
                const etc_numgap_reference *ref, const etc_numgap_options *opt, bool no_local,
                etc_ng_score *score, etc_error *err);

/* Grows array p of capacity *cap to hold `need` elements of `size` bytes (NULL: out of memory). */
void *etc_ng_grow_(void *p, size_t *cap, size_t need, size_t size);
/* Adds a warning of the run (ETC_ERR_NOMEM). */
int etc_ng_warn_(etc_numgap *ng, etc_error *err, const char *fmt, ...) ETC_PRINTF(3, 4);

/* --- items (numgap_gather.c) --------------------------------------------------------------- */

int etc_ng_push_item_(gather *g, item **out, etc_error *err);
int etc_ng_push_tensor_(gather *g, otensor **out, etc_error *err);
/* Copies `n` handles into the arena, ascending and unique. */
int etc_ng_set_handles_(etc_arena *a, item *it, const int64_t *h, size_t n, etc_error *err);
/* The output of `it` that fits `want` best (shape and dtype; ties to the last). */
uint32_t etc_ng_pick_(const gather *g, const item *it, const otensor *want);
/* How many output pairs a runtime item and a reference item make, and pair k. */
uint32_t etc_ng_pair_count_(const item *a, const item *r);
void etc_ng_pair_at_(const gather *g, const item *a, const item *r, uint32_t k, uint32_t *pa,
                     uint32_t *pr);
bool etc_ng_same_instruction_(const etc_inspector_event *a, const etc_inspector_event *b);
bool etc_ng_is_delegate_call_(const etc_inspector_event *ev);
/* The items of one inspector: each instruction (or delegate event) with debug data once. */
int etc_ng_gather_inspector_(etc_numgap *ng, gather *g, const etc_inspector *insp, int side,
                             size_t block, uint32_t run, const char *what, etc_error *err);
/* The items of an .npz reference: one per array, named by its debug handles. */
int etc_ng_gather_npz_(etc_numgap *ng, gather *g, const etc_npz *z, const char *name,
                       etc_error *err);

/* --- a reference graph (numgap_refgraph.c) ---------------------------------------------- */

/* Runs ref->graph: one item per node with a debug handle (after the nrt
 * runtime items), outputs kept where the runtime shares the handle, and
 * each kept node re-run on the runtime's logged inputs. */
int etc_ng_gather_graph_(etc_numgap *ng, gather *g, size_t nrt, const etc_numgap_reference *ref,
                         etc_error *err);
/* The local metrics of the rows with a re-run (after their comparison). */
int etc_ng_local_metrics_(etc_numgap *ng, etc_error *err);

/* --- alignment (numgap_align.c) ------------------------------------------------------------ */

int etc_ng_align_by_handle_(etc_numgap *ng, gather *g, const etc_gate *gate, etc_error *err);
int etc_ng_align_by_instruction_(etc_numgap *ng, gather *g, size_t nrt, const char *rt_name,
                                 const char *ref_name, const etc_gate *gate, etc_error *err);
/* Nothing could be compared: a run that checks nothing must not pass. */
int etc_ng_nothing_aligned_(const gather *g, size_t nrt, bool by_handle, const char *block,
                            const char *rt_name, const char *ref_name, etc_error *err);

/* --- a row's comparison (numgap_rows.c) ---------------------------------------------------- */

/* Finishes the deferred CRC-32 check of an .npz array (ETC_ERR_FORMAT naming the member). */
int etc_ng_verify_ref_(const etc_numgap *ng, otensor *r, etc_error *err);
/* The runtime values of row i: the tensor, permuted and dequantized as decided. */
void etc_ng_row_chain_(etc_numgap *ng, size_t i, etc_values *out);
/* The quantization parameters of item `it`'s ETRecord node (the node of its
 * largest handle, or that node's single user); false with `why` set. */
bool etc_ng_item_qgraph_(etc_numgap *ng, const item *it, etc_ng_qparams *q, char *why, size_t cap);
/* `d`'s scale, zero point and channel stride for parameters `q` read along
 * tensor `t`'s shape (its base is the caller's); false when q's channels do
 * not fit t's axis. */
bool etc_ng_dequant_of_(etc_dequant *d, const etc_ng_qparams *q, const etc_tensor *t);
/* An integer dtype that quantized values are stored in (int8, uint8, int16, int32, ...). */
bool etc_ng_is_int_code_(int st);
/* The reference values of row i, dequantized when its codes are (rowx.dequant_ref). */
void etc_ng_ref_chain_(etc_numgap *ng, size_t i, etc_values *out);
/* `codes`, the reference side's values of row i before any dequantization
 * (a local re-run's), read as the row reads its reference; `d` holds the
 * reading and must outlive `out`. */
void etc_ng_ref_read_(const etc_numgap *ng, size_t i, const etc_tensor *codes, etc_dequant *d,
                      etc_values *out);
/* The values row i compares (an etc_ng_values_fn for numgap_compare.c). */
void etc_ng_row_values_(void *ctx, size_t i, etc_values *actual, etc_values *reference);
/* The row's gap in distance `d` (ETC_NUMGAP_MSE, _L1, _SNR). */
double etc_ng_distance_of_(int d, const etc_metrics *m);
/* Sets up and runs (or queues) the comparison of row i; *rc gets a failure. */
void etc_ng_compare_pair_(etc_numgap *ng, size_t i, const item *ait, const otensor *a, otensor *r,
                          const etc_gate *gate, etc_error *err, int *rc);

/* --- the ETRecord check (numgap_check.c) --------------------------------------------------- */

/* Refuses (or with force warns about) an ETRecord not the ETDump's own (ETC_ERR_MISMATCH). */
int etc_ng_check_record_(etc_numgap *ng, const gather *g, size_t from, size_t to,
                         const etc_inspector *insp, const char *flag, etc_error *err);
/* A warning when the first op fed by the program's inputs and weights alone
 * disagrees entirely with the runtime (numgap_check.c). */
int etc_ng_check_first_op_(etc_numgap *ng, etc_error *err);
/* Against a reference run or AOT intermediates: the first compared op
 * unrelated to the reference's says the reference ran other inputs
 * (a warning; `reference` names it in the message). */
int etc_ng_check_first_ref_op_(etc_numgap *ng, const char *reference, etc_error *err);
/* Most aligned outputs of another shape: the sides are of different programs. */
int etc_ng_check_shapes_(etc_numgap *ng, const char *rt_name, const char *ref_name, etc_error *err);

#endif
