/*
 * inspector_time.c - time scales: their names, the unit delegated events were
 * logged in, and an event's duration converted to the unit it is shown in
 * (with upstream's rule for a 32-bit clock wrap): the timestamps are
 * subtracted as integers, then the difference is scaled.
 */
#include "analysis/inspector_private.h"

#include <stdio.h>

static const double time_scale_factor[] = {1e9, 1e6, 1e3, 1, 1};
static const char *const time_scale_names[] = {"ns", "us", "ms", "s", "cycles"};

const char *etc_time_scale_name(int s)
{
	return s >= 0 && s <= ETC_TIME_CYCLES ? time_scale_names[s] : "?";
}

int etc_time_scale_parse(const char *name, int *out)
{
	if (!out)
		return ETC_ERR_USAGE;
	for (int i = 0; i <= ETC_TIME_CYCLES; i++)
		if (name && strcmp(name, time_scale_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return ETC_ERR_USAGE;
}

/* The unit the delegated events of an instruction were logged in. */
int etc_delegate_unit_(const etc_inspector_options *o, int32_t instruction_id)
{
	int u = o->delegate_time_scale_of
	            ? o->delegate_time_scale_of(o->delegate_time_scale_ctx, instruction_id)
	            : -1;
	if (u < 0 || u > ETC_TIME_CYCLES)
		u = o->delegate_time_scale;
	return u >= 0 && u <= ETC_TIME_CYCLES ? u : o->source_time_scale;
}

/* The unit a duration logged in `unit` is shown in: the target, when it converts. */
int etc_shown_unit_(const etc_inspector_options *o, int unit)
{
	bool cycles = unit == ETC_TIME_CYCLES;
	return cycles == (o->target_time_scale == ETC_TIME_CYCLES) ? o->target_time_scale : unit;
}

/* --- durations ------------------------------------------------------------ */

int etc_duration_(const etc_inspector *in, uint32_t run, uint32_t e, const etc_profile_event *p,
                  bool delegated, double *out, etc_error *err)
{
	uint64_t s = p->start_time, t = p->end_time, elapsed;
	const uint64_t max32 = 0xffffffffULL;
	if (s > t) {
		char what[96];
		if (p->name.len)
			snprintf(what, sizeof what, "%.*s", (int)p->name.len, p->name.ptr);
		else if (p->delegate_debug_id_int != -1)
			snprintf(what, sizeof what, "delegate id %d", p->delegate_debug_id_int);
		else
			snprintf(what, sizeof what, "delegate id \"%.*s\"",
			         (int)p->delegate_debug_id_str.len, p->delegate_debug_id_str.ptr);
		if (s > max32 || t > max32)
			return etc_fail(
			    err, ETC_ERR_FORMAT, etc_etdump_name(in->dump),
			    (int64_t)etc_etdump_event_offset(in->dump, run, e),
			    "run %u, event %u (%s): start_time %llu is after end_time "
			    "%llu and they do not fit in 32 bits, so this is not a clock "
			    "wrap",
			    run, e, what, (unsigned long long)s, (unsigned long long)t);
		/* Upstream's formula (one less than the modular difference). */
		elapsed = (max32 - s) + t;
	} else {
		elapsed = t - s;
	}
	if (delegated) {
		/* Upstream's converter scales both timestamps, then subtracts:
		 * with absolute timestamps near 1e18 that rounds every duration
		 * to a multiple of 256 ticks. The integer difference is exact, so
		 * it is scaled instead (equal to upstream's up to its rounding). */
		int unit = etc_delegate_unit_(&in->opt, p->instruction_id);
		double f =
		    time_scale_factor[unit] / time_scale_factor[etc_shown_unit_(&in->opt, unit)];
		*out = (double)elapsed / f;
	} else {
		double factor = time_scale_factor[in->opt.source_time_scale] /
		                time_scale_factor[in->opt.target_time_scale];
		*out = (double)elapsed / factor;
	}
	return 0;
}
