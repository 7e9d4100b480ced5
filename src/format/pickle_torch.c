/*
 * pickle_torch.c - what the pickle machine may name and call: the GLOBAL
 * allow-list (GLOBAL, STACK_GLOBAL), storages by persistent id (BINPERSID)
 * and REDUCE's data constructors: the tensor and parameter rebuilds,
 * collections.OrderedDict, bytes, _codecs.encode and
 * torch.storage._load_from_bytes (handed to torch_legacy.c, which runs the
 * same machine on the embedded stream).
 */
#include "format/pickle_private.h"
#include "format/torch_legacy.h"

#include <stdio.h>

static const global_def whitelist[] = {
    {"torch._utils._rebuild_tensor_v2", R_REBUILD_V2, -1},
    {"torch._utils._rebuild_tensor_v3", R_REBUILD_V3, -1},
    {"torch._utils._rebuild_parameter", R_REBUILD_PARAM, -1},
    {"collections.OrderedDict", R_ORDERED_DICT, -1},
    {"torch.storage._load_from_bytes", R_LOAD_FROM_BYTES, -1},
    {"_codecs.encode", R_CODECS_ENCODE, -1},
    {"__builtin__.bytes", R_BYTES, -1},
    {"builtins.bytes", R_BYTES, -1},
    {"torch.FloatStorage", R_STORAGE_TYPE, ETC_FLOAT},
    {"torch.DoubleStorage", R_STORAGE_TYPE, ETC_DOUBLE},
    {"torch.HalfStorage", R_STORAGE_TYPE, ETC_HALF},
    {"torch.BFloat16Storage", R_STORAGE_TYPE, ETC_BFLOAT16},
    {"torch.ByteStorage", R_STORAGE_TYPE, ETC_BYTE},
    {"torch.CharStorage", R_STORAGE_TYPE, ETC_CHAR},
    {"torch.ShortStorage", R_STORAGE_TYPE, ETC_SHORT},
    {"torch.IntStorage", R_STORAGE_TYPE, ETC_INT},
    {"torch.LongStorage", R_STORAGE_TYPE, ETC_LONG},
    {"torch.BoolStorage", R_STORAGE_TYPE, ETC_BOOL},
    {"torch.UntypedStorage", R_STORAGE_TYPE, -1},
    {"torch.float32", R_DTYPE, ETC_FLOAT},
    {"torch.float64", R_DTYPE, ETC_DOUBLE},
    {"torch.float16", R_DTYPE, ETC_HALF},
    {"torch.bfloat16", R_DTYPE, ETC_BFLOAT16},
    {"torch.uint8", R_DTYPE, ETC_BYTE},
    {"torch.int8", R_DTYPE, ETC_CHAR},
    {"torch.int16", R_DTYPE, ETC_SHORT},
    {"torch.int32", R_DTYPE, ETC_INT},
    {"torch.int64", R_DTYPE, ETC_LONG},
    {"torch.bool", R_DTYPE, ETC_BOOL},
    {"torch.uint16", R_DTYPE, ETC_UINT16},
    {"torch.uint32", R_DTYPE, ETC_UINT32},
    {"torch.uint64", R_DTYPE, ETC_UINT64},
    {"torch.bits16", R_DTYPE, ETC_BITS16},
    {"torch.float8_e5m2", R_DTYPE, ETC_FLOAT8E5M2},
    {"torch.float8_e4m3fn", R_DTYPE, ETC_FLOAT8E4M3FN},
    {"torch.float8_e5m2fnuz", R_DTYPE, ETC_FLOAT8E5M2FNUZ},
    {"torch.float8_e4m3fnuz", R_DTYPE, ETC_FLOAT8E4M3FNUZ},
};

/* ---- torch constructors ----------------------------------------------- */

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int int_arg(vm *m, const etc_pyobj *a, const char *what, int64_t *out)
{
	if (a->kind == ETC_PY_INT) {
		*out = a->u.i;
		return 0;
	}
	if (a->kind == ETC_PY_BOOL) {
		*out = a->u.b;
		return 0;
	}
	return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s is a %s, expected an int", what,
	                        etc_pykind_name(a->kind));
}

static int int_tuple(vm *m, const etc_pyobj *a, const char *what)
{
	if (a->kind != ETC_PY_TUPLE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "tensor %s is a %s, expected a tuple",
		                        what, etc_pykind_name(a->kind));
	if (a->len > ETC_TORCHSAVE_MAX_NDIM)
		return etc_pickle_fail_(m, ETC_ERR_LIMIT,
		                        "tensor has %u dimensions, at most %d are supported",
		                        a->len, ETC_TORCHSAVE_MAX_NDIM);
	for (uint32_t i = 0; i < a->len; i++)
		if (a->u.items[i]->kind != ETC_PY_INT)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "tensor %s[%u] is a %s, expected an int", what, i,
			                        etc_pykind_name(a->u.items[i]->kind));
	return 0;
}

