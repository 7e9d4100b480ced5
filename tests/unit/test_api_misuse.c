/*
 * test_api_misuse.c - the public C API called the way a third-party
 * program gets it wrong: options left NULL where the header gives a
 * default, NULL out-parameters. Each call must fail with ETC_ERR_USAGE
 * naming the argument, or take the documented default; never crash.
 * Inputs: tests/data/realexport/cnn.* (a real ExecuTorch run).
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "etcompare/etcompare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[900];

static const char *data(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%stests/data/realexport/%s", root, name);
	return buf;
}

typedef struct opened {
	etc_etdump *dump;
	etc_debug_buffer *buf;
	etc_etrecord *rec;
	etc_inspector *insp;
} opened;

static int open_cnn(opened *o, etc_error *err)
{
	char p[1024];
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	if (etc_etdump_open(&o->dump, data(p, sizeof p, "cnn.etdp"), err) < 0 ||
	    etc_debug_buffer_open(&o->buf, data(p, sizeof p, "cnn_debug.bin"), err) < 0 ||
	    etc_etrecord_open(&o->rec, data(p, sizeof p, "cnn.etrecord"), err) < 0 ||
	    etc_inspector_create(&o->insp, o->dump, o->buf, &io, err) < 0)
		return -1;
	return etc_inspector_link(o->insp, o->rec, NULL, err);
}

static void close_cnn(opened *o)
{
	etc_inspector_free(o->insp);
	etc_etrecord_free(o->rec);
	etc_debug_buffer_free(o->buf);
	etc_etdump_free(o->dump);
}

/* block and method NULL are "Execute" and "forward" (accuracy.h) */
static void accuracy_null_block(void)
{
	opened o = {0};
	etc_error err;
	etc_error_clear(&err);
	CHECK(open_cnn(&o, &err) == 0);
	if (!o.insp)
		return;
	etc_reference_set set = {.torchsave = etc_etrecord_reference_outputs(o.rec),
	                         .name = etc_etrecord_name(o.rec)};
	etc_accuracy_options ao;
	etc_accuracy_options_init(&ao);
	etc_accuracy *with_defaults = NULL, *with_null = NULL;
	CHECK(etc_accuracy_run(&with_defaults, o.insp, &set, &ao, &err) == 0);
	ao.block = NULL;
	ao.method = NULL;
	CHECK(etc_accuracy_run(&with_null, o.insp, &set, &ao, &err) == 0);
	CHECK(with_defaults && with_null &&
	      etc_accuracy_row_count(with_defaults) == etc_accuracy_row_count(with_null) &&
	      etc_accuracy_row_count(with_null) == 3);
	if (with_null)
		CHECK_STR(etc_accuracy_options_get(with_null)->block, "Execute");
	etc_accuracy_free(with_defaults);
	etc_accuracy_free(with_null);
	close_cnn(&o);
}

/* a NULL count is named, not reported as an index out of range */
static void run_debug_null(void)
{
	opened o = {0};
	etc_error err;
	etc_error_clear(&err);
	CHECK(open_cnn(&o, &err) == 0);
	if (!o.insp)
		return;
	size_t block = 0;
	CHECK(etc_inspector_block_find(o.insp, "Execute", &block) != NULL);
	uint32_t n = 0;
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 0, &n, &err) == 0 && n == 1);
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 0, NULL, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "NULL n") != NULL && !strstr(err.message, "range"));
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 4, &n, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "NULL out") != NULL);
	CHECK(etc_inspector_run_debug(o.insp, block, 999, 0, NULL, 0, &n, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "out of range") != NULL);
	close_cnn(&o);
}

int main(void)
{
	const char *src = getenv("ETC_SRC");
	snprintf(root, sizeof root, "%s", src && *src ? src : ".");
	if (root[0] && root[strlen(root) - 1] != '/')
		strncat(root, "/", sizeof root - strlen(root) - 1);
	CHECK_GROUP(accuracy_null_block);
	CHECK_GROUP(run_debug_null);
	return check_report("test_api_misuse");
}
