/*
 * refimport.h - tensors from the input files (.npz arrays, torch.save
 * tensors, weights) copied into owned reference tensors: floating dtypes
 * become the reference dtype, integer and bool tensors keep theirs.
 */
#ifndef ETC_REFIMPORT_H
#define ETC_REFIMPORT_H

#include "reference/ref_op.h"
#include "etcompare/torchsave.h"

/*
 * The dtype a tensor of `dtype` has in the reference: `float_dtype` (ETC_DOUBLE
 * or ETC_FLOAT) for every floating dtype, the same for int and bool dtypes,
 * -1 for dtypes the reference cannot hold (unsigned 16..64-bit, quantized).
 */
int ref_import_dtype(int dtype, int float_dtype);

/*
 * Copies `src` (dense little-endian data, e.g. an .npz array, possibly
 * unaligned) into a new tensor `dst` of ref_import_dtype(src dtype). `what`
 * names the tensor in messages (ETC_ERR_UNSUPPORTED for a dtype the
 * reference cannot hold).
 */
int ref_import_tensor(ref_tensor *dst, const etc_tensor *src, int float_dtype, const char *what,
                      etc_error *err);

/* The same for a torch.save tensor (any strides). */
int ref_import_pytensor(ref_tensor *dst, const etc_pytensor *src, int float_dtype, const char *what,
                        etc_error *err);

#endif
