/*
 * trace.c - the Chrome Trace Event Format writer (include/etcompare/trace.h
 * has the mapping). It walks the ETDump's runs and events once, in file
 * order, and appends each trace event to a small buffer flushed every
 * 64 KiB, so memory stays constant whatever the number of events. Viewers
 * sort events by time themselves; the file keeps the ETDump's (completion)
 * order.
 */
#include "etcompare/inspector.h"
#include "etcompare/trace.h"
#include "core/fmt.h"
#include "core/internal.h"
#include "format/etdump_private.h"

#include <stdlib.h>

#define FLUSH_AT (64u << 10)

typedef struct writer {
	FILE *f;
	etc_sbuf b;
	int scale;
	const etc_etdump *dump;
	uint32_t pid;
	etc_trace_stats st;
} writer;

static void flush(writer *w)
{
	if (w->b.len)
		fwrite(w->b.p, 1, w->b.len, w->f);
	etc_sbuf_reset(&w->b);
}

static void sep(writer *w)
{
	/* Every event is preceded by ",\n" except the first of the array. */
	etc_sbuf_put(&w->b, ",\n", 2);
	if (w->b.len >= FLUSH_AT)
		flush(w);
}

/* Literal text and integers appended directly: the per-event path avoids
 * printf-style parsing, which was most of the writer's time. */
#define LIT(w, s) etc_sbuf_put(&(w)->b, s, sizeof s - 1)

static void put_u(writer *w, uint64_t v)
{
	char d[24], *e = d + sizeof d, *q = e;
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	etc_sbuf_put(&w->b, q, (size_t)(e - q));
}

static void put_i(writer *w, int64_t v)
{
	if (v < 0) {
		LIT(w, "-");
		put_u(w, 0 - (uint64_t)v);
	} else {
		put_u(w, (uint64_t)v);
	}
}

/* A timestamp or duration in microseconds as an exact decimal. */
static int put_us(writer *w, uint64_t v, uint32_t run, uint32_t e, etc_error *err)
{
	uint64_t us;
	switch (w->scale) {
	case ETC_TIME_NS: {
		unsigned frac = (unsigned)(v % 1000);
		put_u(w, v / 1000);
		if (frac) {
			char d[5] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
			             (char)('0' + frac % 10), 0};
			size_t n = 4;
			while (d[n - 1] == '0')
				n--;
			etc_sbuf_put(&w->b, d, n);
		}
		return 0;
	}
	case ETC_TIME_MS:
		if (!etc_mul_u64(v, 1000, &us))
			goto overflow;
		break;
	case ETC_TIME_S:
		if (!etc_mul_u64(v, 1000000, &us))
			goto overflow;
		break;
	default: /* us, cycles */
		us = v;
	}
	put_u(w, us);
	return 0;
overflow:
	return etc_fail(err, ETC_ERR_FORMAT, etc_etdump_name(w->dump),
	                (int64_t)etc_etdump_event_offset(w->dump, run, e),
	                "run %u, event %u: time %llu %s does not fit in 64 bits as microseconds",
	                run, e, (unsigned long long)v, etc_time_scale_name(w->scale));
}