/*
 * _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) and _rebuild_tensor_v3(..., backward_hooks,
 * dtype[, metadata]): a strided view of the storage, checked to lie inside it.
 */
static int rebuild_tensor(vm *m, const etc_pyobj *args, bool v3, etc_pyobj **out)
{
	const char *fn = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
	uint32_t lo = v3 ? 7 : 6;
	if (args->len != lo && args->len != lo + 1)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s takes %u or %u arguments, got %u",
		                        fn, lo, lo + 1, args->len);
	etc_pyobj *const *a = args->u.items;
	if (a[0]->kind != ETC_PY_STORAGE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "%s: first argument is a %s, expected a storage", fn,
		                        etc_pykind_name(a[0]->kind));
	const etc_pystorage *st = a[0]->u.storage;
	int64_t offset = 0, requires_grad = 0;
	ETC_TRY(int_arg(m, a[1], "tensor storage_offset", &offset));
	ETC_TRY(int_tuple(m, a[2], "size"));
	ETC_TRY(int_tuple(m, a[3], "stride"));
	ETC_TRY(int_arg(m, a[4], "tensor requires_grad", &requires_grad));
	if (a[5]->kind != ETC_PY_DICT && a[5]->kind != ETC_PY_NONE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "%s: backward_hooks is a %s, expected a dict", fn,
		                        etc_pykind_name(a[5]->kind));
	int type = st->scalar_type;
	if (v3) {
		if (a[6]->kind != ETC_PY_GLOBAL || a[6]->u.global->role != R_DTYPE)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "%s: dtype argument is a %s, expected a "
			                        "torch dtype",
			                        fn, etc_pykind_name(a[6]->kind));
		type = a[6]->u.global->scalar_type;
		if (st->scalar_type >= 0 && st->scalar_type != type)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "%s: dtype %s but storage '%s' holds %s", fn,
			                        etc_scalar_type_name(type), st->key,
			                        etc_scalar_type_name(st->scalar_type));
	} else if (type < 0) {
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s: storage '%s' is untyped", fn,
		                        st->key);
	}
	uint64_t esz = etc_scalar_type_size(type);
	uint32_t ndim = a[2]->len;
	if (a[3]->len != ndim)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "tensor has %u sizes but %u strides",
		                        ndim, a[3]->len);
	if (offset < 0)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "negative storage offset %lld",
		                        (long long)offset);
	uint64_t numel = 1, last = (uint64_t)offset;
	for (uint32_t d = 0; d < ndim; d++) {
		int64_t size = a[2]->u.items[d]->u.i, stride = a[3]->u.items[d]->u.i;
		if (size < 0)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "negative size %lld in dimension %u",
			                        (long long)size, d);
		if (stride < 0)
			return etc_pickle_fail_(
			    m, ETC_ERR_FORMAT,
			    "negative stride %lld in dimension %u (not supported)",
			    (long long)stride, d);
		if (!etc_mul_u64(numel, (uint64_t)size, &numel))
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "tensor element count overflows");
	}
	uint64_t nbytes;
	if (!etc_mul_u64(numel, esz, &nbytes))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "tensor byte size overflows");
	/* Elements available in the storage (untyped storages count bytes). */
	uint64_t avail = st->scalar_type >= 0 ? st->numel : st->nbytes / esz;
	if (numel > 0) {
		for (uint32_t d = 0; d < ndim; d++) {
			uint64_t span;
			if (!etc_mul_u64((uint64_t)a[2]->u.items[d]->u.i - 1,
			                 (uint64_t)a[3]->u.items[d]->u.i, &span) ||
			    !etc_add_u64(last, span, &last))
				return etc_pickle_fail_(m, ETC_ERR_FORMAT,
				                        "tensor extent overflows");
		}
		if (last >= avail)
			return etc_pickle_fail_(
			    m, ETC_ERR_FORMAT,
			    "tensor (%llu elements, storage offset %lld) reaches element "
			    "%llu of storage '%s', which has only %llu %s elements",
			    (unsigned long long)numel, (long long)offset, (unsigned long long)last,
			    st->key, (unsigned long long)avail, etc_scalar_type_name(type));
	}
	etc_pytensor *t = etc_arena_alloc(m->arena, 1, sizeof *t);
	uint8_t *sizes = etc_arena_alloc(m->arena, ndim ? ndim : 1, 8);
	uint8_t *strides = etc_arena_alloc(m->arena, ndim ? ndim : 1, 8);
	if (!t || !sizes || !strides)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	bool contiguous = true;
	uint64_t expected = 1;
	for (uint32_t d = ndim; d-- > 0;) {
		uint64_t size = (uint64_t)a[2]->u.items[d]->u.i;
		uint64_t stride = (uint64_t)a[3]->u.items[d]->u.i;
		put_le64(sizes + 8 * (size_t)d, size);
		put_le64(strides + 8 * (size_t)d, stride);
		if (size != 1 && stride != expected)
			contiguous = false;
		expected *= size;
	}
	if (numel == 0)
		contiguous = true;
	t->tensor.scalar_type = type;
	t->tensor.ndim = ndim;
	t->tensor.nstrides = ndim;
	t->tensor.sizes_le = sizes;
	t->tensor.strides_le = strides;
	t->tensor.numel = numel;
	t->tensor.nbytes = nbytes;
	uint64_t first = numel ? (uint64_t)offset * esz : 0;
	t->tensor.offset = st->archive_offset >= 0 ? st->archive_offset + (int64_t)first : -1;
	/* A legacy stream's first pass has no bytes yet (torch_legacy.c). */
	t->tensor.data = contiguous && st->data ? st->data + first : NULL;
	t->storage = st->data;
	t->storage_nbytes = st->nbytes;
	t->storage_offset = offset;
	t->storage_key = st->key;
	t->location = st->location;
	t->contiguous = contiguous;
	t->requires_grad = requires_grad != 0;
	ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_TENSOR, out));
	(*out)->u.tensor = t;
	return 0;
}

