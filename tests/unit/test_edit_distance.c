/*
 * test_edit_distance.c - etc_edit_distance, the distance behind "did you
 * mean": textbook values, the two flags, and the NULL / too-long guard.
 */
#include "check.h"
#include "etcompare/etcompare.h"

#include <stdint.h>

static void plain(void)
{
	CHECK(etc_edit_distance("", "", 0) == 0);
	CHECK(etc_edit_distance("abc", "", 0) == 3);
	CHECK(etc_edit_distance("", "abc", 0) == 3);
	CHECK(etc_edit_distance("kitten", "sitting", 0) == 3);
	CHECK(etc_edit_distance("sitting", "kitten", 0) == 3);
	CHECK(etc_edit_distance("flaw", "lawn", 0) == 2);
	CHECK(etc_edit_distance("--tvs", "--tsv", 0) == 2); /* a swap is two edits */
	CHECK(etc_edit_distance("same", "same", 0) == 0);
	/* without flags, case and '-' / '_' count */
	CHECK(etc_edit_distance("Conv", "conv", 0) == 1);
	CHECK(etc_edit_distance("--a_b", "--a-b", 0) == 1);
}

static void flags(void)
{
	CHECK(etc_edit_distance("Conv2D", "conv2d", ETC_EDIT_FOLD_CASE) == 0);
	CHECK(etc_edit_distance("Linear", "linears", ETC_EDIT_FOLD_CASE) == 1);
	CHECK(etc_edit_distance("--a_b", "--a-b", ETC_EDIT_FOLD_CASE) == 1);
	CHECK(etc_edit_distance("--include_delegate_debug_data", "--include-delegate-debug-data",
	                        ETC_EDIT_DASH_IS_UNDERSCORE) == 0);
	CHECK(etc_edit_distance("--A_b", "--a-b", ETC_EDIT_DASH_IS_UNDERSCORE) == 1);
	CHECK(etc_edit_distance("--A_b", "--a-b",
	                        ETC_EDIT_FOLD_CASE | ETC_EDIT_DASH_IS_UNDERSCORE) == 0);
	/* non-letters are not folded */
	CHECK(etc_edit_distance("[", "{", ETC_EDIT_FOLD_CASE) == 1);
}

static void limits(void)
{
	char longest[ETC_EDIT_MAX + 2];
	memset(longest, 'x', sizeof longest - 1);
	longest[ETC_EDIT_MAX] = '\0';
	CHECK(etc_edit_distance(longest, "", 0) == ETC_EDIT_MAX);
	CHECK(etc_edit_distance(longest, longest, 0) == 0);
	longest[ETC_EDIT_MAX] = 'x';
	longest[ETC_EDIT_MAX + 1] = '\0';
	CHECK(etc_edit_distance(longest, "x", 0) == SIZE_MAX);
	CHECK(etc_edit_distance("x", longest, 0) == SIZE_MAX);
	CHECK(etc_edit_distance(NULL, "x", 0) == SIZE_MAX);
	CHECK(etc_edit_distance("x", NULL, 0) == SIZE_MAX);
}

int main(void)
{
	CHECK_GROUP(plain);
	CHECK_GROUP(flags);
	CHECK_GROUP(limits);
	return check_report("test_edit_distance");
}
