/*
 * check.h - the unit tests' assertions: report file:line and keep going,
 * exit non-zero at the end if anything failed.
 */
#ifndef ETC_CHECK_H
#define ETC_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		check_count++;                                                                     \
		if (!(cond)) {                                                                     \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *check_a_ = (a), *check_b_ = (b);                                       \
		check_count++;                                                                     \
		if (strcmp(check_a_, check_b_) != 0) {                                             \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, check_a_, \
			        check_b_);                                                         \
		}                                                                                  \
	} while (0)

/* Equal bit for bit, or both NaN. */
#define CHECK_DOUBLE_EXACT(a, b)                                                                   \
	do {                                                                                       \
		double check_x_ = (a), check_y_ = (b);                                             \
		check_count++;                                                                     \
		if (!(check_x_ == check_y_ || (isnan(check_x_) && isnan(check_y_)))) {             \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: %.17g != %.17g (%s)\n", __FILE__, __LINE__,        \
			        check_x_, check_y_, #a);                                           \
		}                                                                                  \
	} while (0)

/* Runs one group of checks and prints how many it made (scripts/badinput-table.py
 * reads these lines): "group NAME: N checks, M failed". */
#define CHECK_GROUP(fn) check_group(#fn, fn)
static inline void check_group(const char *name, void (*fn)(void))
{
	int c = check_count, f = check_failures;
	fn();
	printf("group %s: %d checks, %d failed\n", name, check_count - c, check_failures - f);
}

static int check_report(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