/* _rebuild_parameter(tensor, requires_grad, backward_hooks) */
static int rebuild_parameter(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 3)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "_rebuild_parameter takes 3 arguments, got %u", args->len);
	if (args->u.items[0]->kind != ETC_PY_TENSOR)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "_rebuild_parameter: first argument is a %s, "
		                        "expected a tensor",
		                        etc_pykind_name(args->u.items[0]->kind));
	int64_t rg = 0;
	ETC_TRY(int_arg(m, args->u.items[1], "parameter requires_grad", &rg));
	etc_pytensor *t = etc_arena_alloc(m->arena, 1, sizeof *t);
	if (!t)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	*t = *args->u.items[0]->u.tensor;
	t->is_parameter = true;
	t->requires_grad = rg != 0;
	ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_TENSOR, out));
	(*out)->u.tensor = t;
	return 0;
}

/*
 * _codecs.encode(text, 'latin1'): protocol 2's spelling of bytes. Each code
 * point of the UTF-8 text (already checked well-formed) is one byte.
 */
static int codecs_encode(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 2 || args->u.items[0]->kind != ETC_PY_STR ||
	    args->u.items[1]->kind != ETC_PY_STR)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "_codecs.encode takes (str, 'latin1')");
	const etc_pyobj *enc = args->u.items[1];
	if (strcmp((const char *)enc->u.bytes, "latin1") != 0 &&
	    strcmp((const char *)enc->u.bytes, "latin-1") != 0)
		return etc_pickle_fail_(
		    m, ETC_ERR_FORMAT,
		    "_codecs.encode with encoding '%.40s' (only 'latin1' is read)",
		    (const char *)enc->u.bytes);
	etc_pyobj *text = args->u.items[0];
	if (text->attrs) {
		*out = text->attrs;
		return 0;
	}
	const uint8_t *s = text->u.bytes;
	uint32_t n = text->len, k = 0;
	uint8_t *dst = etc_arena_alloc(m->arena, n ? n : 1, 1);
	if (!dst)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (s[i] < 0x80) {
			dst[k++] = s[i];
		} else if ((s[i] & 0xfe) == 0xc2 && i + 1 < n) {
			dst[k++] = (uint8_t)(((s[i] & 0x1f) << 6) | (s[i + 1] & 0x3f));
			i++;
		} else {
			return etc_pickle_fail_(
			    m, ETC_ERR_FORMAT,
			    "_codecs.encode: character at text byte %u is not latin-1", i);
		}
	}
	ETC_TRY(etc_pickle_new_bytes_(m, dst, k, -1, out));
	text->attrs = *out;
	return 0;
}

