/*
 * edit.c - etc_edit_distance: the edit distance behind the "did you mean"
 * suggestions (unknown options in the CLI, unknown module names in profiles).
 */
#include "core/internal.h"

static char fold(char c, unsigned flags)
{
	if ((flags & ETC_EDIT_FOLD_CASE) && c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	if ((flags & ETC_EDIT_DASH_IS_UNDERSCORE) && c == '_')
		return '-';
	return c;
}

size_t etc_edit_distance(const char *a, const char *b, unsigned flags)
{
	if (!a || !b)
		return SIZE_MAX;
	size_t n = strlen(a), m = strlen(b), row[ETC_EDIT_MAX + 1];
	if (n > ETC_EDIT_MAX || m > ETC_EDIT_MAX)
		return SIZE_MAX;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		char x = fold(a[i - 1], flags);
		for (size_t j = 1; j <= m; j++) {
			size_t best = diag + (x != fold(b[j - 1], flags));
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = row[j];
			row[j] = best;
		}
	}
	return row[m];
}
