/*
 * cmd_profile.c - the CLI side of the profiling tables, the performance
 * diff and the profiling plots: option checks, what goes to stdout and
 * stderr, and exit codes. The computations live in libetcompare
 * (profile.h, perfdiff.h).
 */
#include "cmd_profile.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "etcompare: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'etcompare --help'.\n");
	return EXIT_USAGE;
}

static int number(const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(v, &end);
	if (*end || errno || end == v || !isfinite(*out) || *out < 0)
		return usage("%s takes a number >= 0", flag);
	return 0;
}

int cmd_profile_init(profile_cmd *pc, const char *tables, const char *baseline,
                     const char *max_regression, const char *min_event_time)
{
	memset(pc, 0, sizeof *pc);
	pc->tables = ETC_TABLE_PROFILE;
	pc->baseline = baseline;
	etc_perfdiff_options_init(&pc->diff_opt);
	if (tables && etc_profile_tables_parse(tables, &pc->tables) < 0)
		return usage(
		    "--tables takes a list of profile,tax,memory,ops,modules,delegates,all, "
		    "not '%s'",
		    tables);
	if ((max_regression || min_event_time) && !baseline)
		return usage("%s", "--max-regression and --min-event-time need --baseline-etdump");
	if (max_regression &&
	    number("--max-regression", max_regression, &pc->diff_opt.max_regression))
		return EXIT_USAGE;
	if (min_event_time &&
	    number("--min-event-time", min_event_time, &pc->diff_opt.min_event_time))
		return EXIT_USAGE;
	return 0;
}

static int fail(const etc_error *err, int code)
{
	cli_error(err->message);
	return code;
}

/* A table on standard output that could not be printed. */
static int stdout_fail(const etc_error *err)
{
	cli_stdout_error(err);
	return EXIT_OUTPUT;
}

static int ensure_profile(profile_cmd *pc, const etc_inspector *insp)
{
	if (pc->profile)
		return 0;
	etc_error err;
	etc_error_clear(&err);
	if (etc_profile_create(&pc->profile, insp, &err) < 0)
		return fail(&err, EXIT_INPUT);
	return 0;
}

/*
 * A baseline of another program: fewer than half of either side's events
 * (Method::execute aside) match the other's by name. Its regressions would be
 * a comparison of two models, so it is refused (exit 3) or, with --force,
 * warned of. A block that has no counterpart at all (an input only one side
 * ran) is a difference of coverage, not of program: its events are listed
 * and warned of (warn_unmatched), not counted here, unless nothing matches.
 */
static bool other_program(const profile_cmd *pc)
{
	size_t matched = 0;
	for (size_t i = 0; i < etc_perfdiff_row_count(pc->diff); i++)
		matched += !etc_perfdiff_row_at(pc->diff, i)->is_execute;
	size_t base = matched, cur = matched;
	for (size_t i = 0; i < etc_perfdiff_unmatched_count(pc->diff); i++) {
		const etc_perfdiff_unmatched *u = etc_perfdiff_unmatched_at(pc->diff, i);
		if (!u->whole_block || !matched)
			*(u->in_baseline ? &base : &cur) += 1;
	}
	if (base + cur < 4 || (matched * 2 >= base && matched * 2 >= cur))
		return false;
	char safe[600];
	fprintf(stderr,
	        "etcompare: %s: %s: the baseline does not look like a run of the same program: "
	        "%zu of its %zu events and of the current ETDump's %zu match (same block, "
	        "name and instruction; Method::execute aside); give a baseline ETDump of this "
	        "program%s\n",
	        pc->force ? "warning" : "error", etc_text_safe(safe, sizeof safe, pc->baseline),
	        matched, base, cur,
	        pc->force ? " (--force: compared anyway)" : " (or --force to compare anyway)");
	return !pc->force;
}

/* Are files a and b the same (device and inode) or byte for byte equal?
 * 1 the same file, 2 a copy, 0 neither (or unreadable: not this check's error). */
static int same_etdump(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-") || stat(a, &sa) != 0 ||
	    stat(b, &sb) != 0)
		return 0;
	if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
		return 1;
	if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size)
		return 0;
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb;
	static const size_t chunk = 1 << 16;
	char *ba = malloc(chunk), *bb = malloc(chunk);
	same = same && ba && bb;
	while (same) {
		size_t na = fread(ba, 1, chunk, fa), nb = fread(bb, 1, chunk, fb);
		same = na == nb && !memcmp(ba, bb, na) && !ferror(fa) && !ferror(fb);
		if (na < chunk)
			break;
	}
	free(ba);
	free(bb);
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same ? 2 : 0;
}

