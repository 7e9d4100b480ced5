/*
 * consistency.c - do the inputs belong together (see etcompare/consistency.h)?
 * Owns the two checks run before any comparison: the linked ETRecord against
 * the ETDump's instructions, and the debug buffer against the tensor ranges
 * the ETDump's runs reference.
 */
#include "etcompare/consistency.h"
#include "etcompare/etdump.h"

#include "core/internal.h"
#include "format/program.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes after the last referenced range that may hold alignment padding. */
enum { TAIL_SLACK = 256 };
/*
 * Non-zero bytes between referenced ranges beyond this are another run's
 * data: the runtime leaves alignment gaps zero (0 in every real export).
 */
enum { GAP_LIMIT = 32 };

static bool name_is(etc_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.ptr, lit, n) == 0;
}

static bool is_framework(etc_str name)
{
	return name_is(name, "Method::init") || name_is(name, "Program::load_method") ||
	       name_is(name, "Method::execute") || name_is(name, "OPERATOR_CALL") ||
	       name_is(name, "DELEGATE_CALL");
}

/* "native_call_addmm.out" -> "addmm"; false for another name. */
static bool kernel_op(etc_str name, char *op, size_t cap)
{
	static const char prefix[] = "native_call_";
	size_t k = sizeof prefix - 1;
	if (name.len <= k || memcmp(name.ptr, prefix, k) != 0)
		return false;
	size_t n = 0, i = k;
	for (; i < name.len && name.ptr[i] != '.' && n + 1 < cap; i++)
		op[n++] = name.ptr[i];
	op[n] = '\0';
	/* the runtime names a kernel by its variant too ("addmm.out"): a name
	 * without one is not the runtime's kernel name and says nothing */
	return n > 0 && i < name.len && name.ptr[i] == '.';
}

/*
 * Does kernel `kernel` (from the event name `name`) run node op `op`? The
 * op's base name ("aten.mul.Scalar" -> "mul") is in the event name
 * ("native_call_quantized_mul_scalar.out"), or the kernel's in the op.
 */
static bool op_fits(const char *op, const char *kernel, etc_str name)
{
	if (!op)
		return true;
	if (strstr(op, kernel))
		return true;
	const char *dot = strchr(op, '.');
	const char *from = dot ? dot + 1 : op;
	const char *to = strchr(from, '.');
	size_t n = to ? (size_t)(to - from) : strlen(from);
	if (!n)
		return true;
	for (size_t i = 0; i + n <= name.len; i++)
		if (memcmp(name.ptr + i, from, n) == 0)
			return true;
	return false;
}

/* 4440 -> "4,440" */
static const char *grouped(char buf[32], uint64_t v)
{
	char raw[24];
	int n = snprintf(raw, sizeof raw, "%" PRIu64, v), o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

/* " (--etrecord)" after "give the ETRecord ...", or nothing without a `fix`. */
static const char *fix_clause(char *buf, size_t cap, const char *fix)
{
	if (!fix || !*fix)
		return "";
	snprintf(buf, cap, " (%s)", fix);
	return buf;
}

int etc_check_etrecord(const etc_inspector *insp, const char *fix, etc_error *err)
{
	if (!insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_check_etrecord: NULL insp");
	char fixbuf[200];
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	if (!rec)
		return 0;
	const char *dump = etc_etdump_name(etc_inspector_etdump(insp));
	const char *rname = etc_etrecord_name(rec);
	size_t kernels = 0, linked = 0, unlinked_named = 0;
	const etc_inspector_event *missing = NULL, *wrong = NULL;
	const char *wrong_op = "";
	char op[128];
	/* the method the inspector is linked to (--method), else the default */
	const char *linked_method = etc_inspector_etrecord_method(insp);
	int def = linked_method ? etc_etrecord_method_index(rec, linked_method)
	                        : etc_etrecord_default_method(rec);
	if (def < 0)
		def = etc_etrecord_default_method(rec);
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		/* A block named after another method of a multi-method record is
		 * linked to that method's maps, not to the ones checked here. */
		char bname[256];
		snprintf(bname, sizeof bname, "%.*s", (int)blk->name.len, blk->name.ptr);
		int bm = etc_etrecord_method_index(rec, bname);
		if (bm >= 0 && bm != def)
			continue;
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (ev->instruction_id < 0 || ev->is_delegated_op || is_framework(ev->name))
				continue;
			bool named = kernel_op(ev->name, op, sizeof op);
			if (!named && ev->debug_count == 0)
				continue; /* no kernel call: no debug_handle_map entry by design */
			kernels++;
			if (ev->debug_handle_count == 0) {
				unlinked_named += named;
				if (named && !missing)
					missing = ev;
				continue;
			}
			linked++;
			if (!named || ev->node_count == 0 || wrong)
				continue;
			bool fits = false;
			for (uint32_t k = 0; k < ev->node_count && !fits; k++)
				fits = op_fits(ev->nodes[k]->op, op, ev->name);
			if (!fits) {
				wrong = ev;
				wrong_op = ev->nodes[0]->op ? ev->nodes[0]->op : "?";
			}
		}
	}
	/* an empty debug_handle_map links nothing: the Inspector warns about it */
	if (!linked)
		return 0;
	if (wrong)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "ETDump %s and ETRecord %s do not belong together: instruction %d "
		                "`%.*s` is `%s` in this record; give the ETRecord exported with "
		                "this program%s",
		                dump, rname, wrong->instruction_id, (int)wrong->name.len,
		                wrong->name.ptr, wrong_op, fix_clause(fixbuf, sizeof fixbuf, fix));
	/* a few unlinked kernels are the record's gaps; most of them, another program */
	if (missing && unlinked_named * 2 > kernels)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "ETDump %s and ETRecord %s do not belong together: %zu of the %zu "
		                "kernel calls have no debug_handle_map entry (first: instruction "
		                "%d `%.*s`); give the ETRecord exported with this program%s",
		                dump, rname, unlinked_named, kernels, missing->instruction_id,
		                (int)missing->name.len, missing->name.ptr,
		                fix_clause(fixbuf, sizeof fixbuf, fix));
	return 0;
}

