/*
 * gen_etdump.c - writes a synthetic ETDump (size-prefixed FlatBuffer) and its
 * debug buffer, shaped like the ExecuTorch runtime's ETDumpGen output, for
 * benchmarks. Test-side code: not part of the library.
 *
 * Layout (FORMATS.md §1): run_data[0] is "Default" with Method::init and
 * Program::load_method; then `runs` "Execute" runs. In each, op instruction i
 * logs (optionally) one float32 debug tensor of `numel` elements, then
 * native_call_<op>.out, then OPERATOR_CALL, all with chain 0 and instruction
 * i; the run ends with Method::execute (chain -1, instruction 0). Tensor data
 * goes to the debug buffer at increasing 64-aligned offsets running across
 * the whole file; the same instruction logs the same values in every run, so
 * merged runs agree. Durations are random, seeded.
 *
 * The FlatBuffer is built front to back: a parent is written first with
 * placeholder references that are patched when the child is written (a
 * uoffset always points forward). Vtables are shared (deduplicated). Every
 * scalar is aligned to its size relative to byte 0 of the file, prefix
 * included, as the runtime does; the file is padded to a multiple of 8.
 *
 * Usage: gen_etdump [--runs R] [--events E] [--numel N] [--seed S]
 *                   [--noise-ppm P] [--etdump PATH] [--debug-buffer PATH]
 *   P > 0 adds uniform noise of amplitude P * 1e-6 (from the seeded stream)
 *   to every tensor value: a "reference" run close to the P = 0 run.
 *   E is the number of events per Execute run (rounded down to whole ops,
 *   at least one op); N = 0 writes no debug events (and no debug buffer
 *   unless a path is given, which then gets an empty file).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- output buffer -------------------------------------------------------- */

typedef struct obuf {
	uint8_t *p;
	size_t len, cap;
} obuf;

static void die(const char *msg)
{
	fprintf(stderr, "gen_etdump: %s\n", msg);
	exit(1);
}

static void ob_reserve(obuf *b, size_t extra)
{
	if (b->len + extra <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 1 << 16;
	while (cap < b->len + extra)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p)
		die("out of memory");
	b->p = p;
	b->cap = cap;
}

