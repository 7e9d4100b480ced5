/*
 * delegate_scale.h - --delegate-time-scale UNIT | BACKEND=UNIT: the unit
 * delegated events were logged in, for all of them or by backend (the
 * backend of an instruction is in the ETRecord's delegate_map).
 */
#ifndef ETC_CLI_DELEGATE_SCALE_H
#define ETC_CLI_DELEGATE_SCALE_H

#include "args.h"

typedef struct delegate_scales {
	const etc_etrecord *rec;
	int method;
	unsigned count;
	const char *backend[ARGS_MAX_DELEGATE_SCALES];
	size_t backend_len[ARGS_MAX_DELEGATE_SCALES];
	int unit[ARGS_MAX_DELEGATE_SCALES];
} delegate_scales;

/*
 * Fills io from the (already checked) values: UNIT sets the unit of every
 * delegated event, BACKEND=UNIT installs a lookup by backend that needs
 * delegate_scales_link before the inspector is created.
 */
void delegate_scales_init(delegate_scales *ds, const args *a, etc_inspector_options *io);

/* The ETRecord and method whose delegate_map names each instruction's backend. */
void delegate_scales_link(delegate_scales *ds, const etc_etrecord *rec, const char *method);

/*
 * After linking: every BACKEND of a BACKEND=UNIT must name the backend of
 * some delegated event, else a typo would leave its rows silently in the
 * default unit. 0, or EXIT_INPUT with the message (and the backends seen).
 */
int delegate_scales_check(const delegate_scales *ds, const etc_inspector *insp);

#endif