/* A baseline that is the run itself compares every event equal with itself:
 * the gate then passes on nothing (a copy-paste mistake, `--etdump $NEW
 * --baseline-etdump $NEW`). Said, as --reference-etdump's mistake is. */
static void check_self_baseline(const profile_cmd *pc, const etc_inspector *insp)
{
	int same = same_etdump(pc->baseline, etc_etdump_name(etc_inspector_etdump(insp)));
	if (!same)
		return;
	char s[512];
	fprintf(stderr,
	        "etcompare: warning: --baseline-etdump %s is the run's own ETDump%s: every event "
	        "compares equal with itself, so the performance gate compared the run with "
	        "itself and passes on nothing; give the ETDump of an earlier run of this program "
	        "as the baseline\n",
	        etc_text_safe(s, sizeof s, pc->baseline),
	        same == 1 ? "" : " (a byte-identical copy)");
}

enum { WARN_BLOCKS = 5 };

/*
 * Events of one side that found no counterpart are not compared: the gate
 * cannot check them, so stderr names their blocks (and a Method::execute's
 * p50: an extra input 5x slower is not passed over in silence), and says
 * which current blocks were compared with another baseline block.
 */
static void warn_unmatched(const profile_cmd *pc, const etc_inspector *insp)
{
	const etc_perfdiff *d = pc->diff;
	const char *unit = etc_time_scale_name(etc_inspector_options_get(insp)->target_time_scale);
	char safe[512], safe2[512], a[256], b[256];
	size_t fallbacks = 0;
	for (size_t c = 0; c < etc_inspector_block_count(insp); c++) {
		size_t bb;
		if (etc_perfdiff_block_match(d, c, &bb) != ETC_PERFDIFF_FALLBACK ||
		    fallbacks++ >= WARN_BLOCKS)
			continue;
		cli_block_label(insp, c, a, sizeof a);
		cli_block_label(pc->base_insp, bb, b, sizeof b);
		int32_t ci = etc_inspector_block(insp, c)->bundled_input_index;
		int32_t bi = etc_inspector_block(pc->base_insp, bb)->bundled_input_index;
		char cin[40] = "", bin[40] = "";
		if (ci >= 0)
			snprintf(cin, sizeof cin, " (input %d)", (int)ci);
		if (bi >= 0)
			snprintf(bin, sizeof bin, " (input %d)", (int)bi);
		fprintf(
		    stderr,
		    "etcompare: warning: block %s%s of the current ETDump has no baseline block "
		    "of its own (the baseline ran fewer inputs or blocks of that name): it is "
		    "compared with the baseline's %s%s, the slowest of its blocks with the same "
		    "events\n",
		    etc_text_safe(safe, sizeof safe, a), cin, etc_text_safe(safe2, sizeof safe2, b),
		    bin);
	}
	if (fallbacks > WARN_BLOCKS)
		fprintf(
		    stderr,
		    "etcompare: warning: and %zu more blocks of the current ETDump without a "
		    "baseline block of their own, each compared with the slowest baseline block "
		    "of the same events (the table's block column names it)\n",
		    fallbacks - WARN_BLOCKS);
	size_t n = etc_perfdiff_unmatched_count(d);
	for (int baseline = 0; baseline < 2; baseline++) {
		size_t count =
		    baseline ? etc_perfdiff_baseline_only(d) : etc_perfdiff_current_only(d);
		if (!count)
			continue;
		const etc_inspector *in = baseline ? pc->base_insp : insp;
		fprintf(stderr,
		        "etcompare: warning: %zu event%s of the %s %s no counterpart in the %s and "
		        "%s not compared (the gate did not check them): ",
		        count, count == 1 ? "" : "s", baseline ? "baseline" : "current ETDump",
		        count == 1 ? "has" : "have", baseline ? "current ETDump" : "baseline",
		        count == 1 ? "was" : "were");
		size_t blocks = 0;
		for (size_t i = 0, j; i < n; i = j) {
			const etc_perfdiff_unmatched *u = etc_perfdiff_unmatched_at(d, i);
			const etc_perfdiff_unmatched *ex = NULL;
			for (j = i + 1; j < n; j++) {
				const etc_perfdiff_unmatched *v = etc_perfdiff_unmatched_at(d, j);
				if (v->in_baseline != u->in_baseline || v->block != u->block)
					break;
			}
			for (size_t k = i; k < j && !ex; k++)
				if (etc_perfdiff_unmatched_at(d, k)->is_execute)
					ex = etc_perfdiff_unmatched_at(d, k);
			if (u->in_baseline != (baseline == 1))
				continue;
			if (blocks++ == WARN_BLOCKS) {
				fprintf(stderr, "; ...");
				continue;
			}
			if (blocks > WARN_BLOCKS)
				continue;
			cli_block_label(in, u->block, a, sizeof a);
			int32_t input = etc_inspector_block(in, u->block)->bundled_input_index;
			fprintf(stderr, "%sblock %s", blocks > 1 ? "; " : "",
			        etc_text_safe(safe, sizeof safe, a));
			if (input >= 0)
				fprintf(stderr, " (input %d)", (int)input);
			if (u->whole_block)
				fprintf(stderr, ": all its %zu event%s", j - i,
				        j - i == 1 ? "" : "s");
			else
				fprintf(stderr, ": %zu event%s (first %s)", j - i,
				        j - i == 1 ? "" : "s",
				        etc_text_escape(b, sizeof b, u->name.ptr,
				                        u->name.len > 120 ? 120 : u->name.len));
			if (ex) {
				char p50[40];
				etc_format_double(p50, ex->p50);
				fprintf(stderr, ", Method::execute p50 %s %s", p50, unit);
			}
		}
		fprintf(stderr, "; %s\n",
		        baseline ? "the current ETDump did not run them"
		                 : "give a baseline recorded with the same inputs");
	}
}