static size_t ob_zero(obuf *b, size_t n)
{
	ob_reserve(b, n);
	size_t at = b->len;
	memset(b->p + at, 0, n);
	b->len += n;
	return at;
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Pads with zeros until (len + extra) % a == 0 (file-relative). */
static void ob_align(obuf *b, size_t a, size_t extra)
{
	while ((b->len + extra) % a)
		ob_zero(b, 1);
}

/* Writes the uoffset at `field` (file position) so that it points at `target`. */
static void patch_ref(obuf *b, size_t field, size_t target)
{
	if (target <= field)
		die("internal error: backward reference");
	put_le(b->p + field, target - field, 4);
}

/* --- tables --------------------------------------------------------------- */

#define MAXF 8

typedef struct field {
	int slot;
	int size;     /* 1, 4 or 8 bytes; refs are 4 */
	uint64_t val; /* scalar value (ignored for refs) */
	int is_ref;
} field;

typedef struct vt_entry {
	uint16_t words[2 + MAXF];
	int nwords;
	size_t pos; /* file position of the vtable */
} vt_entry;

static vt_entry vt_cache[64];
static int vt_count;

/*
 * Writes a table with the given fields (at most one per slot) and returns the
 * positions of each field in field_pos[]. Fields are packed largest first
 * after the soffset so that no padding is needed inside the table; when the
 * table holds an 8-byte field it starts at 4 mod 8, putting those fields on
 * 8-byte boundaries.
 */
static size_t write_table(obuf *b, const field *f, int nf, size_t *field_pos)
{
	int order[MAXF], n = 0;
	for (int sz = 8; sz >= 1; sz /= 2)
		for (int i = 0; i < nf; i++)
			if (f[i].size == sz)
				order[n++] = i;
	int off[MAXF], at = 4, maxslot = -1;
	for (int k = 0; k < n; k++) {
		int i = order[k];
		off[i] = at;
		at += f[i].size;
		if (f[i].slot > maxslot)
			maxslot = f[i].slot;
	}
	int tbl_len = (at + 3) & ~3;
	/* vtable */
	vt_entry v;
	memset(&v, 0, sizeof v);
	v.nwords = 2 + maxslot + 1;
	v.words[0] = (uint16_t)(2 * v.nwords);
	v.words[1] = (uint16_t)tbl_len;
	for (int i = 0; i < nf; i++)
		v.words[2 + f[i].slot] = (uint16_t)off[i];
	size_t vt = 0;
	for (int i = 0; i < vt_count; i++)
		if (vt_cache[i].nwords == v.nwords &&
		    !memcmp(vt_cache[i].words, v.words, sizeof v.words[0] * (size_t)v.nwords)) {
			vt = vt_cache[i].pos;
			break;
		}
	if (!vt) {
		ob_align(b, 2, 0);
		vt = ob_zero(b, 2 * (size_t)v.nwords);
		for (int i = 0; i < v.nwords; i++)
			put_le(b->p + vt + 2 * i, v.words[i], 2);
		if (vt_count < 64) {
			v.pos = vt;
			vt_cache[vt_count++] = v;
		}
	}
	int has8 = 0;
	for (int i = 0; i < nf; i++)
		has8 |= f[i].size == 8;
	/* 8-byte fields come first, right after the 4-byte soffset at T */
	ob_align(b, has8 ? 8 : 4, has8 ? 4 : 0);
	size_t t = ob_zero(b, (size_t)tbl_len);
	put_le(b->p + t, (uint64_t)(uint32_t)(int32_t)(t - vt), 4);
	for (int i = 0; i < nf; i++) {
		field_pos[i] = t + (size_t)off[i];
		if (!f[i].is_ref)
			put_le(b->p + t + off[i], f[i].val, (size_t)f[i].size);
	}
	return t;
}

static size_t write_string(obuf *b, const char *s)
{
	size_t n = strlen(s);
	ob_align(b, 4, 0);
	size_t at = ob_zero(b, 4 + n + 1);
	put_le(b->p + at, n, 4);
	memcpy(b->p + at + 4, s, n);
	return at;
}

/* A vector of `count` elements of `esz` bytes; returns the count position. */
static size_t write_vector(obuf *b, uint32_t count, size_t esz)
{
	ob_align(b, esz > 4 ? esz : 4, 4);
	size_t at = ob_zero(b, 4 + (size_t)count * esz);
	put_le(b->p + at, count, 4);
	return at;
}

/* --- random --------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_range(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

/* --- events --------------------------------------------------------------- */

static const char *const ops[] = {"convolution", "add",          "mul",      "relu",
                                  "addmm",       "linear",       "_softmax", "native_layer_norm",
                                  "view_copy",   "permute_copy", "bmm",      "gelu",
                                  "mean",        "sub",          "div",      "clone"};
#define NOPS (sizeof ops / sizeof ops[0])

/* Writes an Event holding a ProfileEvent into the uoffset slot `slot_pos`. */
static void profile_event(obuf *b, size_t slot_pos, const char *name, int32_t chain, int32_t instr,
                          uint64_t start, uint64_t end)
{
	size_t fp[MAXF];
	field ev[] = {{0, 4, 0, 1}};
	size_t e = write_table(b, ev, 1, fp);
	patch_ref(b, slot_pos, e);
	size_t ev_ref = fp[0];
	field pf[MAXF];
	int n = 0;
	pf[n++] = (field){0, 4, 0, 1};
	if (chain)
		pf[n++] = (field){1, 4, (uint32_t)chain, 0};
	pf[n++] = (field){2, 4, (uint32_t)instr, 0};
	pf[n++] = (field){6, 8, start, 0};
	pf[n++] = (field){7, 8, end, 0};
	size_t p = write_table(b, pf, n, fp);
	patch_ref(b, ev_ref, p);
	patch_ref(b, fp[0], write_string(b, name));
}

/* An Event holding a DebugEvent with a float32 [numel] tensor at `offset`. */
static void debug_event(obuf *b, size_t slot_pos, int32_t instr, uint64_t numel, int64_t offset)
{
	size_t fp[MAXF];
	field ev[] = {{2, 4, 0, 1}};
	size_t e = write_table(b, ev, 1, fp);
	patch_ref(b, slot_pos, e);
	size_t ev_ref = fp[0];
	field df[] = {{1, 4, (uint32_t)instr, 0}, {2, 4, 0, 1}};
	size_t d = write_table(b, df, 2, fp);
	patch_ref(b, ev_ref, d);
	size_t val_ref = fp[1];
	field vf[] = {{0, 1, 5 /* Tensor */, 0}, {1, 4, 0, 1}};
	size_t v = write_table(b, vf, 2, fp);
	patch_ref(b, val_ref, v);
	size_t tensor_ref = fp[1];
	field tf[4];
	int n = 0;
	tf[n++] = (field){0, 1, 6 /* FLOAT */, 0};
	tf[n++] = (field){1, 4, 0, 1};
	tf[n++] = (field){2, 4, 0, 1};
	if (offset)
		tf[n++] = (field){3, 8, (uint64_t)offset, 0};
	size_t t = write_table(b, tf, n, fp);
	patch_ref(b, tensor_ref, t);
	size_t sizes_ref = fp[1], strides_ref = fp[2];
	size_t sv = write_vector(b, 1, 8);
	put_le(b->p + sv + 4, numel, 8);
	patch_ref(b, sizes_ref, sv);
	size_t st = write_vector(b, 1, 8);
	put_le(b->p + st + 4, 1, 8);
	patch_ref(b, strides_ref, st);
}

/* Writes a RunData into the uoffset slot `slot_pos`; returns its event count. */
typedef struct run_ctx {
	obuf *b;
	FILE *dbg;
	uint64_t dbg_len; /* bytes written to the debug buffer */
	uint64_t numel;
	uint32_t nops;
	uint64_t clock;
	const uint64_t *base; /* per-op base duration */
	float *data;          /* scratch for tensor values */
	uint64_t noise_ppm;   /* noise amplitude in millionths */
} run_ctx;

static void write_floats(run_ctx *c, uint32_t instr)
{
	/* Deterministic per instruction so merged runs agree. */
	uint64_t saved = rng_state;
	rng_state = 0x1234567ULL * (instr + 1);
	for (uint64_t k = 0; k < c->numel; k++) {
		int64_t r = (int64_t)(rnd() >> 40) - (1LL << 23);
		c->data[k] = (float)r / (float)(1 << 20);
	}
	rng_state = saved;
	for (uint64_t k = 0; c->noise_ppm && k < c->numel; k++)
		c->data[k] += (float)((double)c->noise_ppm * 1e-6 *
		                      ((double)(rnd() >> 11) / 4503599627370496.0 - 1.0));
	if (fwrite(c->data, 4, c->numel, c->dbg) != c->numel)
		die("cannot write the debug buffer");
	c->dbg_len += 4 * c->numel;
}

static uint32_t execute_run(run_ctx *c, size_t slot_pos)
{
	obuf *b = c->b;
	size_t fp[MAXF];
	uint32_t per_op = c->numel ? 3 : 2;
	uint32_t nev = c->nops * per_op + 1;
	field rf[] = {{0, 4, 0, 1}, {3, 4, 0, 1}};
	size_t r = write_table(b, rf, 2, fp);
	patch_ref(b, slot_pos, r);
	size_t events_ref = fp[1];
	patch_ref(b, fp[0], write_string(b, "Execute"));
	size_t ev = write_vector(b, nev, 4);
	patch_ref(b, events_ref, ev);
	size_t slot = ev + 4;
	uint64_t run_start = c->clock;
	c->clock += rnd_range(100, 500);
	char name[64];
	for (uint32_t i = 0; i < c->nops; i++) {
		uint64_t base = c->base[i];
		uint64_t dur = base - base / 10 + rnd_range(0, base / 5);
		uint64_t op_start = c->clock;
		uint64_t call_start = op_start + rnd_range(20, 200);
		uint64_t call_end = call_start + dur;
		uint64_t op_end = call_end + rnd_range(20, 200);
		if (c->numel) {
			static const char zeros[64];
			uint64_t pad = (64 - c->dbg_len % 64) % 64;
			if (pad && fwrite(zeros, 1, pad, c->dbg) != pad)
				die("cannot write the debug buffer");
			c->dbg_len += pad;
			debug_event(b, slot, (int32_t)i, c->numel, (int64_t)c->dbg_len);
			slot += 4;
			write_floats(c, i);
		}
		snprintf(name, sizeof name, "native_call_%s.out", ops[i % NOPS]);
		profile_event(b, slot, name, 0, (int32_t)i, call_start, call_end);
		slot += 4;
		profile_event(b, slot, "OPERATOR_CALL", 0, (int32_t)i, op_start, op_end);
		slot += 4;
		c->clock = op_end + rnd_range(10, 100);
	}
	c->clock += rnd_range(100, 500);
	profile_event(b, slot, "Method::execute", -1, 0, run_start, c->clock);
	c->clock += rnd_range(1000, 5000);
	return nev;
}

static uint64_t parse_num(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (!*v || *end || errno || *v == '-') {
		fprintf(stderr, "gen_etdump: %s needs a non-negative number, not '%s'\n", opt, v);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	uint64_t runs = 10, events = 1000, numel = 0, seed = 1, noise_ppm = 0;
	const char *out = "gen.etdp", *dbg_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf(
			    "Usage: gen_etdump [--runs R] [--events E per run] [--numel N] "
			    "[--seed S] [--noise-ppm P] [--etdump PATH] [--debug-buffer PATH]\n");
			return 0;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "gen_etdump: unknown option or missing value: %s\n", a);
			return 2;
		}
		const char *v = argv[++i];
		if (!strcmp(a, "--runs"))
			runs = parse_num(a, v);
		else if (!strcmp(a, "--events"))
			events = parse_num(a, v);
		else if (!strcmp(a, "--numel"))
			numel = parse_num(a, v);
		else if (!strcmp(a, "--seed"))
			seed = parse_num(a, v);
		else if (!strcmp(a, "--noise-ppm"))
			noise_ppm = parse_num(a, v);
		else if (!strcmp(a, "--etdump"))
			out = v;
		else if (!strcmp(a, "--debug-buffer"))
			dbg_path = v;
		else {
			fprintf(stderr, "gen_etdump: unknown option %s\n", a);
			return 2;
		}
	}
	if (runs > 1000000 || events > 100000000 || numel > (1ULL << 32)) {
		fprintf(stderr, "gen_etdump: values too large\n");
		return 2;
	}
	if (numel && !dbg_path)
		dbg_path = "gen.bin";
	rng_state = seed;

	run_ctx c;
	memset(&c, 0, sizeof c);
	obuf b = {0};
	c.b = &b;
	c.numel = numel;
	c.noise_ppm = noise_ppm;
	uint32_t per_op = numel ? 3 : 2;
	c.nops = events > 1 ? (uint32_t)((events - 1) / per_op) : 0;
	if (c.nops == 0)
		c.nops = 1;
	uint64_t *base = malloc(c.nops * sizeof *base);
	if (!base || (numel && !(c.data = malloc(numel * sizeof(float)))))
		die("out of memory");
	for (uint32_t i = 0; i < c.nops; i++)
		base[i] = rnd_range(1000, 200000);
	c.base = base;
	if (dbg_path) {
		c.dbg = fopen(dbg_path, "wb");
		if (!c.dbg)
			die("cannot create the debug buffer");
	}

	/* size prefix, root offset, identifier */
	ob_zero(&b, 12);
	memcpy(b.p + 8, "ED00", 4);
	size_t fp[MAXF];
	field root[] = {{1, 4, 0, 1}};
	size_t t = write_table(&b, root, 1, fp);
	put_le(b.p + 4, t - 4, 4);
	size_t rd = write_vector(&b, (uint32_t)(runs + 1), 4);
	patch_ref(&b, fp[0], rd);

	/* The Default run: Method::init inside Program::load_method. */
	c.clock = 1000000 + rnd_range(0, 1000);
	field rf[] = {{0, 4, 0, 1}, {3, 4, 0, 1}};
	size_t r = write_table(&b, rf, 2, fp);
	patch_ref(&b, rd + 4, r);
	size_t events_ref = fp[1];
	patch_ref(&b, fp[0], write_string(&b, "Default"));
	size_t ev = write_vector(&b, 2, 4);
	patch_ref(&b, events_ref, ev);
	uint64_t load_start = c.clock, init_start = load_start + rnd_range(100, 1000);
	uint64_t init_end = init_start + rnd_range(10000, 100000);
	uint64_t load_end = init_end + rnd_range(100, 1000);
	profile_event(&b, ev + 4, "Method::init", -1, 0, init_start, init_end);
	profile_event(&b, ev + 8, "Program::load_method", -1, 0, load_start, load_end);
	c.clock = load_end + rnd_range(1000, 10000);
	uint64_t total = 2;
	for (uint64_t k = 0; k < runs; k++)
		total += execute_run(&c, rd + 4 + 4 * (k + 1));

	ob_align(&b, 8, 0);
	put_le(b.p, b.len - 4, 4);
	FILE *f = fopen(out, "wb");
	if (!f || fwrite(b.p, 1, b.len, f) != b.len || fclose(f) != 0)
		die("cannot write the ETDump");
	if (c.dbg && fclose(c.dbg) != 0)
		die("cannot write the debug buffer");
	fprintf(stderr,
	        "gen_etdump: %s: %" PRIu64 " bytes, %" PRIu64 " runs + Default, %u ops/run, "
	        "%" PRIu64 " events total",
	        out, (uint64_t)b.len, runs, c.nops, total);
	if (dbg_path)
		fprintf(stderr, "; %s: %" PRIu64 " bytes", dbg_path, c.dbg_len);
	fputc('\n', stderr);
	free(base);
	free(c.data);
	free(b.p);
	return 0;
}
