/*
 * numgap_compare.c - the numeric gap's comparisons, on several threads
 * (numgap_compare.h). The numeric gap compares many medium tensors (one
 * per intermediate output): splitting each would cost more in thread
 * starts than it saves, so the rows are split instead.
 */
#include "analysis/numgap_compare.h"

#include "analysis/metrics_private.h"
#include "core/internal.h"
#include "core/parallel.h"

#include <stdlib.h>

/* Pairs at least this long are split by metrics.c itself (two segments). */
#define LARGE_PAIR ((uint64_t)1 << 19)

int etc_ng_pending_add_(etc_ng_pending *p, size_t row, etc_error *err)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		size_t *rows = realloc(p->rows, cap * sizeof *rows);
		if (!rows)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		p->rows = rows;
		p->cap = cap;
	}
	p->rows[p->n++] = row;
	return 0;
}

void etc_ng_pending_free_(etc_ng_pending *p)
{
	free(p->rows);
	memset(p, 0, sizeof *p);
}

/* One part of the pending rows and the first failure in it. */
typedef struct part {
	size_t failed; /* index into the pending rows, or SIZE_MAX */
	int rc;
	etc_error err;
} part;

typedef struct job {
	etc_numgap_row *rows;
	etc_ng_values_fn values;
	void *ctx;
	const etc_ng_pending *p;
	const etc_gate *gate;
	bool large;      /* this round: the large pairs (else the others) */
	unsigned inner;  /* threads per comparison */
	unsigned nparts; /* the pending rows are cut into nparts ranges */
	part *parts;
} job;

static void compare_one(const job *j, size_t k, part *pt)
{
	size_t i = j->p->rows[k];
	if (pt->failed < k)
		return;
	etc_values va, vr;
	j->values(j->ctx, i, &va, &vr);
	if ((va.count >= LARGE_PAIR) != j->large)
		return;
	etc_numgap_row *row = &j->rows[i];
	int rc = etc_metrics_compare_threads_(&vr, &va, &row->metrics, &pt->err, 3, j->inner);
	if (rc < 0) {
		pt->failed = k;
		pt->rc = rc;
		return;
	}
	row->has_metrics = true;
	row->status = etc_gate_judge_(&row->metrics, j->gate, row->reason, sizeof row->reason);
}

/* etc_range_fn over parts: part q holds pending rows [q n / parts, (q+1) n / parts). */
static void compare_parts(void *ctx, size_t first, size_t last)
{
	const job *j = ctx;
	size_t n = j->p->n;
	for (size_t q = first; q < last; q++)
		for (size_t k = q * n / j->nparts; k < (q + 1) * n / j->nparts; k++)
			compare_one(j, k, &j->parts[q]);
}

int etc_ng_compare_rows_(etc_numgap_row *rows, etc_ng_values_fn values, void *ctx,
                         const etc_ng_pending *p, const etc_gate *gate, etc_error *err)
{
	if (p->n == 0)
		return 0;
	unsigned threads = etc_thread_count_();
	job j = {rows, values, ctx, p, gate, true, 0, threads, NULL};
	j.parts = malloc(threads * sizeof *j.parts);
	if (!j.parts)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (unsigned q = 0; q < threads; q++)
		j.parts[q].failed = SIZE_MAX;
	/* the large pairs one after the other, each on every thread */
	compare_parts(&j, 0, threads);
	/* then the others, the threads taking a range of rows each */
	j.large = false;
	j.inner = 1;
	etc_parallel_for_(threads, threads, compare_parts, &j);
	int rc = 0;
	for (unsigned q = 0; q < threads && rc == 0; q++)
		if (j.parts[q].failed != SIZE_MAX) {
			rc = j.parts[q].rc;
			if (err)
				*err = j.parts[q].err;
		}
	free(j.parts);
	return rc;
}