/* torch.storage._load_from_bytes(b): b is a legacy torch.save stream. */
static int load_from_bytes(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 1 || args->u.items[0]->kind != ETC_PY_BYTES)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "torch.storage._load_from_bytes takes one bytes");
	if (m->o->legacy)
		return etc_pickle_fail_(
		    m, ETC_ERR_FORMAT,
		    "torch.storage._load_from_bytes inside a legacy torch.save stream");
	pybytes *b = (pybytes *)args->u.items[0]->u.blob;
	if (b->loaded) { /* read once: the same bytes reduced again are the same storage */
		*out = (etc_pyobj *)b->loaded;
		return 0;
	}
	char label[300];
	if (b->pos >= 0)
		snprintf(label, sizeof label, "%s byte %zu: torch.storage._load_from_bytes stream",
		         m->o->member ? m->o->member : "pickle", (size_t)b->pos);
	else
		snprintf(
		    label, sizeof label,
		    "%s byte %zu: torch.storage._load_from_bytes stream (decoded from latin-1)",
		    m->o->member ? m->o->member : "pickle", m->op_pos);
	etc_pickle_opts o = *m->o;
	o.member = etc_arena_strdup(m->arena, label, strlen(label));
	if (!o.member)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	o.base_offset = m->o->base_offset >= 0 && b->pos >= 0 ? m->o->base_offset + b->pos : -1;
	const etc_pyobj *root = NULL;
	ETC_TRY(etc_torch_legacy_read(m->arena, b->data, (size_t)b->size, &o, &root, m->err));
	b->loaded = root;
	*out = (etc_pyobj *)root;
	return 0;
}

int etc_pickle_op_reduce_(vm *m)
{
	etc_pyobj *args = NULL, *fn = NULL, *res = NULL;
	ETC_TRY(etc_pickle_pop_(m, &args, "REDUCE"));
	ETC_TRY(etc_pickle_pop_(m, &fn, "REDUCE"));
	if (args->kind != ETC_PY_TUPLE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "REDUCE: arguments are a %s, expected a tuple",
		                        etc_pykind_name(args->kind));
	if (fn->kind != ETC_PY_GLOBAL)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "REDUCE: a %s is not callable",
		                        etc_pykind_name(fn->kind));
	switch (fn->u.global->role) {
	case R_REBUILD_V2:
	case R_REBUILD_V3:
		ETC_TRY(rebuild_tensor(m, args, fn->u.global->role == R_REBUILD_V3, &res));
		break;
	case R_REBUILD_PARAM:
		ETC_TRY(rebuild_parameter(m, args, &res));
		break;
	case R_ORDERED_DICT:
		if (args->len != 0)
			return etc_pickle_fail_(
			    m, ETC_ERR_FORMAT,
			    "collections.OrderedDict called with %u arguments (torch.save "
			    "passes none)",
			    args->len);
		ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_DICT, &res));
		res->flags |= F_ORDERED;
		break;
	case R_LOAD_FROM_BYTES:
		ETC_TRY(load_from_bytes(m, args, &res));
		break;
	case R_CODECS_ENCODE:
		ETC_TRY(codecs_encode(m, args, &res));
		break;
	case R_BYTES:
		if (args->len != 0)
			return etc_pickle_fail_(
			    m, ETC_ERR_FORMAT,
			    "bytes() called with %u arguments (pickle passes none)", args->len);
		ETC_TRY(etc_pickle_new_bytes_(m, (const uint8_t *)"", 0, -1, &res));
		break;
	default:
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "REDUCE: GLOBAL %s is not callable",
		                        fn->u.global->name);
	}
	return etc_pickle_push_(m, res);
}

