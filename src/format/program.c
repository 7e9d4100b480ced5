/*
 * program.c - the kernels an ExecuTorch program's instructions call
 * (format/program.h), read from its FlatBuffer and verified as it is read.
 * Only what the consistency check needs; the program is not loaded.
 *
 * Vtable slots (upstream's schema/program.fbs, declaration order):
 *   Program        1 execution_plan:[ExecutionPlan]
 *   ExecutionPlan  0 name  5 chains:[Chain]  6 operators:[Operator]
 *   Chain          2 instructions:[Instruction]
 *   Instruction    0 instr_args_type:u8  1 instr_args (union: 1 KernelCall)
 *   KernelCall     0 op_index:i32
 *   Operator       0 name  1 overload
 * The runtime's instruction_id is the index in the first chain (every
 * program the exporter writes has one).
 */
#include "format/program.h"
#include "format/flatbuf.h"

#include <stdlib.h>
#include <string.h>

#define KERNEL_CALL 1

/* The vector at reference field `slot` of t: its first element and count
 * (0 and 0 when absent). */
static int vector_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, const char *what,
                        size_t *first, uint32_t *n)
{
	size_t v;
	*first = 0;
	*n = 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, t, slot, what, &v));
	if (!v)
		return 0;
	ETC_TRY(etc_fb_verify_vector(fb, v, 4, what, n));
	*first = v + 4;
	return 0;
}

/* Table i of a vector of tables whose first element is at `first`. */
static int table_at(etc_fb *fb, size_t first, uint32_t i, const char *what, etc_fb_table *t)
{
	size_t pos;
	ETC_TRY(etc_fb_verify_ref(fb, first + 4 * (size_t)i, what, &pos));
	return etc_fb_verify_table(fb, pos, what, t);
}

static int string_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, const char *what,
                        etc_str *out)
{
	size_t s;
	ETC_TRY(etc_fb_verify_ref_field(fb, t, slot, what, &s));
	if (s)
		ETC_TRY(etc_fb_verify_string(fb, s, what));
	*out = etc_fb_str(fb->buf, s);
	return 0;
}

/* The plan of `method`, or the only one; *found false when neither. */
static int pick_plan(etc_fb *fb, const etc_fb_table *root, const char *method, etc_fb_table *plan,
                     bool *found)
{
	size_t first;
	uint32_t n;
	*found = false;
	ETC_TRY(vector_field(fb, root, 1, "Program.execution_plan", &first, &n));
	for (uint32_t i = 0; i < n; i++) {
		etc_fb_table t;
		etc_str name;
		ETC_TRY(table_at(fb, first, i, "ExecutionPlan", &t));
		ETC_TRY(string_field(fb, &t, 0, "ExecutionPlan.name", &name));
		bool named =
		    method && name.len == strlen(method) && !memcmp(name.ptr, method, name.len);
		if (named || (n == 1 && !*found)) {
			*plan = t;
			*found = true;
			if (named)
				return 0;
		}
	}
	return 0;
}

int etc_program_kernels_(const uint8_t *pte, size_t len, size_t base, const char *name,
                         const char *method, etc_str **ops, size_t *count, etc_error *err)
{
	*ops = NULL;
	*count = 0;
	if (len < 8 || memcmp(pte + 4, "ET", 2) != 0)
		return etc_fail(err, ETC_ERR_FORMAT, name, (int64_t)base,
		                "the embedded program is not an ExecuTorch program (no ET file "
		                "identifier at byte 4)");
	etc_fb fb = etc_fb_begin(pte, len, base, name, err, 2);
	size_t rootpos;
	etc_fb_table root, plan;
	bool found;
	ETC_TRY(etc_fb_verify_ref(&fb, 0, "Program (root offset)", &rootpos));
	ETC_TRY(etc_fb_verify_table(&fb, rootpos, "Program", &root));
	ETC_TRY(pick_plan(&fb, &root, method, &plan, &found));
	if (!found)
		return 0;
	size_t opv, chv, insv = 0;
	uint32_t nops, nchains, nins = 0;
	ETC_TRY(vector_field(&fb, &plan, 6, "ExecutionPlan.operators", &opv, &nops));
	ETC_TRY(vector_field(&fb, &plan, 5, "ExecutionPlan.chains", &chv, &nchains));
	if (nchains) {
		etc_fb_table chain;
		ETC_TRY(table_at(&fb, chv, 0, "Chain", &chain));
		ETC_TRY(vector_field(&fb, &chain, 2, "Chain.instructions", &insv, &nins));
	}
	etc_str *names = calloc(nops ? nops : 1, sizeof *names);
	etc_str *out = calloc(nins ? nins : 1, sizeof *out);
	int rc = names && out ? 0 : etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	for (uint32_t i = 0; rc == 0 && i < nops; i++) {
		etc_fb_table t;
		rc = table_at(&fb, opv, i, "Operator", &t);
		if (rc == 0)
			rc = string_field(&fb, &t, 0, "Operator.name", &names[i]);
	}
	for (uint32_t i = 0; rc == 0 && i < nins; i++) {
		etc_fb_table t, call;
		size_t type, arg, idx;
		out[i] = (etc_str){"", 0};
		if ((rc = table_at(&fb, insv, i, "Instruction", &t)) != 0 ||
		    (rc = etc_fb_verify_field(&fb, &t, 0, 1, "Instruction.instr_args_type",
		                              &type)) != 0)
			break;
		if (!type || pte[type] != KERNEL_CALL)
			continue;
		rc = etc_fb_verify_ref_field(&fb, &t, 1, "Instruction.instr_args", &arg);
		if (rc == 0 && !arg)
			rc = etc_fb_fail(&fb, t.pos, "Instruction",
			                 "a KernelCall without its table");
		if (rc == 0)
			rc = etc_fb_verify_table(&fb, arg, "KernelCall", &call);
		if (rc == 0)
			rc = etc_fb_verify_field(&fb, &call, 0, 4, "KernelCall.op_index", &idx);
		if (rc != 0)
			break;
		int32_t op = idx ? (int32_t)etc_le32(pte + idx) : 0;
		if (op < 0 || (uint32_t)op >= nops)
			rc = etc_fb_fail(&fb, call.pos, "KernelCall.op_index",
			                 "%d is not one of the %u operators", op, nops);
		else
			out[i] = names[op];
	}
	free(names);
	if (rc != 0) {
		free(out);
		return rc;
	}
	*ops = out;
	*count = nins;
	return 0;
}