static void meta(writer *w, const char *what, uint32_t tid, const char *prefix, etc_str name,
                 const char *suffix)
{
	sep(w);
	etc_sbuf_printf(&w->b, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %u", what, w->pid);
	if (tid)
		etc_sbuf_printf(&w->b, ", \"tid\": %u", tid);
	etc_sbuf_puts(&w->b, ", \"args\": {\"name\": ");
	/* prefix + name + suffix as one JSON string */
	etc_sbuf tmp = {0};
	etc_sbuf_puts(&tmp, prefix);
	etc_sbuf_put(&tmp, name.ptr, name.len);
	etc_sbuf_puts(&tmp, suffix);
	etc_sbuf_json_str(&w->b, tmp.p ? tmp.p : "", tmp.len);
	etc_sbuf_free(&tmp);
	etc_sbuf_puts(&w->b, "}}");
}

static void sort_index(writer *w, const char *what, uint32_t tid, uint32_t index)
{
	sep(w);
	etc_sbuf_printf(&w->b, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %u", what, w->pid);
	if (tid)
		etc_sbuf_printf(&w->b, ", \"tid\": %u", tid);
	etc_sbuf_printf(&w->b, ", \"args\": {\"sort_index\": %u}}", index);
}

/* Inspector's rule: end - start, or a 32-bit wrap when start > end. */
static int elapsed(writer *w, uint32_t run, uint32_t e, const etc_profile_event *p, uint64_t *out,
                   etc_error *err)
{
	const uint64_t max32 = 0xffffffffULL;
	if (p->start_time <= p->end_time) {
		*out = p->end_time - p->start_time;
		return 0;
	}
	if (p->start_time > max32 || p->end_time > max32)
		return etc_fail(err, ETC_ERR_FORMAT, etc_etdump_name(w->dump),
		                (int64_t)etc_etdump_event_offset(w->dump, run, e),
		                "run %u, event %u: start_time %llu is after end_time %llu and "
		                "they do not fit in 32 bits, so this is not a clock wrap",
		                run, e, (unsigned long long)p->start_time,
		                (unsigned long long)p->end_time);
	*out = (max32 - p->start_time) + p->end_time;
	return 0;
}

static int write_run(writer *w, uint32_t r, etc_error *err)
{
	etc_run run;
	etc_etdump_run(w->dump, r, &run);
	uint32_t tid = 2 * r + 1, dtid = 2 * r + 2;
	char label[48];
	snprintf(label, sizeof label, "run %u: ", r);
	meta(w, "thread_name", tid, label, run.name, "");
	sort_index(w, "thread_sort_index", tid, tid);
	bool delegate_named = false;

	uint64_t *bytes = calloc((size_t)run.allocator_count + 1, sizeof *bytes);
	if (!bytes)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	/* Allocations before any profile event sit at the run's first start. */
	uint64_t now = 0;
	etc_event ev;
	for (uint32_t e = 0; e < run.event_count; e++) {
		etc_etdump_event(w->dump, r, e, &ev);
		if (ev.kind == ETC_EVENT_PROFILE) {
			now = ev.profile.start_time;
			break;
		}
	}
	int rc = 0;
	for (uint32_t e = 0; e < run.event_count && rc == 0; e++) {
		etc_etdump_event(w->dump, r, e, &ev);
		if (ev.kind == ETC_EVENT_ALLOCATION) {
			int32_t id = ev.allocation.allocator_id;
			if (id < 1 || (uint32_t)id > run.allocator_count) {
				w->st.skipped_events++;
				continue;
			}
			if (!etc_add_u64(bytes[id], ev.allocation.allocation_size, &bytes[id]))
				bytes[id] = UINT64_MAX; /* saturate: viewers read doubles anyway */
			etc_str an = etc_etdump_allocator(w->dump, r, (uint32_t)id - 1);
			sep(w);
			etc_sbuf_puts(&w->b, "{\"ph\": \"C\", \"name\": ");
			etc_sbuf tmp = {0};
			etc_sbuf_puts(&tmp, label);
			etc_sbuf_put(&tmp, an.ptr, an.len);
			etc_sbuf_json_str(&w->b, tmp.p ? tmp.p : "", tmp.len);
			etc_sbuf_free(&tmp);
			etc_sbuf_printf(&w->b, ", \"pid\": %u, \"ts\": ", w->pid);
			rc = put_us(w, now, r, e, err);
			etc_sbuf_printf(&w->b, ", \"args\": {\"bytes\": %llu}}",
			                (unsigned long long)bytes[id]);
			w->st.counter_events++;
			continue;
		}
		if (ev.kind != ETC_EVENT_PROFILE) {
			w->st.skipped_events++;
			continue;
		}
		const etc_profile_event *p = &ev.profile;
		uint64_t dur = 0;
		if ((rc = elapsed(w, r, e, p, &dur, err)) < 0)
			break;
		bool delegated = p->delegate_debug_id_int != -1 || p->delegate_debug_id_str.len;
		if (delegated && !delegate_named) {
			meta(w, "thread_name", dtid, label, run.name, " (delegate)");
			sort_index(w, "thread_sort_index", dtid, dtid);
			delegate_named = true;
		}
		sep(w);
		LIT(w, "{\"ph\": \"X\", \"name\": ");
		if (delegated && p->delegate_debug_id_str.len) {
			etc_sbuf_json_str(&w->b, p->delegate_debug_id_str.ptr,
			                  p->delegate_debug_id_str.len);
		} else if (delegated) {
			LIT(w, "\"");
			put_i(w, p->delegate_debug_id_int);
			LIT(w, "\"");
		} else {
			etc_sbuf_json_str(&w->b, p->name.ptr, p->name.len);
		}
		if (delegated)
			LIT(w, ", \"cat\": \"delegate\", \"pid\": ");
		else if (p->chain_index == -1)
			LIT(w, ", \"cat\": \"framework\", \"pid\": ");
		else
			LIT(w, ", \"cat\": \"operator\", \"pid\": ");
		put_u(w, w->pid);
		LIT(w, ", \"tid\": ");
		put_u(w, delegated ? dtid : tid);
		LIT(w, ", \"ts\": ");
		if ((rc = put_us(w, p->start_time, r, e, err)) < 0)
			break;
		LIT(w, ", \"dur\": ");
		if ((rc = put_us(w, dur, r, e, err)) < 0)
			break;
		LIT(w, ", \"args\": {\"chain_index\": ");
		put_i(w, p->chain_index);
		LIT(w, ", \"instruction_id\": ");
		put_i(w, p->instruction_id);
		if (delegated) {
			if (p->delegate_debug_id_str.len) {
				LIT(w, ", \"delegate_debug_id\": ");
				etc_sbuf_json_str(&w->b, p->delegate_debug_id_str.ptr,
				                  p->delegate_debug_id_str.len);
			} else {
				LIT(w, ", \"delegate_debug_id\": ");
				put_i(w, p->delegate_debug_id_int);
			}
			if (p->name.len) {
				LIT(w, ", \"event_name\": ");
				etc_sbuf_json_str(&w->b, p->name.ptr, p->name.len);
			}
			LIT(w, ", \"metadata_bytes\": ");
			put_u(w, p->metadata_len);
			w->st.delegate_events++;
		}
		LIT(w, "}}");
		w->st.complete_events++;
		uint64_t end = p->start_time + dur;
		if (end >= p->start_time && end > now)
			now = end;
	}
	free(bytes);
	return rc;
}

void etc_trace_options_init(etc_trace_options *opt)
{
	opt->source_time_scale = ETC_TIME_NS;
}

int etc_trace_write(FILE *f, const etc_etdump *const *dumps, size_t n, const etc_trace_options *opt,
                    etc_trace_stats *stats, etc_error *err)
{
	etc_error_clear(err);
	etc_trace_options o;
	if (!opt)
		etc_trace_options_init(&o), opt = &o;
	if (!f)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_trace_write: NULL out");
	if (!dumps && n)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_trace_write: NULL dumps");
	for (size_t d = 0; d < n; d++)
		if (!dumps[d])
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "etc_trace_write: NULL dumps[%zu]", d);
	if (opt->source_time_scale < ETC_TIME_NS || opt->source_time_scale > ETC_TIME_CYCLES)
		return etc_fail(
		    err, ETC_ERR_USAGE, NULL, -1,
		    "etc_trace_write: source_time_scale %d is not an etc_time_scale (0-4)",
		    opt->source_time_scale);
	writer w = {f, {0}, opt->source_time_scale, NULL, 0, {0, 0, 0, 0}};
	etc_sbuf_printf(
	    &w.b,
	    "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"tool\": \"etcompare\", "
	    "\"version\": \"%s\", \"source_time_scale\": \"%s\"},\n\"traceEvents\": [\n",
	    etc_version(), etc_time_scale_name(opt->source_time_scale));
	int rc = 0;
	bool first = true;
	for (size_t d = 0; d < n && rc == 0; d++) {
		w.dump = dumps[d];
		w.pid = (uint32_t)d + 1;
		const char *nm = etc_etdump_name(w.dump);
		/* The first event has no separator: write it, then drop the ",\n". */
		size_t before = w.b.len;
		meta(&w, "process_name", 0, "", (etc_str){nm, strlen(nm)}, "");
		if (first) {
			memmove(w.b.p + before, w.b.p + before + 2, w.b.len - before - 2);
			w.b.len -= 2;
			first = false;
		}
		sort_index(&w, "process_sort_index", 0, w.pid);
		for (uint32_t r = 0; r < etc_etdump_run_count(w.dump) && rc == 0; r++) {
			rc = write_run(&w, r, err);
			etc_etdump_release_run_(w.dump, r); /* written: need not stay resident */
		}
	}
	if (rc == 0) {
		etc_sbuf_puts(&w.b, "\n]}\n");
		if (w.b.failed)
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
			              "out of memory writing the trace");
		flush(&w);
		if (rc == 0 && ferror(f))
			rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the trace");
	}
	etc_sbuf_free(&w.b);
	if (stats)
		*stats = w.st;
	return rc;
}