/* ('storage', storage_type, key, location, numel) */
int etc_pickle_op_persid_(vm *m)
{
	etc_pyobj *pid = NULL, *res = NULL;
	ETC_TRY(etc_pickle_pop_(m, &pid, "BINPERSID"));
	etc_pyobj *const *a = pid->u.items;
	uint32_t want = m->o->legacy ? 6 : 5;
	if (pid->kind != ETC_PY_TUPLE || pid->len != want || a[0]->kind != ETC_PY_STR ||
	    strcmp((const char *)a[0]->u.bytes, "storage") != 0)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "BINPERSID: persistent id is not a "
		                        "('storage', type, key, location, numel%s) tuple",
		                        m->o->legacy ? ", view_metadata" : "");
	if (m->o->legacy && a[5]->kind != ETC_PY_NONE)
		return etc_pickle_fail_(
		    m, ETC_ERR_UNSUPPORTED,
		    "BINPERSID: storage views (view_metadata %s, written by torch before "
		    "1.0) are not supported",
		    etc_pykind_name(a[5]->kind));
	if (a[1]->kind != ETC_PY_GLOBAL || a[1]->u.global->role != R_STORAGE_TYPE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "BINPERSID: storage type is a %s, not a torch "
		                        "storage class",
		                        etc_pykind_name(a[1]->kind));
	if (a[2]->kind != ETC_PY_STR || a[3]->kind != ETC_PY_STR || a[4]->kind != ETC_PY_INT)
		return etc_pickle_fail_(
		    m, ETC_ERR_FORMAT,
		    "BINPERSID: storage key, location and numel must be str, str, int");
	if (a[2]->len == 0 || memchr(a[2]->u.bytes, '\0', a[2]->len) ||
	    memchr(a[2]->u.bytes, '/', a[2]->len))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "BINPERSID: bad storage key");
	if (a[4]->u.i < 0)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "BINPERSID: negative storage size %lld",
		                        (long long)a[4]->u.i);
	if (!m->o->load)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "BINPERSID: storages are not available here");
	const etc_pystorage *st = NULL;
	ETC_TRY(m->o->load(m->o->ctx, (const char *)a[2]->u.bytes, a[1]->u.global->scalar_type,
	                   (const char *)a[3]->u.bytes, (uint64_t)a[4]->u.i, m->op_pos, &st,
	                   m->err));
	ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_STORAGE, &res));
	res->u.storage = st;
	return etc_pickle_push_(m, res);
}

/* Looks `name` ("module.attr") up in the whitelist and pushes it. */
static int resolve_global(vm *m, const char *name)
{
	for (size_t i = 0; i < sizeof whitelist / sizeof whitelist[0]; i++) {
		if (strcmp(whitelist[i].name, name) == 0) {
			etc_pyobj *g = NULL;
			ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_GLOBAL, &g));
			g->u.global = &whitelist[i];
			return etc_pickle_push_(m, g);
		}
	}
	if (strncmp(name, "torch.", 6) == 0 && (strstr(name, "Complex") || strstr(name, "complex")))
		return etc_pickle_fail_(
		    m, ETC_ERR_FORMAT,
		    "forbidden GLOBAL %s (complex tensors are not supported; nothing was "
		    "executed)",
		    name);
	return etc_pickle_fail_(
	    m, ETC_ERR_FORMAT,
	    "forbidden GLOBAL %s (only torch tensor, storage and dtype globals, "
	    "collections.OrderedDict and the bytes constructors are allowed; nothing "
	    "was executed)",
	    name);
}

int etc_pickle_op_global_(vm *m)
{
	char name[2 * MAX_GLOBAL_LINE + 2];
	size_t len = 0;
	for (int part = 0; part < 2; part++) {
		const uint8_t *s = m->p + m->pos;
		const uint8_t *nl = memchr(s, '\n', m->n - m->pos);
		if (!nl)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "GLOBAL: the pickle ends inside the name");
		size_t k = (size_t)(nl - s);
		if (k > MAX_GLOBAL_LINE)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT,
			                        "GLOBAL: name longer than %d bytes",
			                        MAX_GLOBAL_LINE);
		if (part)
			name[len++] = '.';
		for (size_t i = 0; i < k; i++)
			name[len++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
		m->pos += k + 1;
	}
	name[len] = '\0';
	return resolve_global(m, name);
}

/* STACK_GLOBAL: module and attribute names are the two strings on the stack. */
int etc_pickle_op_stack_global_(vm *m)
{
	etc_pyobj *attr, *mod;
	ETC_TRY(etc_pickle_pop_(m, &attr, "STACK_GLOBAL"));
	ETC_TRY(etc_pickle_pop_(m, &mod, "STACK_GLOBAL"));
	if (mod->kind != ETC_PY_STR || attr->kind != ETC_PY_STR)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "STACK_GLOBAL: names are a %s and a %s, not strings",
		                        etc_pykind_name(mod->kind), etc_pykind_name(attr->kind));
	if (mod->len > MAX_GLOBAL_LINE || attr->len > MAX_GLOBAL_LINE)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "STACK_GLOBAL: name longer than %d bytes", MAX_GLOBAL_LINE);
	char name[2 * MAX_GLOBAL_LINE + 2];
	size_t len = 0;
	const etc_pyobj *parts[2] = {mod, attr};
	for (int part = 0; part < 2; part++) {
		if (part)
			name[len++] = '.';
		for (uint32_t i = 0; i < parts[part]->len; i++) {
			uint8_t c = parts[part]->u.bytes[i];
			name[len++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		}
	}
	name[len] = '\0';
	return resolve_global(m, name);
}
