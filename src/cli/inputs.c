/*
 * inputs.c - the content check of the input files (see inputs.h). Files
 * of unknown kind pass: their parser gives the precise error.
 */
#include "inputs.h"
#include "cli.h"

#include <stdio.h>
#include <sys/stat.h>

#define KIND(k) (1u << (k))

/* An option, the kinds it takes, and what it expects in messages. */
typedef struct input_rule {
	const char *option;
	const char *path;
	unsigned accepts; /* ETC_FILE_UNKNOWN always passes */
	const char *expects;
} input_rule;

/* The option that takes a kind, for "did you mean"; NULL when none does. */
static const char *option_for(int kind)
{
	switch (kind) {
	case ETC_FILE_ETDUMP:
		return "--etdump";
	case ETC_FILE_ETRECORD:
		return "--etrecord";
	case ETC_FILE_TORCHSAVE:
	case ETC_FILE_NPZ:
	case ETC_FILE_NPY:
		return "--reference-outputs";
	case ETC_FILE_LEGACY_PROFILE:
		return "--legacy-profile";
	case ETC_FILE_BUNDLED_PROGRAM:
		return "--bundled-program";
	}
	return NULL;
}

/* What to do with a kind no option takes. */
static const char *hint_for(int kind, const input_rule *r)
{
	switch (kind) {
	case ETC_FILE_JSON:
		if (!(r->accepts & KIND(ETC_FILE_ETDUMP)))
			return "";
		return " (an ETDump written as JSON becomes one with flatc -b schema/etdump.fbs "
		       "FILE)";
	case ETC_FILE_GZIP:
		return " (decompress it first, e.g. gunzip -k FILE)";
	case ETC_FILE_PROGRAM:
		if (r->accepts & KIND(ETC_FILE_BUNDLED_PROGRAM))
			return " (--bundled-program takes the .bpte that bundles the program with "
			       "its test cases)";
		return " (the runtime writes the ETDump when it runs the program)";
	}
	return "";
}

static int check_one(const input_rule *r)
{
	struct stat st;
	/* pipes and "-" are read once, by their parser */
	if (!r->path || stat(r->path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	etc_error err;
	int kind;
	if (etc_sniff_file(r->path, &kind, &err) < 0 || kind == ETC_FILE_UNKNOWN ||
	    (r->accepts & KIND(kind)))
		return 0;
	const char *other = option_for(kind);
	if (other)
		fprintf(stderr,
		        "etcompare: error: %s (given as %s): this looks like %s; did you mean %s "
		        "FILE?\n",
		        r->path, r->option, etc_file_kind_name(kind), other);
	else
		fprintf(
		    stderr, "etcompare: error: %s (given as %s): this looks like %s, not %s%s\n",
		    r->path, r->option, etc_file_kind_name(kind), r->expects, hint_for(kind, r));
	return EXIT_INPUT;
}

int check_inputs(const args *a)
{
	const unsigned etdump = KIND(ETC_FILE_ETDUMP);
	const unsigned zip = KIND(ETC_FILE_ZIP);
	/* a debug buffer is raw bytes: refused only for what it cannot be by accident */
	const unsigned buffer =
	    ~(KIND(ETC_FILE_ETDUMP) | KIND(ETC_FILE_ETRECORD) | KIND(ETC_FILE_TORCHSAVE) |
	      KIND(ETC_FILE_NPZ) | zip | KIND(ETC_FILE_JSON));
	const input_rule rules[] = {
	    {"--etdump", a->etdump, etdump, "an ETDump"},
	    {"--debug_buffer", a->debug_buffer, buffer, "a debug buffer"},
	    {"--etrecord", a->etrecord, KIND(ETC_FILE_ETRECORD) | zip, "an ETRecord"},
	    {"--reference-outputs", a->reference_outputs,
	     KIND(ETC_FILE_TORCHSAVE) | KIND(ETC_FILE_NPZ) | KIND(ETC_FILE_NPY) |
	         KIND(ETC_FILE_PICKLE) | zip,
	     "a torch.save file or an .npz"},
	    {"--bundled-program", a->bundled_program, KIND(ETC_FILE_BUNDLED_PROGRAM),
	     "a BundledProgram (.bpte)"},
	    {"--reference-etdump", a->numgap.reference_etdump, etdump, "an ETDump"},
	    {"--reference-debug-buffer", a->numgap.reference_debug_buffer, buffer,
	     "a debug buffer"},
	    {"--reference-etrecord", a->numgap.reference_etrecord, KIND(ETC_FILE_ETRECORD) | zip,
	     "an ETRecord"},
	    {"--reference-intermediates", a->numgap.reference_intermediates,
	     KIND(ETC_FILE_NPZ) | zip, "an .npz"},
	    {"--inputs", a->numgap.inputs, KIND(ETC_FILE_NPZ) | KIND(ETC_FILE_TORCHSAVE) | zip,
	     "an .npz or a torch.save list"},
	    {"--baseline-etdump", a->baseline_etdump, etdump, "an ETDump"},
	    {"--legacy-profile", a->legacy_profile, KIND(ETC_FILE_LEGACY_PROFILE),
	     "a legacy profiler dump"},
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		int rc = check_one(&rules[i]);
		if (rc)
			return rc;
	}
	return 0;
}
