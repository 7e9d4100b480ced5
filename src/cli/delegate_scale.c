/*
 * delegate_scale.c - the units of delegated events by backend (see
 * delegate_scale.h).
 */
#include "delegate_scale.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

static int unit_of_instruction(void *ctx, int32_t instruction_id)
{
	const delegate_scales *ds = ctx;
	if (!ds->rec || ds->method < 0)
		return -1;
	const etc_delegate_info *d =
	    etc_etrecord_delegate(ds->rec, (size_t)ds->method, instruction_id);
	if (!d || !d->backend)
		return -1;
	for (unsigned k = ds->count; k-- > 0;)
		if (strlen(d->backend) == ds->backend_len[k] &&
		    memcmp(d->backend, ds->backend[k], ds->backend_len[k]) == 0)
			return ds->unit[k];
	return -1;
}

void delegate_scales_init(delegate_scales *ds, const args *a, etc_inspector_options *io)
{
	memset(ds, 0, sizeof *ds);
	ds->method = -1;
	for (unsigned k = 0; k < a->delegate_scale_count; k++) {
		const char *v = a->delegate_scales[k], *eq = strrchr(v, '=');
		int unit = -1;
		etc_time_scale_parse(eq ? eq + 1 : v, &unit);
		if (!eq) {
			io->delegate_time_scale = unit; /* the last one given wins */
			continue;
		}
		ds->backend[ds->count] = v;
		ds->backend_len[ds->count] = (size_t)(eq - v);
		ds->unit[ds->count++] = unit;
	}
	if (ds->count) {
		io->delegate_time_scale_of = unit_of_instruction;
		io->delegate_time_scale_ctx = ds;
	}
}

void delegate_scales_link(delegate_scales *ds, const etc_etrecord *rec, const char *method)
{
	ds->rec = rec;
	ds->method = !rec     ? -1
	             : method ? etc_etrecord_method_index(rec, method)
	                      : etc_etrecord_default_method(rec);
}

/* Appends `name` to the ", "-separated `list` unless it is there already. */
static void add_name(char *list, size_t cap, const char *name)
{
	size_t n = strlen(name), len = strlen(list);
	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return;
	snprintf(list + len, cap - len, "%s%s", len ? ", " : "", name);
}

int delegate_scales_check(const delegate_scales *ds, const etc_inspector *insp)
{
	char seen[512] = "";
	if (!ds->count)
		return 0;
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const char *be = blk->events[e].delegate_backend_name;
			if (blk->events[e].is_delegated_op && be && *be)
				add_name(seen, sizeof seen, be);
		}
	}
	for (unsigned k = 0; k < ds->count; k++) {
		bool found = false;
		for (const char *p = seen; *p && !found;) {
			size_t n = strcspn(p, ",");
			found = n == ds->backend_len[k] && memcmp(p, ds->backend[k], n) == 0;
			p += n;
			p += strspn(p, ", ");
		}
		if (!found) {
			/* backend names come from the ETRecord: through the one escaping path */
			char safe[1024];
			fprintf(stderr,
			        "etcompare: error: --delegate-time-scale %s: no delegated event of "
			        "backend \"%.*s\" (%s%s)\n",
			        ds->backend[k], (int)ds->backend_len[k], ds->backend[k],
			        *seen ? "the backends of delegated events: "
			              : "no delegated event has a "
			                "backend in the ETRecord",
			        etc_text_safe(safe, sizeof safe, seen));
			return EXIT_INPUT;
		}
	}
	return 0;
}
