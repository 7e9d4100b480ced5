/*
 * plot_private.h - what plot.c and png_write.c share.
 */
#ifndef ETC_PLOT_PRIVATE_H
#define ETC_PLOT_PRIVATE_H

#include "etcompare/plot.h"

/* An etc_plot_read_fn over a plain array of doubles: ctx is the array. */
int etc_plot_read_doubles_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err);

#endif
