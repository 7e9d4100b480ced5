/*
 * test_bundled.c - the BundledProgram reader (src/format/bundled_program.c)
 * on the real files of tests/data/realexport: every test case's inputs and
 * expected outputs equal <m>_io.npz's input<k>/expected<k> bit for bit (the
 * .npz read by the independent npz reader), the embedded program is the
 * .pte's bytes where upstream put them, reference tensors and accessors
 * agree; then every truncation and many byte mutations of a real file
 * either fail cleanly or give views inside the file.
 */
#include "check.h"
#include "etcompare/bundled.h"
#include "etcompare/npz.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* value i of test case tc equals array `name` of the .npz: dtype, shape, bytes */
static void same_as_npz(const etc_bundled *bp, size_t tc, bool expected, const etc_npz *z,
                        const char *name)
{
	etc_error err;
	etc_bundled_value v;
	etc_tensor a;
	int k = etc_npz_find(z, name);
	CHECK(k >= 0);
	if (k < 0)
		return;
	CHECK(etc_npz_array(z, (size_t)k, &a, &err) == 0);
	CHECK(etc_bundled_value_count(bp, 0, tc, expected) == 1);
	CHECK(etc_bundled_get(bp, 0, tc, expected, 0, &v, &err) == 0);
	CHECK(v.kind == ETC_BUNDLED_TENSOR);
	CHECK(v.row_major);
	CHECK(v.tensor.scalar_type == a.scalar_type);
	CHECK(v.tensor.ndim == a.ndim);
	for (uint32_t d = 0; d < a.ndim && d < v.tensor.ndim; d++)
		CHECK(etc_tensor_size(&v.tensor, d) == etc_tensor_size(&a, d));
	CHECK(v.tensor.numel == a.numel && v.tensor.nbytes == a.nbytes);
	CHECK(v.tensor.nbytes && memcmp(v.tensor.data, a.data, (size_t)a.nbytes) == 0);
	CHECK(v.dim_order && v.dim_order_len == a.ndim);

	etc_reftensor rt;
	CHECK(etc_bundled_tensor(bp, 0, tc, expected, 0, &rt, &err) == 0);
	CHECK(rt.dtype == a.scalar_type && rt.rank == a.ndim && rt.numel == a.numel);
	CHECK(rt.data == v.tensor.data);
	for (uint32_t d = 0; d < rt.rank; d++)
		CHECK(rt.shape[d] == etc_tensor_size(&a, d));
}

static void real_file(const char *src, const char *model, uint64_t pte_size)
{
	char path[1024], npz[1024];
	snprintf(path, sizeof path, "%s/tests/data/realexport/%s.bpte", src, model);
	snprintf(npz, sizeof npz, "%s/tests/data/realexport/%s_io.npz", src, model);
	etc_error err;
	etc_bundled *bp = NULL;
	etc_npz *z = NULL;
	CHECK(etc_bundled_open(&bp, path, &err) == 0);
	CHECK(etc_npz_open(&z, npz, &err) == 0);
	if (!bp || !z) {
		fprintf(stderr, "%s\n", err.message);
		etc_bundled_free(bp);
		etc_npz_free(z);
		return;
	}
	CHECK(etc_bundled_version(bp) == 2);
	CHECK(etc_bundled_method_count(bp) == 1);
	CHECK_STR(etc_bundled_method_name(bp, 0).ptr, "forward");
	CHECK(etc_bundled_method_find(bp, "forward") == 0);
	CHECK(etc_bundled_method_find(bp, "forwar") == -1);
	CHECK(etc_bundled_test_case_count(bp, 0) == 2);
	CHECK(etc_bundled_test_case_count(bp, 1) == 0);
	for (size_t tc = 0; tc < 2; tc++) {
		char name[32];
		snprintf(name, sizeof name, "input%zu", tc);
		same_as_npz(bp, tc, false, z, name);
		snprintf(name, sizeof name, "expected%zu", tc);
		same_as_npz(bp, tc, true, z, name);
	}
	etc_bundled_value v;
	CHECK(etc_bundled_get(bp, 0, 2, false, 0, &v, &err) == ETC_ERR_USAGE);
	CHECK(etc_bundled_get(bp, 0, 0, true, 1, &v, &err) == ETC_ERR_USAGE);
	CHECK(etc_bundled_get(bp, 1, 0, true, 0, &v, &err) == ETC_ERR_USAGE);

	/* the program: the .pte (its size from the fixtures' README, "ET12" at its
	 * byte 4), 32-byte aligned in the file as the schema's force_align says */
	uint64_t off, size;
	const uint8_t *prog = etc_bundled_program(bp, &off, &size);
	size_t flen;
	uint8_t *file = slurp(path, &flen);
	CHECK(size == pte_size && off + size <= flen && memcmp(prog + 4, "ET12", 4) == 0);
	CHECK(file && off % 32 == 0 && memcmp(file + off, prog, (size_t)size) == 0);

	/* the same bytes from memory */
	etc_bundled *mem = NULL;
	CHECK(file && etc_bundled_wrap(&mem, file, flen, "mem.bpte", &err) == 0);
	CHECK(mem && etc_bundled_test_case_count(mem, 0) == 2);
	etc_bundled_free(mem);
	free(file);
	etc_bundled_free(bp);
	etc_npz_free(z);
}