/* "aten::convolution" -> "convolution": the name the runtime's event gives. */
static etc_str op_base(etc_str op)
{
	for (size_t i = op.len; i >= 2; i--)
		if (op.ptr[i - 1] == ':' && op.ptr[i - 2] == ':')
			return (etc_str){op.ptr + i, op.len - i};
	return op;
}

int etc_check_bundled_program(const etc_inspector *insp, const etc_bundled *bp, const char *fix,
                              etc_error *err)
{
	if (!insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_check_bundled_program: NULL insp");
	char fixbuf[200];
	uint64_t off, size;
	const uint8_t *pte = bp ? etc_bundled_program(bp, &off, &size) : NULL;
	if (!pte || !size)
		return 0;
	const char *bname = etc_bundled_name(bp);
	etc_str *ops;
	size_t nins;
	ETC_TRY(etc_program_kernels_(pte, (size_t)size, (size_t)off, bname,
	                             etc_inspector_etrecord_method(insp), &ops, &nins, err));
	size_t kernels = 0, wrong = 0;
	const etc_inspector_event *first = NULL;
	etc_str first_op = {"", 0};
	char op[128];
	for (size_t b = 0; nins && b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (ev->instruction_id < 0 || ev->is_delegated_op ||
			    !kernel_op(ev->name, op, sizeof op))
				continue;
			kernels++;
			etc_str called = (size_t)ev->instruction_id < nins ? ops[ev->instruction_id]
			                                                   : (etc_str){"", 0};
			etc_str want = op_base(called);
			if (want.len == strlen(op) && !memcmp(want.ptr, op, want.len))
				continue;
			if (!wrong++) {
				first = ev;
				first_op = called;
			}
		}
	}
	int rc = 0;
	/* the runtime names each kernel call after the operator it calls: most
	   calls of another name are another program's */
	if (first && wrong * 2 > kernels) {
		char what[160];
		if (first_op.len)
			snprintf(what, sizeof what, "`%.*s`",
			         (int)(first_op.len > 120 ? 120 : first_op.len), first_op.ptr);
		else
			snprintf(what, sizeof what, "no kernel call");
		rc = etc_fail(
		    err, ETC_ERR_MISMATCH, NULL, -1,
		    "ETDump %s and BundledProgram %s do not belong together: %zu of the %zu "
		    "kernel calls are not its program's (first: instruction %d `%.*s` is %s "
		    "in it); give the .bpte the run came from%s",
		    etc_etdump_name(etc_inspector_etdump(insp)), bname, wrong, kernels,
		    first->instruction_id, (int)first->name.len, first->name.ptr, what,
		    fix_clause(fixbuf, sizeof fixbuf, fix));
	}
	free(ops);
	return rc;
}

typedef struct range {
	uint64_t begin, end;
} range;

static int range_cmp(const void *pa, const void *pb)
{
	const range *a = pa, *b = pb;
	return a->begin < b->begin ? -1 : a->begin > b->begin;
}