static int diff(profile_cmd *pc, const etc_inspector *insp, etc_report_options *ro, int *gate)
{
	etc_error err;
	etc_error_clear(&err);
	if (etc_etdump_open(&pc->base_dump, pc->baseline, &err) < 0)
		return fail(&err, EXIT_INPUT);
	int rc = etc_inspector_create(&pc->base_insp, pc->base_dump, NULL,
	                              etc_inspector_options_get(insp), &err);
	if (rc < 0)
		return fail(&err, rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT);
	if ((rc = etc_perfdiff_create(&pc->diff, pc->base_insp, insp, &pc->diff_opt, &err)) < 0)
		return fail(&err, rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT);
	ro->perfdiff = pc->diff;
	char safe[1024];
	if (other_program(pc))
		return EXIT_INPUT;
	printf("Performance diff against %s (p50 per event, largest regression first):\n",
	       etc_text_safe(safe, sizeof safe, pc->baseline));
	if (etc_report_perfdiff(stdout, pc->diff, 0, &err) < 0)
		return stdout_fail(&err);
	check_self_baseline(pc, insp);
	warn_unmatched(pc, insp);
	size_t fails = etc_perfdiff_failures(pc->diff);
	if (!fails)
		return 0;
	/* rows are sorted by regression: the first failing row is the worst */
	const etc_perfdiff_row *w = NULL;
	for (size_t i = 0; i < etc_perfdiff_row_count(pc->diff) && !w; i++)
		if (etc_perfdiff_row_at(pc->diff, i)->failed)
			w = etc_perfdiff_row_at(pc->diff, i);
	char pct[32], block[256], name[256], label[256], base[256], fb[300] = "";
	cli_block_label(insp, w->cur_block, label, sizeof label);
	if (w->fallback) {
		cli_block_label(pc->base_insp, w->base_block, base, sizeof base);
		snprintf(fb, sizeof fb, " (against the baseline's %s)",
		         etc_text_escape(block, sizeof block, base, strlen(base)));
	}
	fprintf(stderr,
	        "etcompare: performance gate FAILED: %zu event%s regress%s more than %g%%; "
	        "worst: %s %s %s%%%s\n",
	        fails, fails == 1 ? "" : "s", fails == 1 ? "es" : "", pc->diff_opt.max_regression,
	        etc_text_escape(block, sizeof block, label, strlen(label)),
	        etc_text_escape(name, sizeof name, w->name.ptr, w->name.len),
	        etc_perfdiff_percent_text(pc->diff, w, pct, sizeof pct), fb);
	*gate = EXIT_GATE;
	return 0;
}