/* Every prefix, and single-byte mutations: a clean error or views inside the input. */
static void mutations(const char *src)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/data/realexport/mlp.bpte", src);
	size_t len;
	uint8_t *file = slurp(path, &len);
	CHECK(file != NULL);
	if (!file)
		return;
	size_t ok = 0, failed = 0;
	for (size_t n = 0; n < len; n += n < 4096 ? 1 : 61) {
		uint8_t *p = malloc(n ? n : 1);
		memcpy(p, file, n);
		etc_bundled *bp = NULL;
		etc_error err;
		if (etc_bundled_wrap(&bp, p, n, "cut.bpte", &err) == 0)
			ok++;
		else
			failed += err.message[0] != '\0';
		etc_bundled_free(bp);
		free(p);
	}
	CHECK(ok == 0 && failed > 0); /* a cut file never verifies */
	uint32_t seed = 12345;
	for (int round = 0; round < 3000; round++) {
		uint8_t *p = malloc(len);
		memcpy(p, file, len);
		seed = seed * 1103515245u + 12345u;
		size_t at = (seed >> 8) % 2048; /* the structure is at the start and end */
		if (seed & 1)
			at = len - 1 - at;
		p[at] ^= (uint8_t)(1u << (seed >> 28 & 7));
		etc_bundled *bp = NULL;
		etc_error err;
		if (etc_bundled_wrap(&bp, p, len, "mut.bpte", &err) == 0) {
			for (size_t m = 0; m < etc_bundled_method_count(bp); m++)
				for (size_t tc = 0; tc < etc_bundled_test_case_count(bp, m); tc++)
					for (int e = 0; e < 2; e++)
						for (size_t i = 0;
						     i < etc_bundled_value_count(bp, m, tc, e);
						     i++) {
							etc_bundled_value v;
							CHECK(etc_bundled_get(bp, m, tc, e, i, &v,
							                      &err) == 0);
							if (v.kind != ETC_BUNDLED_TENSOR)
								continue;
							const uint8_t *d = v.tensor.data;
							CHECK(d >= p &&
							      d + v.tensor.nbytes <= p + len);
						}
		} else {
			CHECK(err.message[0] != '\0' && err.status < 0);
		}
		etc_bundled_free(bp);
		free(p);
	}
	free(file);
}

int main(void)
{
	const char *src = getenv("ETC_SRC");
	if (!src)
		src = ".";
	const char *models[] = {"mlp", "cnn", "tiny_transformer", "qcnn"};
	const uint64_t pte_sizes[] = {31016, 22656, 47364, 12688};
	for (size_t i = 0; i < 4; i++)
		real_file(src, models[i], pte_sizes[i]);
	mutations(src);
	etc_error err;
	etc_bundled *bp = NULL;
	CHECK(etc_bundled_open(&bp, "/nonexistent.bpte", &err) == ETC_ERR_IO && !bp);
	CHECK(etc_bundled_wrap(&bp,
	                       "\x10\x00\x00\x00"
	                       "BP07\x00\x00\x00\x00",
	                       12, "old.bpte", &err) == ETC_ERR_UNSUPPORTED);
	CHECK(strstr(err.message, "BP07") != NULL);
	CHECK(etc_bundled_wrap(&bp,
	                       "\x10\x00\x00\x00"
	                       "ED00\x00\x00\x00\x00",
	                       12, "x.etdp", &err) == ETC_ERR_FORMAT);
	return check_report("test_bundled");
}