static uint64_t nonzero(const uint8_t *p, uint64_t from, uint64_t to, uint64_t *first)
{
	uint64_t n = 0;
	for (uint64_t i = from; i < to; i++)
		if (p[i]) {
			if (!n)
				*first = i;
			n++;
		}
	return n;
}

/* Every tensor range of every run, into *out (*n of them). */
static int collect(const etc_etdump *dump, range **out, size_t *n, etc_error *err)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (uint32_t r = 0; r < etc_etdump_run_count(dump); r++) {
		etc_run run;
		etc_etdump_run(dump, r, &run);
		for (uint32_t e = 0; e < run.event_count; e++) {
			etc_event ev;
			etc_etdump_event(dump, r, e, &ev);
			if (ev.kind != ETC_EVENT_DEBUG || !ev.debug.has_value)
				continue;
			const etc_value *v = &ev.debug.value;
			for (uint32_t t = 0; t < v->tensor_count; t++) {
				etc_tensor ten;
				etc_error ignored;
				/* a malformed tensor is its parser's error, reported where it is
				 * read */
				if (etc_value_tensor(v, t, NULL, &ten, &ignored) < 0 ||
				    ten.offset < 0 || !ten.nbytes)
					continue;
				if (*n == cap) {
					size_t c = cap ? cap * 2 : 256;
					range *g = realloc(*out, c * sizeof *g);
					if (!g)
						return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
						                "out of memory");
					*out = g;
					cap = c;
				}
				(*out)[(*n)++] = (range){(uint64_t)ten.offset,
				                         (uint64_t)ten.offset + ten.nbytes};
			}
		}
	}
	return 0;
}

int etc_check_debug_buffer(const etc_inspector *insp, const char *fix, etc_error *err)
{
	if (!insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_check_debug_buffer: NULL insp");
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (!buf)
		return 0;
	const etc_etdump *dump = etc_inspector_etdump(insp);
	const uint8_t *data = etc_debug_buffer_data(buf);
	uint64_t size = etc_debug_buffer_size(buf);
	range *rs;
	size_t n;
	int rc = collect(dump, &rs, &n, err);
	if (rc < 0) {
		free(rs);
		return rc;
	}
	char a[32], b[32], c[32], d[32], e[32];
	char head[1200];
	snprintf(head, sizeof head, "ETDump %s and debug buffer %s do not belong together",
	         etc_etdump_name(dump), etc_debug_buffer_name(buf));
	if (n) /* qsort's array may not be NULL, even for no elements */
		qsort(rs, n, sizeof *rs, range_cmp);
	uint64_t covered = 0, end = 0, first = 0, gaps = 0, gap_at = 0, gap_end = 0;
	for (size_t i = 0; i < n; i++) {
		if (rs[i].end > size) {
			rc = etc_fail(
			    err, ETC_ERR_MISMATCH, NULL, -1,
			    "%s: the ETDump references bytes %s..%s, beyond the buffer's %s "
			    "bytes; give the %s the runtime wrote with this ETDump",
			    head, grouped(a, rs[i].begin), grouped(b, rs[i].end), grouped(c, size),
			    fix ? fix : "debug buffer");
			goto done;
		}
		if (rs[i].begin > end) {
			uint64_t g = nonzero(data, end, rs[i].begin, &first);
			if (g && !gaps)
				gap_at = first, gap_end = rs[i].begin;
			gaps += g;
		}
		uint64_t from = rs[i].begin > end ? rs[i].begin : end;
		if (rs[i].end > from)
			covered += rs[i].end - from;
		if (rs[i].end > end)
			end = rs[i].end;
	}
	if (gaps > GAP_LIMIT) {
		rc = etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		              "%s: the ETDump references %s of %s bytes, and %s non-zero bytes "
		              "between its tensors belong to none of them (the first at offset "
		              "%s, before %s); give the %s the runtime wrote with this ETDump",
		              head, grouped(a, covered), grouped(b, size), grouped(c, gaps),
		              grouped(d, gap_at), grouped(e, gap_end), fix ? fix : "debug buffer");
		goto done;
	}
	/* the runtime zero-pads the buffer to its allocated size after the last tensor */
	uint64_t tail_from = end + TAIL_SLACK < size ? end + TAIL_SLACK : size;
	uint64_t tail = nonzero(data, tail_from, size, &first);
	if (tail)
		rc =
		    etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		             "%s: the ETDump references %s of %s bytes, but %s non-zero bytes from "
		             "offset %s on belong to no tensor of it (the buffer is of another run "
		             "or model); give the %s the runtime wrote with this ETDump",
		             head, grouped(a, covered), grouped(b, size), grouped(c, tail),
		             grouped(d, first), fix ? fix : "debug buffer");
done:
	free(rs);
	return rc;
}