int cmd_profile_print(profile_cmd *pc, const etc_inspector *insp, bool no_table,
                      etc_report_options *ro, int *gate)
{
	etc_error err;
	etc_error_clear(&err);
	unsigned more = pc->tables & ~(unsigned)ETC_TABLE_PROFILE;
	bool titles = (pc->tables & (pc->tables - 1)) != 0; /* more than one table */
	ro->profile_tables = pc->tables;
	if (more) {
		int rc = ensure_profile(pc, insp);
		if (rc)
			return rc;
		ro->profile = pc->profile;
		if ((pc->tables & ETC_TABLE_MODULES) && !etc_inspector_etrecord(insp))
			fprintf(stderr, "etcompare: note: the modules table needs --etrecord\n");
	}
	if (!no_table) {
		if (pc->tables & ETC_TABLE_PROFILE) {
			if (titles)
				printf("== profile: the Inspector's table ==\n");
			if (etc_report_table(stdout, insp, ro, &err) < 0)
				return stdout_fail(&err);
		}
		if (more && etc_report_profile_tables(stdout, pc->profile, more, titles, &err) < 0)
			return stdout_fail(&err);
	}
	return pc->baseline ? diff(pc, insp, ro, gate) : 0;
}

int cmd_profile_tsv(FILE *f, const etc_inspector *insp, const etc_report_options *ro,
                    etc_error *err)
{
	unsigned tables = ro->profile_tables ? ro->profile_tables : ETC_TABLE_PROFILE;
	unsigned more = tables & ~(unsigned)ETC_TABLE_PROFILE;
	if (!more || !ro->profile)
		return etc_report_tsv(f, insp, ro, err);
	if (tables & ETC_TABLE_PROFILE) {
		fputs("# profile\n", f);
		int rc = etc_report_tsv(f, insp, ro, err);
		if (rc < 0)
			return rc;
		fputc('\n', f);
	}
	return etc_report_profile_tsv(f, ro->profile, more, err);
}

int cmd_profile_plots(profile_cmd *pc, const etc_inspector *insp, const etc_plot_options *po,
                      etc_plot_result *pr)
{
	int rc = ensure_profile(pc, insp);
	if (rc)
		return rc;
	etc_error err;
	etc_error_clear(&err);
	if (etc_report_profile_plots(po, pc->profile, 10, pr, &err) < 0 ||
	    (pc->diff && etc_report_perfdiff_plot(po, pc->diff, pr, &err) < 0))
		return fail(&err, err.status == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT);
	return 0;
}

int cmd_profile_module(const etc_inspector *insp, const char *name)
{
	static const char *const how[] = {"", "module path", "module stack key", "module type",
	                                  "part of a module stack key"};
	etc_error err;
	etc_error_clear(&err);
	double total;
	size_t count;
	int match = 0;
	if (etc_profile_module_total(insp, name, &total, &count, &match, &err) < 0)
		return fail(&err, EXIT_INPUT);
	char num[40];
	etc_format_double(num, total);
	printf("find_total_for_module(\"%s\") = %s %s (%zu event%s) [%s]\n", name, num,
	       etc_time_scale_name(etc_inspector_options_get(insp)->target_time_scale), count,
	       count == 1 ? "" : "s", how[match >= 1 && match <= 4 ? match : 0]);
	/* delegated events in cycles are added as they are, as upstream adds them */
	etc_profile *p = NULL;
	if (etc_profile_create(&p, insp, &err) == 0 && etc_profile_modules_mix_units(p))
		fprintf(stderr,
		        "etcompare: note: module totals add delegated events' times in their own "
		        "unit (cycles, --delegate-time-scale): this sum may mix units; --tables "
		        "modules marks the modules it concerns\n");
	etc_profile_free(p);
	return 0;
}

void cmd_profile_free(profile_cmd *pc)
{
	etc_perfdiff_free(pc->diff);
	etc_inspector_free(pc->base_insp);
	etc_etdump_free(pc->base_dump);
	etc_profile_free(pc->profile);
	memset(pc, 0, sizeof *pc);
}
