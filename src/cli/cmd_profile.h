/*
 * cmd_profile.h - the CLI's profiling tables (--tables), performance diff
 * (--baseline-etdump, --max-regression, --min-event-time) and profiling
 * plots (--plot). Used by etcompare.c only.
 */
#ifndef ETC_CMD_PROFILE_H
#define ETC_CMD_PROFILE_H

#include "etcompare/etcompare.h"

#include <stdbool.h>

typedef struct profile_cmd {
	unsigned tables; /* ETC_TABLE_* mask; ETC_TABLE_PROFILE by default */
	const char *baseline;
	etc_perfdiff_options diff_opt;
	etc_profile *profile;
	etc_etdump *base_dump;
	etc_inspector *base_insp;
	etc_perfdiff *diff;
	bool force; /* --force: a baseline of another program is compared anyway */
} profile_cmd;

/*
 * Checks the options (NULL when not given); returns 0 or exit code 2 after
 * printing the usage error.
 */
int cmd_profile_init(profile_cmd *pc, const char *tables, const char *baseline,
                     const char *max_regression, const char *min_event_time);

/*
 * Prints the selected tables (unless no_table), then the performance diff
 * against the baseline; sets ro->profile/profile_tables/perfdiff for the
 * --json report and *gate to 1 when the regression gate fails. Returns 0 or
 * an exit code after printing the error.
 */
int cmd_profile_print(profile_cmd *pc, const etc_inspector *insp, bool no_table,
                      etc_report_options *ro, int *gate);

/*
 * The --tsv writer: upstream's save_data_to_tsv when only the profile table
 * is selected, else one "# <table>" section per selected table.
 */
int cmd_profile_tsv(FILE *f, const etc_inspector *insp, const etc_report_options *ro,
                    etc_error *err);

/* The profiling plots as `po` says; returns 0 or an exit code after printing the error. */
int cmd_profile_plots(profile_cmd *pc, const etc_inspector *insp, const etc_plot_options *po,
                      etc_plot_result *pr);

/*
 * --module NAME: its total average time (upstream find_total_for_module) by
 * path, stack key or type; a name that matches nothing is EXIT_INPUT with
 * the closest names.
 */
int cmd_profile_module(const etc_inspector *insp, const char *name);

void cmd_profile_free(profile_cmd *pc);

#endif
