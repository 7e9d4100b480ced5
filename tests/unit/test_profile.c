/*
 * test_profile.c - the --tables list parser and the grid that renders the
 * profiling summaries (src/report_grid.c): column widths in code points,
 * alignment, control characters escaped, NaN as "-" in the table and
 * empty in TSV, numbers as
 * format(v, "g") in the table and repr() in TSV. The summaries' numbers
 * are checked end to end by tests/test_profile.py.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include "etcompare/profile.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>

static char *render(const etc_grid *g, bool tsv)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = tsv ? etc_grid_write_tsv_(g, f) : etc_grid_write_(g, f);
	fclose(f);
	CHECK(rc == 0);
	return buf;
}

int main(void)
{
	unsigned m;
	CHECK(etc_profile_tables_parse("profile", &m) == 0 && m == ETC_TABLE_PROFILE);
	CHECK(etc_profile_tables_parse("tax,ops", &m) == 0 && m == (ETC_TABLE_TAX | ETC_TABLE_OPS));
	CHECK(etc_profile_tables_parse("all", &m) == 0 && m == ETC_TABLE_ALL);
	CHECK(etc_profile_tables_parse("memory,all,memory", &m) == 0 && m == ETC_TABLE_ALL);
	CHECK(etc_profile_tables_parse("tax,", &m) == ETC_ERR_USAGE);
	CHECK(etc_profile_tables_parse("", &m) == ETC_ERR_USAGE);
	CHECK(etc_profile_tables_parse("taxes", &m) == ETC_ERR_USAGE);
	CHECK(etc_profile_tables_parse(",tax", &m) == ETC_ERR_USAGE);
	CHECK(strcmp(etc_profile_table_name(ETC_TABLE_DELEGATES), "delegates") == 0);
	CHECK(etc_profile_table_name(ETC_TABLE_ALL) == NULL);

	static const char *const hdr[] = {"name", "value"};
	static const bool right[] = {false, true};
	etc_grid g;
	etc_grid_init_(&g, 2, hdr, right);
	etc_grid_text_(&g, "µs");
	etc_grid_num_(&g, 0.1 + 0.2);
	etc_grid_textf_(&g, "a%dc", 2);
	etc_grid_num_(&g, NAN);
	etc_grid_text_(&g, "tab\there");
	etc_grid_uint_(&g, 18446744073709551615u);
	char *t = render(&g, false);
	static const char want[] = "╒═════════════╤══════════════════════╕\n"
	                           "│ name        │                value │\n"
	                           "╞═════════════╪══════════════════════╡\n"
	                           "│ µs          │                  0.3 │\n"
	                           "│ a2c         │                    - │\n"
	                           "│ tab\\x09here │ 18446744073709551615 │\n"
	                           "╘═════════════╧══════════════════════╛\n";
	CHECK(t && strcmp(t, want) == 0);
	if (t && strcmp(t, want))
		fprintf(stderr, "got:\n%s", t);
	free(t);
	t = render(&g, true);
	static const char want_tsv[] = "name\tvalue\n"
	                               "µs\t0.30000000000000004\n"
	                               "a2c\t\n"
	                               "\"tab\there\"\t18446744073709551615\n";
	CHECK(t && strcmp(t, want_tsv) == 0);
	free(t);
	etc_grid_free_(&g);

	return check_report("test_profile");
}
