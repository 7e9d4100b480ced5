/*
 * repr_driver.c - reads doubles as 16-hex-digit bit patterns, one a line, and
 * prints etc_fmt_repr of each. Used by bench/repr_check.py to compare the
 * formatter with Python's repr(); fmt.c is compiled in (it is internal).
 */
#include "core/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char line[64], out[ETC_FMT_NUM];
	while (fgets(line, sizeof line, stdin)) {
		unsigned long long bits = strtoull(line, NULL, 16);
		double d;
		memcpy(&d, &bits, sizeof d);
		etc_fmt_repr(out, d);
		puts(out);
	}
	return 0;
}
