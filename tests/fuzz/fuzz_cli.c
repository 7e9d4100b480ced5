/*
 * fuzz_cli.c - the command line: every option, its value and the checks
 * that need no file (src/cli/args.c). Nothing is opened or written.
 *
 * Input: the arguments, separated by NUL bytes (at most 64 of them).
 */
#include "fuzz.h"

#include "args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { MAX_ARGS = 64 };
	char *copy = malloc(size + 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	copy[size] = '\0';
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = "etcompare";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	args a;
	/* usage errors and --help print: keep the fuzzer's output readable */
	FILE *out = stdout, *errs = stderr;
	stdout = fuzz_sink();
	stderr = fuzz_sink();
	(void)cli_parse(argc, argv, &a);
	stdout = out;
	stderr = errs;
	free(copy);
	return 0;
}
