/*
 * npz_out.h - the test tools' writer of an uncompressed .npz (zip STORED
 * members, .npy version 1.0 arrays), the format numpy.load reads.
 */
#ifndef ETC_NPZ_OUT_H
#define ETC_NPZ_OUT_H

#include "etcompare/reference.h"

#include <stdio.h>

typedef struct npz_out npz_out;

/* Creates `path`; NULL (with errno) when it cannot be opened. */
npz_out *npz_out_open(const char *path);
/* Adds array `name` (".npy" is appended); -1 on a write error. */
int npz_out_add(npz_out *z, const char *name, const etc_reftensor *t);
/* Writes the central directory and closes; -1 on a write error. */
int npz_out_close(npz_out *z);

#endif
