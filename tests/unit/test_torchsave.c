/*
 * test_torchsave.c - the torch.save reader (src/torchsave.c, src/pickle.c,
 * src/zipread.c): every real archive in tests/data/torchsave reads exactly as
 * its MANIFEST.json says, and malformed or hostile archives (built here in
 * memory by patching fixtures and with a small STORED zip writer) fail with
 * the right status and never crash.
 */
#include "check.h"
#include "etcompare/torchsave.h"
#include "format/pickle.h"
#include "format/zipread.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- expected values ---------------------------------------------------- */

typedef struct exp_tensor {
	const char *const *path; /* dict keys, or "#i" for sequence items */
	const char *dtype;
	bool parameter, requires_grad, contiguous;
	uint32_t ndim;
	const int64_t *shape, *strides;
	int64_t storage_offset;
	const char *key;
	uint64_t storage_numel, storage_nbytes;
	int64_t member_data_offset; /* the storage member's data in the archive */
	const double *values;       /* row-major */
	uint64_t numel;
} exp_tensor;

typedef struct exp_storage {
	const char *key;
	uint64_t nbytes;
	int64_t member_data_offset;
	const char *hex;
} exp_storage;

/* Two paths that must lead to the same object (pickle memo reuse). */
typedef struct exp_same {
	const char *const *a, *const *b;
} exp_same;

typedef struct exp_file {
	const char *file, *prefix;
	size_t size;
	const char *structure; /* canonical form, see canon() below */
	const exp_tensor *tensors;
	size_t ntensors;
	const exp_storage *storages;
	size_t nstorages;
	const exp_same *same;
	size_t nsame;
} exp_file;

/*
 * GENERATED from tests/data/torchsave/MANIFEST.json by a one-off
 * /usr/bin/python3 script (json.load, then for each file in sorted order:
 * each tensor's path/dtype/shape/strides/storage fields and its values
 * flattened row-major as exact hex-float literals; each storage's nbytes,
 * member_data_offset_in_archive and hex; the "structure" rendered in the
 * canonical form of canon() below, where a tensor is
 * T|P(dtype,[shape],[strides],storage_offset,storage_key,requires_grad), a
 * float is "f" + "%.17g", an OrderedDict is OD{...} followed by "@attrs";
 * "memo_reused" entries become exp_same pairs). Regenerate rather than edit.
 */
static const char *const f0_t0_path[] = {"#0", "#0", NULL};
static const int64_t f0_t0_shape[] = {1, 2};
static const int64_t f0_t0_strides[] = {2, 1};
static const double f0_t0_values[] = {0x1.0000000000000p+0, 0x1.0000000000000p+1};
static const exp_tensor f0_tensors[] = {
    {f0_t0_path, "float32", false, false, true, 2, f0_t0_shape, f0_t0_strides, 0, "0", 2, 8, 320,
     f0_t0_values, 2},
};
static const exp_storage f0_storages[] = {
    {"0", 8, 320, "0000803f00000040"},
};
static const char *const f1_t0_path[] = {"forward", "#0", "#0", NULL};
static const int64_t f1_t0_shape[] = {2, 2};
static const int64_t f1_t0_strides[] = {2, 1};
static const double f1_t0_values[] = {0x1.0000000000000p+0, 0x1.0000000000000p+1,
                                      0x1.8000000000000p+1, 0x1.0000000000000p+2};
static const char *const f1_t1_path[] = {"forward", "#0", "#1", NULL};
static const int64_t f1_t1_shape[] = {1};
static const int64_t f1_t1_strides[] = {1};
static const double f1_t1_values[] = {0x1.0000000000000p-1};
static const char *const f1_t2_path[] = {"forward", "#1", "#0", NULL};
static const int64_t f1_t2_shape[] = {2};
static const int64_t f1_t2_strides[] = {1};
static const double f1_t2_values[] = {-0x1.0000000000000p+0, -0x1.0000000000000p+1};
static const char *const f1_t3_path[] = {"decode", "#0", "#0", NULL};
static const int64_t f1_t3_shape[] = {3};
static const int64_t f1_t3_strides[] = {1};
static const double f1_t3_values[] = {0x1.8000000000000p+1, 0x1.0000000000000p+0,
                                      0x1.0000000000000p+1};
static const exp_tensor f1_tensors[] = {
    {f1_t0_path, "float32", false, false, true, 2, f1_t0_shape, f1_t0_strides, 0, "0", 4, 16, 512,
     f1_t0_values, 4},
    {f1_t1_path, "float32", false, false, true, 1, f1_t1_shape, f1_t1_strides, 0, "1", 1, 4, 640,
     f1_t1_values, 1},
    {f1_t2_path, "float32", false, false, true, 1, f1_t2_shape, f1_t2_strides, 0, "2", 2, 8, 768,
     f1_t2_values, 2},
    {f1_t3_path, "int64", false, false, true, 1, f1_t3_shape, f1_t3_strides, 0, "3", 3, 24, 896,
     f1_t3_values, 3},
};
static const exp_storage f1_storages[] = {
    {"0", 16, 512, "0000803f000000400000404000008040"},
    {"1", 4, 640, "0000003f"},
    {"2", 8, 768, "000080bf000000c0"},
    {"3", 24, 896, "030000000000000001000000000000000200000000000000"},
};
static const char *const f2_t0_path[] = {"#0", NULL};
static const int64_t f2_t0_shape[] = {2};
static const int64_t f2_t0_strides[] = {1};
static const double f2_t0_values[] = {0x1.0000000000000p+0, 0x1.0000000000000p+1};
static const char *const f2_t1_path[] = {"#1", NULL};
static const int64_t f2_t1_shape[] = {2, 2};
static const int64_t f2_t1_strides[] = {2, 1};
static const double f2_t1_values[] = {0x1.c000000000000p+2, -0x1.0000000000000p+3,
                                      0x1.2000000000000p+3, 0x1.4000000000000p+3};
static const char *const f2_t2_path[] = {"#2", NULL};
static const int64_t f2_t2_shape[] = {3};
static const int64_t f2_t2_strides[] = {1};
static const double f2_t2_values[] = {0x1.0000000000000p-1, -0x1.0000000000000p-2,
                                      0x1.0000000000000p+10};
static const char *const f2_t3_path[] = {"#3", NULL};
static const int64_t f2_t3_shape[] = {3};
static const int64_t f2_t3_strides[] = {1};
static const double f2_t3_values[] = {0x1.0000000000000p+0, 0x0.0p+0, 0x1.0000000000000p+0};
static const exp_tensor f2_tensors[] = {
    {f2_t0_path, "float32", false, false, true, 1, f2_t0_shape, f2_t0_strides, 0, "0", 2, 8, 512,
     f2_t0_values, 2},
    {f2_t1_path, "int64", false, false, true, 2, f2_t1_shape, f2_t1_strides, 0, "1", 4, 32, 640,
     f2_t1_values, 4},
    {f2_t2_path, "float16", false, false, true, 1, f2_t2_shape, f2_t2_strides, 0, "2", 3, 6, 768,
     f2_t2_values, 3},
    {f2_t3_path, "bool", false, false, true, 1, f2_t3_shape, f2_t3_strides, 0, "3", 3, 3, 896,
     f2_t3_values, 3},
};
static const exp_storage f2_storages[] = {
    {"0", 8, 512, "0000803f00000040"},
    {"1", 32, 640, "0700000000000000f8ffffffffffffff09000000000000000a00000000000000"},
    {"2", 6, 768, "003800b40064"},
    {"3", 3, 896, "010001"},
};
static const char *const f3_t0_path[] = {"#0", NULL};
static const int64_t f3_t0_shape[] = {2};
static const int64_t f3_t0_strides[] = {1};
static const double f3_t0_values[] = {0x0.0p+0, 0x0.0p+0};
static const char *const f3_t1_path[] = {"#1", NULL};
static const int64_t f3_t1_shape[] = {2};
static const int64_t f3_t1_strides[] = {1};
static const double f3_t1_values[] = {0x1.0000000000000p+0, 0x1.0000000000000p+0};
static const char *const f3_t2_path[] = {"#2", NULL};
static const int64_t f3_t2_shape[] = {2};
static const int64_t f3_t2_strides[] = {1};
static const double f3_t2_values[] = {0x1.0000000000000p+1, 0x1.0000000000000p+1};
static const char *const f3_t3_path[] = {"#3", NULL};
static const int64_t f3_t3_shape[] = {2};
static const int64_t f3_t3_strides[] = {1};
static const double f3_t3_values[] = {0x1.8000000000000p+1, 0x1.8000000000000p+1};
static const char *const f3_t4_path[] = {"#4", NULL};
static const int64_t f3_t4_shape[] = {2};
static const int64_t f3_t4_strides[] = {1};
static const double f3_t4_values[] = {0x1.0000000000000p+2, 0x1.0000000000000p+2};
static const char *const f3_t5_path[] = {"#5", NULL};
static const int64_t f3_t5_shape[] = {2};
static const int64_t f3_t5_strides[] = {1};
static const double f3_t5_values[] = {0x1.4000000000000p+2, 0x1.4000000000000p+2};
static const char *const f3_t6_path[] = {"#6", NULL};
static const int64_t f3_t6_shape[] = {2};
static const int64_t f3_t6_strides[] = {1};
static const double f3_t6_values[] = {0x1.8000000000000p+2, 0x1.8000000000000p+2};
static const char *const f3_t7_path[] = {"#7", NULL};
static const int64_t f3_t7_shape[] = {2};
static const int64_t f3_t7_strides[] = {1};
static const double f3_t7_values[] = {0x1.c000000000000p+2, 0x1.c000000000000p+2};
static const char *const f3_t8_path[] = {"#8", NULL};
static const int64_t f3_t8_shape[] = {2};
static const int64_t f3_t8_strides[] = {1};
static const double f3_t8_values[] = {0x1.0000000000000p+3, 0x1.0000000000000p+3};
static const char *const f3_t9_path[] = {"#9", NULL};
static const int64_t f3_t9_shape[] = {2};
static const int64_t f3_t9_strides[] = {1};
static const double f3_t9_values[] = {0x1.2000000000000p+3, 0x1.2000000000000p+3};
static const char *const f3_t10_path[] = {"#10", NULL};
static const int64_t f3_t10_shape[] = {2};
static const int64_t f3_t10_strides[] = {1};
static const double f3_t10_values[] = {0x1.4000000000000p+3, 0x1.4000000000000p+3};
static const char *const f3_t11_path[] = {"#11", NULL};
static const int64_t f3_t11_shape[] = {2};
static const int64_t f3_t11_strides[] = {1};
static const double f3_t11_values[] = {0x1.6000000000000p+3, 0x1.6000000000000p+3};
static const char *const f3_t12_path[] = {"#12", NULL};
static const int64_t f3_t12_shape[] = {2};
static const int64_t f3_t12_strides[] = {1};
static const double f3_t12_values[] = {0x1.8000000000000p+3, 0x1.8000000000000p+3};
static const char *const f3_t13_path[] = {"#13", NULL};
static const int64_t f3_t13_shape[] = {2};
static const int64_t f3_t13_strides[] = {1};
static const double f3_t13_values[] = {0x1.a000000000000p+3, 0x1.a000000000000p+3};
static const char *const f3_t14_path[] = {"#14", NULL};
static const int64_t f3_t14_shape[] = {2};
static const int64_t f3_t14_strides[] = {1};
static const double f3_t14_values[] = {0x1.c000000000000p+3, 0x1.c000000000000p+3};
static const char *const f3_t15_path[] = {"#15", NULL};
static const int64_t f3_t15_shape[] = {2};
static const int64_t f3_t15_strides[] = {1};
static const double f3_t15_values[] = {0x1.e000000000000p+3, 0x1.e000000000000p+3};
static const char *const f3_t16_path[] = {"#16", NULL};
static const int64_t f3_t16_shape[] = {2};
static const int64_t f3_t16_strides[] = {1};
static const double f3_t16_values[] = {0x1.0000000000000p+4, 0x1.0000000000000p+4};
static const char *const f3_t17_path[] = {"#17", NULL};
static const int64_t f3_t17_shape[] = {2};
static const int64_t f3_t17_strides[] = {1};
static const double f3_t17_values[] = {0x1.1000000000000p+4, 0x1.1000000000000p+4};
static const char *const f3_t18_path[] = {"#18", NULL};
static const int64_t f3_t18_shape[] = {2};
static const int64_t f3_t18_strides[] = {1};
static const double f3_t18_values[] = {0x1.2000000000000p+4, 0x1.2000000000000p+4};
static const char *const f3_t19_path[] = {"#19", NULL};
static const int64_t f3_t19_shape[] = {2};
static const int64_t f3_t19_strides[] = {1};
static const double f3_t19_values[] = {0x1.3000000000000p+4, 0x1.3000000000000p+4};
static const char *const f3_t20_path[] = {"#20", NULL};
static const int64_t f3_t20_shape[] = {2};
static const int64_t f3_t20_strides[] = {1};
static const double f3_t20_values[] = {0x1.4000000000000p+4, 0x1.4000000000000p+4};
static const char *const f3_t21_path[] = {"#21", NULL};
static const int64_t f3_t21_shape[] = {2};
static const int64_t f3_t21_strides[] = {1};
static const double f3_t21_values[] = {0x1.5000000000000p+4, 0x1.5000000000000p+4};
static const char *const f3_t22_path[] = {"#22", NULL};
static const int64_t f3_t22_shape[] = {2};
static const int64_t f3_t22_strides[] = {1};
static const double f3_t22_values[] = {0x1.6000000000000p+4, 0x1.6000000000000p+4};
static const char *const f3_t23_path[] = {"#23", NULL};
static const int64_t f3_t23_shape[] = {2};
static const int64_t f3_t23_strides[] = {1};
static const double f3_t23_values[] = {0x1.7000000000000p+4, 0x1.7000000000000p+4};
static const char *const f3_t24_path[] = {"#24", NULL};
static const int64_t f3_t24_shape[] = {2};
static const int64_t f3_t24_strides[] = {1};
static const double f3_t24_values[] = {0x1.8000000000000p+4, 0x1.8000000000000p+4};
static const char *const f3_t25_path[] = {"#25", NULL};
static const int64_t f3_t25_shape[] = {2};
static const int64_t f3_t25_strides[] = {1};
static const double f3_t25_values[] = {0x1.9000000000000p+4, 0x1.9000000000000p+4};
static const char *const f3_t26_path[] = {"#26", NULL};
static const int64_t f3_t26_shape[] = {2};
static const int64_t f3_t26_strides[] = {1};
static const double f3_t26_values[] = {0x1.a000000000000p+4, 0x1.a000000000000p+4};
static const char *const f3_t27_path[] = {"#27", NULL};
static const int64_t f3_t27_shape[] = {2};
static const int64_t f3_t27_strides[] = {1};
static const double f3_t27_values[] = {0x1.b000000000000p+4, 0x1.b000000000000p+4};
static const char *const f3_t28_path[] = {"#28", NULL};
static const int64_t f3_t28_shape[] = {2};
static const int64_t f3_t28_strides[] = {1};
static const double f3_t28_values[] = {0x1.c000000000000p+4, 0x1.c000000000000p+4};
static const char *const f3_t29_path[] = {"#29", NULL};
static const int64_t f3_t29_shape[] = {2};
static const int64_t f3_t29_strides[] = {1};
static const double f3_t29_values[] = {0x1.d000000000000p+4, 0x1.d000000000000p+4};
static const char *const f3_t30_path[] = {"#30", NULL};
static const int64_t f3_t30_shape[] = {2};
static const int64_t f3_t30_strides[] = {1};
static const double f3_t30_values[] = {0x1.e000000000000p+4, 0x1.e000000000000p+4};
static const char *const f3_t31_path[] = {"#31", NULL};
static const int64_t f3_t31_shape[] = {2};
static const int64_t f3_t31_strides[] = {1};
static const double f3_t31_values[] = {0x1.f000000000000p+4, 0x1.f000000000000p+4};
static const char *const f3_t32_path[] = {"#32", NULL};
static const int64_t f3_t32_shape[] = {2};
static const int64_t f3_t32_strides[] = {1};
static const double f3_t32_values[] = {0x1.0000000000000p+5, 0x1.0000000000000p+5};
static const char *const f3_t33_path[] = {"#33", NULL};
static const int64_t f3_t33_shape[] = {2};
static const int64_t f3_t33_strides[] = {1};
static const double f3_t33_values[] = {0x1.0800000000000p+5, 0x1.0800000000000p+5};
static const char *const f3_t34_path[] = {"#34", NULL};
static const int64_t f3_t34_shape[] = {2};
static const int64_t f3_t34_strides[] = {1};
static const double f3_t34_values[] = {0x1.1000000000000p+5, 0x1.1000000000000p+5};
static const char *const f3_t35_path[] = {"#35", NULL};
static const int64_t f3_t35_shape[] = {2};
static const int64_t f3_t35_strides[] = {1};
static const double f3_t35_values[] = {0x1.1800000000000p+5, 0x1.1800000000000p+5};
static const char *const f3_t36_path[] = {"#36", NULL};
static const int64_t f3_t36_shape[] = {15, 20};
static const int64_t f3_t36_strides[] = {20, 1};
static const double f3_t36_values[] = {0x0.0p+0,
                                       0x1.0000000000000p+0,
                                       0x1.0000000000000p+1,
                                       0x1.8000000000000p+1,
                                       0x1.0000000000000p+2,
                                       0x1.4000000000000p+2,
                                       0x1.8000000000000p+2,
                                       0x1.c000000000000p+2,
                                       0x1.0000000000000p+3,
                                       0x1.2000000000000p+3,
                                       0x1.4000000000000p+3,
                                       0x1.6000000000000p+3,
                                       0x1.8000000000000p+3,
                                       0x1.a000000000000p+3,
                                       0x1.c000000000000p+3,
                                       0x1.e000000000000p+3,
                                       0x1.0000000000000p+4,
                                       0x1.1000000000000p+4,
                                       0x1.2000000000000p+4,
                                       0x1.3000000000000p+4,
                                       0x1.4000000000000p+4,
                                       0x1.5000000000000p+4,
                                       0x1.6000000000000p+4,
                                       0x1.7000000000000p+4,
                                       0x1.8000000000000p+4,
                                       0x1.9000000000000p+4,
                                       0x1.a000000000000p+4,
                                       0x1.b000000000000p+4,
                                       0x1.c000000000000p+4,
                                       0x1.d000000000000p+4,
                                       0x1.e000000000000p+4,
                                       0x1.f000000000000p+4,
                                       0x1.0000000000000p+5,
                                       0x1.0800000000000p+5,
                                       0x1.1000000000000p+5,
                                       0x1.1800000000000p+5,
                                       0x1.2000000000000p+5,
                                       0x1.2800000000000p+5,
                                       0x1.3000000000000p+5,
                                       0x1.3800000000000p+5,
                                       0x1.4000000000000p+5,
                                       0x1.4800000000000p+5,
                                       0x1.5000000000000p+5,
                                       0x1.5800000000000p+5,
                                       0x1.6000000000000p+5,
                                       0x1.6800000000000p+5,
                                       0x1.7000000000000p+5,
                                       0x1.7800000000000p+5,
                                       0x1.8000000000000p+5,
                                       0x1.8800000000000p+5,
                                       0x1.9000000000000p+5,
                                       0x1.9800000000000p+5,
                                       0x1.a000000000000p+5,
                                       0x1.a800000000000p+5,
                                       0x1.b000000000000p+5,
                                       0x1.b800000000000p+5,
                                       0x1.c000000000000p+5,
                                       0x1.c800000000000p+5,
                                       0x1.d000000000000p+5,
                                       0x1.d800000000000p+5,
                                       0x1.e000000000000p+5,
                                       0x1.e800000000000p+5,
                                       0x1.f000000000000p+5,
                                       0x1.f800000000000p+5,
                                       0x1.0000000000000p+6,
                                       0x1.0400000000000p+6,
                                       0x1.0800000000000p+6,
                                       0x1.0c00000000000p+6,
                                       0x1.1000000000000p+6,
                                       0x1.1400000000000p+6,
                                       0x1.1800000000000p+6,
                                       0x1.1c00000000000p+6,
                                       0x1.2000000000000p+6,
                                       0x1.2400000000000p+6,
                                       0x1.2800000000000p+6,
                                       0x1.2c00000000000p+6,
                                       0x1.3000000000000p+6,
                                       0x1.3400000000000p+6,
                                       0x1.3800000000000p+6,
                                       0x1.3c00000000000p+6,
                                       0x1.4000000000000p+6,
                                       0x1.4400000000000p+6,
                                       0x1.4800000000000p+6,
                                       0x1.4c00000000000p+6,
                                       0x1.5000000000000p+6,
                                       0x1.5400000000000p+6,
                                       0x1.5800000000000p+6,
                                       0x1.5c00000000000p+6,
                                       0x1.6000000000000p+6,
                                       0x1.6400000000000p+6,
                                       0x1.6800000000000p+6,
                                       0x1.6c00000000000p+6,
                                       0x1.7000000000000p+6,
                                       0x1.7400000000000p+6,
                                       0x1.7800000000000p+6,
                                       0x1.7c00000000000p+6,
                                       0x1.8000000000000p+6,
                                       0x1.8400000000000p+6,
                                       0x1.8800000000000p+6,
                                       0x1.8c00000000000p+6,
                                       0x1.9000000000000p+6,
                                       0x1.9400000000000p+6,
                                       0x1.9800000000000p+6,
                                       0x1.9c00000000000p+6,
                                       0x1.a000000000000p+6,
                                       0x1.a400000000000p+6,
                                       0x1.a800000000000p+6,
                                       0x1.ac00000000000p+6,
                                       0x1.b000000000000p+6,
                                       0x1.b400000000000p+6,
                                       0x1.b800000000000p+6,
                                       0x1.bc00000000000p+6,
                                       0x1.c000000000000p+6,
                                       0x1.c400000000000p+6,
                                       0x1.c800000000000p+6,
                                       0x1.cc00000000000p+6,
                                       0x1.d000000000000p+6,
                                       0x1.d400000000000p+6,
                                       0x1.d800000000000p+6,
                                       0x1.dc00000000000p+6,
                                       0x1.e000000000000p+6,
                                       0x1.e400000000000p+6,
                                       0x1.e800000000000p+6,
                                       0x1.ec00000000000p+6,
                                       0x1.f000000000000p+6,
                                       0x1.f400000000000p+6,
                                       0x1.f800000000000p+6,
                                       0x1.fc00000000000p+6,
                                       0x1.0000000000000p+7,
                                       0x1.0200000000000p+7,
                                       0x1.0400000000000p+7,
                                       0x1.0600000000000p+7,
                                       0x1.0800000000000p+7,
                                       0x1.0a00000000000p+7,
                                       0x1.0c00000000000p+7,
                                       0x1.0e00000000000p+7,
                                       0x1.1000000000000p+7,
                                       0x1.1200000000000p+7,
                                       0x1.1400000000000p+7,
                                       0x1.1600000000000p+7,
                                       0x1.1800000000000p+7,
                                       0x1.1a00000000000p+7,
                                       0x1.1c00000000000p+7,
                                       0x1.1e00000000000p+7,
                                       0x1.2000000000000p+7,
                                       0x1.2200000000000p+7,
                                       0x1.2400000000000p+7,
                                       0x1.2600000000000p+7,
                                       0x1.2800000000000p+7,
                                       0x1.2a00000000000p+7,
                                       0x1.2c00000000000p+7,
                                       0x1.2e00000000000p+7,
                                       0x1.3000000000000p+7,
                                       0x1.3200000000000p+7,
                                       0x1.3400000000000p+7,
                                       0x1.3600000000000p+7,
                                       0x1.3800000000000p+7,
                                       0x1.3a00000000000p+7,
                                       0x1.3c00000000000p+7,
                                       0x1.3e00000000000p+7,
                                       0x1.4000000000000p+7,
                                       0x1.4200000000000p+7,
                                       0x1.4400000000000p+7,
                                       0x1.4600000000000p+7,
                                       0x1.4800000000000p+7,
                                       0x1.4a00000000000p+7,
                                       0x1.4c00000000000p+7,
                                       0x1.4e00000000000p+7,
                                       0x1.5000000000000p+7,
                                       0x1.5200000000000p+7,
                                       0x1.5400000000000p+7,
                                       0x1.5600000000000p+7,
                                       0x1.5800000000000p+7,
                                       0x1.5a00000000000p+7,
                                       0x1.5c00000000000p+7,
                                       0x1.5e00000000000p+7,
                                       0x1.6000000000000p+7,
                                       0x1.6200000000000p+7,
                                       0x1.6400000000000p+7,
                                       0x1.6600000000000p+7,
                                       0x1.6800000000000p+7,
                                       0x1.6a00000000000p+7,
                                       0x1.6c00000000000p+7,
                                       0x1.6e00000000000p+7,
                                       0x1.7000000000000p+7,
                                       0x1.7200000000000p+7,
                                       0x1.7400000000000p+7,
                                       0x1.7600000000000p+7,
                                       0x1.7800000000000p+7,
                                       0x1.7a00000000000p+7,
                                       0x1.7c00000000000p+7,
                                       0x1.7e00000000000p+7,
                                       0x1.8000000000000p+7,
                                       0x1.8200000000000p+7,
                                       0x1.8400000000000p+7,
                                       0x1.8600000000000p+7,
                                       0x1.8800000000000p+7,
                                       0x1.8a00000000000p+7,
                                       0x1.8c00000000000p+7,
                                       0x1.8e00000000000p+7,
                                       0x1.9000000000000p+7,
                                       0x1.9200000000000p+7,
                                       0x1.9400000000000p+7,
                                       0x1.9600000000000p+7,
                                       0x1.9800000000000p+7,
                                       0x1.9a00000000000p+7,
                                       0x1.9c00000000000p+7,
                                       0x1.9e00000000000p+7,
                                       0x1.a000000000000p+7,
                                       0x1.a200000000000p+7,
                                       0x1.a400000000000p+7,
                                       0x1.a600000000000p+7,
                                       0x1.a800000000000p+7,
                                       0x1.aa00000000000p+7,
                                       0x1.ac00000000000p+7,
                                       0x1.ae00000000000p+7,
                                       0x1.b000000000000p+7,
                                       0x1.b200000000000p+7,
                                       0x1.b400000000000p+7,
                                       0x1.b600000000000p+7,
                                       0x1.b800000000000p+7,
                                       0x1.ba00000000000p+7,
                                       0x1.bc00000000000p+7,
                                       0x1.be00000000000p+7,
                                       0x1.c000000000000p+7,
                                       0x1.c200000000000p+7,
                                       0x1.c400000000000p+7,
                                       0x1.c600000000000p+7,
                                       0x1.c800000000000p+7,
                                       0x1.ca00000000000p+7,
                                       0x1.cc00000000000p+7,
                                       0x1.ce00000000000p+7,
                                       0x1.d000000000000p+7,
                                       0x1.d200000000000p+7,
                                       0x1.d400000000000p+7,
                                       0x1.d600000000000p+7,
                                       0x1.d800000000000p+7,
                                       0x1.da00000000000p+7,
                                       0x1.dc00000000000p+7,
                                       0x1.de00000000000p+7,
                                       0x1.e000000000000p+7,
                                       0x1.e200000000000p+7,
                                       0x1.e400000000000p+7,
                                       0x1.e600000000000p+7,
                                       0x1.e800000000000p+7,
                                       0x1.ea00000000000p+7,
                                       0x1.ec00000000000p+7,
                                       0x1.ee00000000000p+7,
                                       0x1.f000000000000p+7,
                                       0x1.f200000000000p+7,
                                       0x1.f400000000000p+7,
                                       0x1.f600000000000p+7,
                                       0x1.f800000000000p+7,
                                       0x1.fa00000000000p+7,
                                       0x1.fc00000000000p+7,
                                       0x1.fe00000000000p+7,
                                       0x0.0p+0,
                                       0x1.0000000000000p+0,
                                       0x1.0000000000000p+1,
                                       0x1.8000000000000p+1,
                                       0x1.0000000000000p+2,
                                       0x1.4000000000000p+2,
                                       0x1.8000000000000p+2,
                                       0x1.c000000000000p+2,
                                       0x1.0000000000000p+3,
                                       0x1.2000000000000p+3,
                                       0x1.4000000000000p+3,
                                       0x1.6000000000000p+3,
                                       0x1.8000000000000p+3,
                                       0x1.a000000000000p+3,
                                       0x1.c000000000000p+3,
                                       0x1.e000000000000p+3,
                                       0x1.0000000000000p+4,
                                       0x1.1000000000000p+4,
                                       0x1.2000000000000p+4,
                                       0x1.3000000000000p+4,
                                       0x1.4000000000000p+4,
                                       0x1.5000000000000p+4,
                                       0x1.6000000000000p+4,
                                       0x1.7000000000000p+4,
                                       0x1.8000000000000p+4,
                                       0x1.9000000000000p+4,
                                       0x1.a000000000000p+4,
                                       0x1.b000000000000p+4,
                                       0x1.c000000000000p+4,
                                       0x1.d000000000000p+4,
                                       0x1.e000000000000p+4,
                                       0x1.f000000000000p+4,
                                       0x1.0000000000000p+5,
                                       0x1.0800000000000p+5,
                                       0x1.1000000000000p+5,
                                       0x1.1800000000000p+5,
                                       0x1.2000000000000p+5,
                                       0x1.2800000000000p+5,
                                       0x1.3000000000000p+5,
                                       0x1.3800000000000p+5,
                                       0x1.4000000000000p+5,
                                       0x1.4800000000000p+5,
                                       0x1.5000000000000p+5,
                                       0x1.5800000000000p+5};
static const char *const f3_t37_path[] = {"#37", NULL};
static const int64_t f3_t37_shape[] = {3};
static const int64_t f3_t37_strides[] = {1};
static const double f3_t37_values[] = {0x1.c000000000000p+2, 0x1.0000000000000p+3,
                                       0x1.2000000000000p+3};
static const exp_tensor f3_tensors[] = {
    {f3_t0_path, "float32", false, false, true, 1, f3_t0_shape, f3_t0_strides, 0, "0", 2, 8, 2240,
     f3_t0_values, 2},
    {f3_t1_path, "float32", false, false, true, 1, f3_t1_shape, f3_t1_strides, 0, "1", 2, 8, 2368,
     f3_t1_values, 2},
    {f3_t2_path, "float32", false, false, true, 1, f3_t2_shape, f3_t2_strides, 0, "2", 2, 8, 3776,
     f3_t2_values, 2},
    {f3_t3_path, "float32", false, false, true, 1, f3_t3_shape, f3_t3_strides, 0, "3", 2, 8, 5184,
     f3_t3_values, 2},
    {f3_t4_path, "float32", false, false, true, 1, f3_t4_shape, f3_t4_strides, 0, "4", 2, 8, 6592,
     f3_t4_values, 2},
    {f3_t5_path, "float32", false, false, true, 1, f3_t5_shape, f3_t5_strides, 0, "5", 2, 8, 6720,
     f3_t5_values, 2},
    {f3_t6_path, "float32", false, false, true, 1, f3_t6_shape, f3_t6_strides, 0, "6", 2, 8, 6848,
     f3_t6_values, 2},
    {f3_t7_path, "float32", false, false, true, 1, f3_t7_shape, f3_t7_strides, 0, "7", 2, 8, 6976,
     f3_t7_values, 2},
    {f3_t8_path, "float32", false, false, true, 1, f3_t8_shape, f3_t8_strides, 0, "8", 2, 8, 7104,
     f3_t8_values, 2},
    {f3_t9_path, "float32", false, false, true, 1, f3_t9_shape, f3_t9_strides, 0, "9", 2, 8, 7232,
     f3_t9_values, 2},
    {f3_t10_path, "float32", false, false, true, 1, f3_t10_shape, f3_t10_strides, 0, "10", 2, 8,
     2496, f3_t10_values, 2},
    {f3_t11_path, "float32", false, false, true, 1, f3_t11_shape, f3_t11_strides, 0, "11", 2, 8,
     2624, f3_t11_values, 2},
    {f3_t12_path, "float32", false, false, true, 1, f3_t12_shape, f3_t12_strides, 0, "12", 2, 8,
     2752, f3_t12_values, 2},
    {f3_t13_path, "float32", false, false, true, 1, f3_t13_shape, f3_t13_strides, 0, "13", 2, 8,
     2880, f3_t13_values, 2},
    {f3_t14_path, "float32", false, false, true, 1, f3_t14_shape, f3_t14_strides, 0, "14", 2, 8,
     3008, f3_t14_values, 2},
    {f3_t15_path, "float32", false, false, true, 1, f3_t15_shape, f3_t15_strides, 0, "15", 2, 8,
     3136, f3_t15_values, 2},
    {f3_t16_path, "float32", false, false, true, 1, f3_t16_shape, f3_t16_strides, 0, "16", 2, 8,
     3264, f3_t16_values, 2},
    {f3_t17_path, "float32", false, false, true, 1, f3_t17_shape, f3_t17_strides, 0, "17", 2, 8,
     3392, f3_t17_values, 2},
    {f3_t18_path, "float32", false, false, true, 1, f3_t18_shape, f3_t18_strides, 0, "18", 2, 8,
     3520, f3_t18_values, 2},
    {f3_t19_path, "float32", false, false, true, 1, f3_t19_shape, f3_t19_strides, 0, "19", 2, 8,
     3648, f3_t19_values, 2},
    {f3_t20_path, "float32", false, false, true, 1, f3_t20_shape, f3_t20_strides, 0, "20", 2, 8,
     3904, f3_t20_values, 2},
    {f3_t21_path, "float32", false, false, true, 1, f3_t21_shape, f3_t21_strides, 0, "21", 2, 8,
     4032, f3_t21_values, 2},
    {f3_t22_path, "float32", false, false, true, 1, f3_t22_shape, f3_t22_strides, 0, "22", 2, 8,
     4160, f3_t22_values, 2},
    {f3_t23_path, "float32", false, false, true, 1, f3_t23_shape, f3_t23_strides, 0, "23", 2, 8,
     4288, f3_t23_values, 2},
    {f3_t24_path, "float32", false, false, true, 1, f3_t24_shape, f3_t24_strides, 0, "24", 2, 8,
     4416, f3_t24_values, 2},
    {f3_t25_path, "float32", false, false, true, 1, f3_t25_shape, f3_t25_strides, 0, "25", 2, 8,
     4544, f3_t25_values, 2},
    {f3_t26_path, "float32", false, false, true, 1, f3_t26_shape, f3_t26_strides, 0, "26", 2, 8,
     4672, f3_t26_values, 2},
    {f3_t27_path, "float32", false, false, true, 1, f3_t27_shape, f3_t27_strides, 0, "27", 2, 8,
     4800, f3_t27_values, 2},
    {f3_t28_path, "float32", false, false, true, 1, f3_t28_shape, f3_t28_strides, 0, "28", 2, 8,
     4928, f3_t28_values, 2},
    {f3_t29_path, "float32", false, false, true, 1, f3_t29_shape, f3_t29_strides, 0, "29", 2, 8,
     5056, f3_t29_values, 2},
    {f3_t30_path, "float32", false, false, true, 1, f3_t30_shape, f3_t30_strides, 0, "30", 2, 8,
     5312, f3_t30_values, 2},
    {f3_t31_path, "float32", false, false, true, 1, f3_t31_shape, f3_t31_strides, 0, "31", 2, 8,
     5440, f3_t31_values, 2},
    {f3_t32_path, "float32", false, false, true, 1, f3_t32_shape, f3_t32_strides, 0, "32", 2, 8,
     5568, f3_t32_values, 2},
    {f3_t33_path, "float32", false, false, true, 1, f3_t33_shape, f3_t33_strides, 0, "33", 2, 8,
     5696, f3_t33_values, 2},
    {f3_t34_path, "float32", false, false, true, 1, f3_t34_shape, f3_t34_strides, 0, "34", 2, 8,
     5824, f3_t34_values, 2},
    {f3_t35_path, "float32", false, false, true, 1, f3_t35_shape, f3_t35_strides, 0, "35", 2, 8,
     5952, f3_t35_values, 2},
    {f3_t36_path, "uint8", false, false, true, 2, f3_t36_shape, f3_t36_strides, 0, "36", 300, 300,
     6080, f3_t36_values, 300},
    {f3_t37_path, "uint8", false, false, true, 1, f3_t37_shape, f3_t37_strides, 0, "37", 3, 3, 6464,
     f3_t37_values, 3},
};
static const exp_storage f3_storages[] = {
    {"0", 8, 2240, "0000000000000000"},
    {"1", 8, 2368, "0000803f0000803f"},
    {"10", 8, 2496, "0000204100002041"},
    {"11", 8, 2624, "0000304100003041"},
    {"12", 8, 2752, "0000404100004041"},
    {"13", 8, 2880, "0000504100005041"},
    {"14", 8, 3008, "0000604100006041"},
    {"15", 8, 3136, "0000704100007041"},
    {"16", 8, 3264, "0000804100008041"},
    {"17", 8, 3392, "0000884100008841"},
    {"18", 8, 3520, "0000904100009041"},
    {"19", 8, 3648, "0000984100009841"},
    {"2", 8, 3776, "0000004000000040"},
    {"20", 8, 3904, "0000a0410000a041"},
    {"21", 8, 4032, "0000a8410000a841"},
    {"22", 8, 4160, "0000b0410000b041"},
    {"23", 8, 4288, "0000b8410000b841"},
    {"24", 8, 4416, "0000c0410000c041"},
    {"25", 8, 4544, "0000c8410000c841"},
    {"26", 8, 4672, "0000d0410000d041"},
    {"27", 8, 4800, "0000d8410000d841"},
    {"28", 8, 4928, "0000e0410000e041"},
    {"29", 8, 5056, "0000e8410000e841"},
    {"3", 8, 5184, "0000404000004040"},
    {"30", 8, 5312, "0000f0410000f041"},
    {"31", 8, 5440, "0000f8410000f841"},
    {"32", 8, 5568, "0000004200000042"},
    {"33", 8, 5696, "0000044200000442"},
    {"34", 8, 5824, "0000084200000842"},
    {"35", 8, 5952, "00000c4200000c42"},
    {"36", 300, 6080,
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425"
     "262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b"
     "4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071"
     "72737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f9091929394959697"
     "98999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbd"
     "bebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3"
     "e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff00010203040506070809"
     "0a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b"},
    {"37", 3, 6464, "070809"},
    {"4", 8, 6592, "0000804000008040"},
    {"5", 8, 6720, "0000a0400000a040"},
    {"6", 8, 6848, "0000c0400000c040"},
    {"7", 8, 6976, "0000e0400000e040"},
    {"8", 8, 7104, "0000004100000041"},
    {"9", 8, 7232, "0000104100001041"},
};
static const exp_same f3_same[] = {
    {(const char *const[]){"#38", NULL}, (const char *const[]){"#36", NULL}},
};
static const char *const f4_t0_path[] = {"#0", NULL};
static const int64_t f4_t0_shape[] = {3, 2};
static const int64_t f4_t0_strides[] = {1, 3};
static const double f4_t0_values[] = {0x0.0p+0,
                                      0x1.8000000000000p+1,
                                      0x1.0000000000000p+0,
                                      0x1.0000000000000p+2,
                                      0x1.0000000000000p+1,
                                      0x1.4000000000000p+2};
static const char *const f4_t1_path[] = {"#1", NULL};
static const int64_t f4_t1_shape[] = {4, 2, 3};
static const int64_t f4_t1_strides[] = {1, 12, 4};
static const double f4_t1_values[] = {0x0.0p+0,
                                      0x1.0000000000000p+2,
                                      0x1.0000000000000p+3,
                                      0x1.8000000000000p+3,
                                      0x1.0000000000000p+4,
                                      0x1.4000000000000p+4,
                                      0x1.0000000000000p+0,
                                      0x1.4000000000000p+2,
                                      0x1.2000000000000p+3,
                                      0x1.a000000000000p+3,
                                      0x1.1000000000000p+4,
                                      0x1.5000000000000p+4,
                                      0x1.0000000000000p+1,
                                      0x1.8000000000000p+2,
                                      0x1.4000000000000p+3,
                                      0x1.c000000000000p+3,
                                      0x1.2000000000000p+4,
                                      0x1.6000000000000p+4,
                                      0x1.8000000000000p+1,
                                      0x1.c000000000000p+2,
                                      0x1.6000000000000p+3,
                                      0x1.e000000000000p+3,
                                      0x1.3000000000000p+4,
                                      0x1.7000000000000p+4};
static const char *const f4_t2_path[] = {"#2", NULL};
static const int64_t f4_t2_shape[] = {2, 2, 2};
static const int64_t f4_t2_strides[] = {12, 4, 2};
static const double f4_t2_values[] = {
    0x1.0000000000000p+2, 0x1.8000000000000p+2, 0x1.0000000000000p+3, 0x1.4000000000000p+3,
    0x1.0000000000000p+4, 0x1.2000000000000p+4, 0x1.4000000000000p+4, 0x1.6000000000000p+4};
static const char *const f4_t3_path[] = {"#3", NULL};
static const int64_t f4_t3_shape[] = {2, 3};
static const int64_t f4_t3_strides[] = {0, 1};
static const double f4_t3_values[] = {0x1.0000000000000p+0, 0x1.0000000000000p+1,
                                      0x1.8000000000000p+1, 0x1.0000000000000p+0,
                                      0x1.0000000000000p+1, 0x1.8000000000000p+1};
static const char *const f4_t4_path[] = {"#4", NULL};
static const int64_t f4_t4_shape[] = {1, 4, 2, 2};
static const int64_t f4_t4_strides[] = {16, 1, 8, 4};
static const double f4_t4_values[] = {0x0.0p+0,
                                      0x1.0000000000000p+0,
                                      0x1.0000000000000p+1,
                                      0x1.8000000000000p+1,
                                      0x1.0000000000000p+2,
                                      0x1.4000000000000p+2,
                                      0x1.8000000000000p+2,
                                      0x1.c000000000000p+2,
                                      0x1.0000000000000p+3,
                                      0x1.2000000000000p+3,
                                      0x1.4000000000000p+3,
                                      0x1.6000000000000p+3,
                                      0x1.8000000000000p+3,
                                      0x1.a000000000000p+3,
                                      0x1.c000000000000p+3,
                                      0x1.e000000000000p+3};
static const exp_tensor f4_tensors[] = {
    {f4_t0_path, "float32", false, false, false, 2, f4_t0_shape, f4_t0_strides, 0, "0", 6, 24, 576,
     f4_t0_values, 6},
    {f4_t1_path, "float64", false, false, false, 3, f4_t1_shape, f4_t1_strides, 0, "1", 24, 192,
     704, f4_t1_values, 24},
    {f4_t2_path, "float64", false, false, false, 3, f4_t2_shape, f4_t2_strides, 4, "1", 24, 192,
     704, f4_t2_values, 8},
    {f4_t3_path, "int32", false, false, false, 2, f4_t3_shape, f4_t3_strides, 0, "2", 3, 12, 1024,
     f4_t3_values, 6},
    {f4_t4_path, "int64", false, false, false, 4, f4_t4_shape, f4_t4_strides, 0, "3", 16, 128, 1152,
     f4_t4_values, 16},
};
static const exp_storage f4_storages[] = {
    {"0", 24, 576, "000000000000803f0000004000004040000080400000a040"},
    {"1", 192, 704,
     "0000000000000000000000000000f03f00000000000000400000000000000840000000000000"
     "1040000000000000144000000000000018400000000000001c40000000000000204000000000"
     "000022400000000000002440000000000000264000000000000028400000000000002a400000"
     "000000002c400000000000002e40000000000000304000000000000031400000000000003240"
     "0000000000003340000000000000344000000000000035400000000000003640000000000000"
     "3740"},
    {"2", 12, 1024, "010000000200000003000000"},
    {"3", 128, 1152,
     "0000000000000000040000000000000008000000000000000c00000000000000010000000000"
     "0000050000000000000009000000000000000d00000000000000020000000000000006000000"
     "000000000a000000000000000e00000000000000030000000000000007000000000000000b00"
     "0000000000000f00000000000000"},
};
static const char *const f5_t0_path[] = {"weight", NULL};
static const int64_t f5_t0_shape[] = {3, 2};
static const int64_t f5_t0_strides[] = {2, 1};
static const double f5_t0_values[] = {0x1.0000000000000p-1,  -0x1.0000000000000p+0,
                                      0x1.0000000000000p-2,  0x1.0000000000000p+1,
                                      -0x1.8000000000000p-1, 0x0.0p+0};
static const char *const f5_t1_path[] = {"bias", NULL};
static const int64_t f5_t1_shape[] = {3};
static const int64_t f5_t1_strides[] = {1};
static const double f5_t1_values[] = {0x1.0000000000000p+0, -0x1.0000000000000p+0,
                                      0x1.0000000000000p-1};
static const exp_tensor f5_tensors[] = {
    {f5_t0_path, "float32", false, false, true, 2, f5_t0_shape, f5_t0_strides, 0, "0", 6, 24, 512,
     f5_t0_values, 6},
    {f5_t1_path, "float32", false, false, true, 1, f5_t1_shape, f5_t1_strides, 0, "1", 3, 12, 640,
     f5_t1_values, 3},
};
static const exp_storage f5_storages[] = {
    {"0", 24, 512, "0000003f000080bf0000803e00000040000040bf00000000"},
    {"1", 12, 640, "0000803f000080bf0000003f"},
};
static const char *const f6_t0_path[] = {NULL};
static const int64_t f6_t0_shape[] = {2, 3};
static const int64_t f6_t0_strides[] = {3, 1};
static const double f6_t0_values[] = {
    0x1.8000000000000p+0, -0x1.2000000000000p+1, 0x1.8000000000000p+1, 0x0.0p+0, -0x0.0p+0,
    0x1.99999a0000000p-4};
static const exp_tensor f6_tensors[] = {
    {f6_t0_path, "float32", false, false, true, 2, f6_t0_shape, f6_t0_strides, 0, "0", 6, 24, 320,
     f6_t0_values, 6},
};
static const exp_storage f6_storages[] = {
    {"0", 24, 320, "0000c03f000010c0000040400000000000000080cdcccc3d"},
};
static const char *const f7_t0_path[] = {"tensor_in_tuple", "#0", NULL};
static const int64_t f7_t0_shape[] = {1};
static const int64_t f7_t0_strides[] = {1};
static const double f7_t0_values[] = {0x1.0000000000000p+0};
static const exp_tensor f7_tensors[] = {
    {f7_t0_path, "float32", false, false, true, 1, f7_t0_shape, f7_t0_strides, 0, "0", 1, 4, 640,
     f7_t0_values, 1},
};
static const exp_storage f7_storages[] = {
    {"0", 4, 640, "0000803f"},
};
static const char *const f8_t0_path[] = {"#0", NULL};
static const int64_t f8_t0_shape[] = {4};
static const int64_t f8_t0_strides[] = {1};
static const double f8_t0_values[] = {0x1.0000000000000p-1, 0x1.8000000000000p-1,
                                      0x1.0000000000000p+0, 0x1.4000000000000p+0};
static const char *const f8_t1_path[] = {"#1", NULL};
static const int64_t f8_t1_shape[] = {2, 3};
static const int64_t f8_t1_strides[] = {3, 1};
static const double f8_t1_values[] = {0x1.8000000000000p+0, 0x1.c000000000000p+0,
                                      0x1.0000000000000p+1, 0x1.2000000000000p+1,
                                      0x1.4000000000000p+1, 0x1.6000000000000p+1};
static const char *const f8_t2_path[] = {"#3", NULL};
static const int64_t f8_t2_shape[] = {12};
static const int64_t f8_t2_strides[] = {1};
static const double f8_t2_values[] = {0x0.0p+0,
                                      0x1.0000000000000p-2,
                                      0x1.0000000000000p-1,
                                      0x1.8000000000000p-1,
                                      0x1.0000000000000p+0,
                                      0x1.4000000000000p+0,
                                      0x1.8000000000000p+0,
                                      0x1.c000000000000p+0,
                                      0x1.0000000000000p+1,
                                      0x1.2000000000000p+1,
                                      0x1.4000000000000p+1,
                                      0x1.6000000000000p+1};
static const exp_tensor f8_tensors[] = {
    {f8_t0_path, "float32", false, false, true, 1, f8_t0_shape, f8_t0_strides, 2, "0", 12, 48, 384,
     f8_t0_values, 4},
    {f8_t1_path, "float32", false, false, true, 2, f8_t1_shape, f8_t1_strides, 6, "0", 12, 48, 384,
     f8_t1_values, 6},
    {f8_t2_path, "float32", false, false, true, 1, f8_t2_shape, f8_t2_strides, 0, "0", 12, 48, 384,
     f8_t2_values, 12},
};
static const exp_storage f8_storages[] = {
    {"0", 48, 384,
     "000000000000803e0000003f0000403f0000803f0000a03f0000c03f0000e03f000000400000"
     "10400000204000003040"},
};
static const exp_same f8_same[] = {
    {(const char *const[]){"#2", NULL}, (const char *const[]){"#0", NULL}},
};
static const char *const f9_t0_path[] = {"weight", NULL};
static const int64_t f9_t0_shape[] = {3, 2};
static const int64_t f9_t0_strides[] = {2, 1};
static const double f9_t0_values[] = {0x1.0000000000000p-1,  -0x1.0000000000000p+0,
                                      0x1.0000000000000p-2,  0x1.0000000000000p+1,
                                      -0x1.8000000000000p-1, 0x0.0p+0};
static const char *const f9_t1_path[] = {"bias", NULL};
static const int64_t f9_t1_shape[] = {3};
static const int64_t f9_t1_strides[] = {1};
static const double f9_t1_values[] = {0x1.0000000000000p+0, -0x1.0000000000000p+0,
                                      0x1.0000000000000p-1};
static const char *const f9_t2_path[] = {"running", NULL};
static const int64_t f9_t2_shape[] = {2};
static const int64_t f9_t2_strides[] = {1};
static const double f9_t2_values[] = {0x1.8000000000000p+1, 0x1.0000000000000p+2};
static const exp_tensor f9_tensors[] = {
    {f9_t0_path, "float32", true, true, true, 2, f9_t0_shape, f9_t0_strides, 0, "0", 6, 24, 512,
     f9_t0_values, 6},
    {f9_t1_path, "float32", true, true, true, 1, f9_t1_shape, f9_t1_strides, 0, "1", 3, 12, 640,
     f9_t1_values, 3},
    {f9_t2_path, "float32", false, false, true, 1, f9_t2_shape, f9_t2_strides, 0, "2", 2, 8, 768,
     f9_t2_values, 2},
};
static const exp_storage f9_storages[] = {
    {"0", 24, 512, "0000003f000080bf0000803e00000040000040bf00000000"},
    {"1", 12, 640, "0000803f000080bf0000003f"},
    {"2", 8, 768, "0000404000008040"},
};
static const char *const f10_t0_path[] = {"scalar_f32", NULL};
static const int64_t f10_t0_shape[] = {0};
static const int64_t f10_t0_strides[] = {0};
static const double f10_t0_values[] = {0x1.4000000000000p+1};
static const char *const f10_t1_path[] = {"scalar_i64", NULL};
static const int64_t f10_t1_shape[] = {0};
static const int64_t f10_t1_strides[] = {0};
static const double f10_t1_values[] = {-0x1.c000000000000p+2};
static const char *const f10_t2_path[] = {"scalar_bool", NULL};
static const int64_t f10_t2_shape[] = {0};
static const int64_t f10_t2_strides[] = {0};
static const double f10_t2_values[] = {0x1.0000000000000p+0};
static const char *const f10_t3_path[] = {"empty_f32", NULL};
static const int64_t f10_t3_shape[] = {0};
static const int64_t f10_t3_strides[] = {1};
static const double f10_t3_values[] = {0};
static const char *const f10_t4_path[] = {"empty_2d_i32", NULL};
static const int64_t f10_t4_shape[] = {3, 0};
static const int64_t f10_t4_strides[] = {1, 1};
static const double f10_t4_values[] = {0};
static const exp_tensor f10_tensors[] = {
    {f10_t0_path, "float32", false, false, true, 0, f10_t0_shape, f10_t0_strides, 0, "0", 1, 4, 640,
     f10_t0_values, 1},
    {f10_t1_path, "int64", false, false, true, 0, f10_t1_shape, f10_t1_strides, 0, "1", 1, 8, 768,
     f10_t1_values, 1},
    {f10_t2_path, "bool", false, false, true, 0, f10_t2_shape, f10_t2_strides, 0, "2", 1, 1, 896,
     f10_t2_values, 1},
    {f10_t3_path, "float32", false, false, true, 1, f10_t3_shape, f10_t3_strides, 0, "3", 0, 0,
     1024, f10_t3_values, 0},
    {f10_t4_path, "int32", false, false, true, 2, f10_t4_shape, f10_t4_strides, 0, "4", 0, 0, 1088,
     f10_t4_values, 0},
};
static const exp_storage f10_storages[] = {
    {"0", 4, 640, "00002040"}, {"1", 8, 768, "f9ffffffffffffff"},
    {"2", 1, 896, "01"},       {"3", 0, 1024, ""},
    {"4", 0, 1088, ""},
};
static const exp_file expected_files[] = {
    {"bytesio_example_inputs.pt", "archive", 747, "((T(float32,[1,2],[2,1],0,0,0),3),{})",
     f0_tensors, 1, f0_storages, 1, NULL, 0},
    {"dict_of_lists.pt", "dict_of_lists", 1539,
     "{\"forward\":[[T(float32,[2,2],[2,1],0,0,0),T(float32,[1],[1],0,1,0)],[T(float"
     "32,[2],[1],0,2,0)]],\"decode\":[[T(int64,[3],[1],0,3,0)]]}",
     f1_tensors, 4, f1_storages, 4, NULL, 0},
    {"list_of_tensors.pt", "list_of_tensors", 1551,
     "[T(float32,[2],[1],0,0,0),T(int64,[2,2],[2,1],0,1,0),T(float16,[3],[1],0,2,0"
     "),T(bool,[3],[1],0,3,0)]",
     f2_tensors, 4, f2_storages, 4, NULL, 0},
    {"many_storages.pt", "many_storages", 10147,
     "[T(float32,[2],[1],0,0,0),T(float32,[2],[1],0,1,0),T(float32,[2],[1],0,2,0),"
     "T(float32,[2],[1],0,3,0),T(float32,[2],[1],0,4,0),T(float32,[2],[1],0,5,0),T"
     "(float32,[2],[1],0,6,0),T(float32,[2],[1],0,7,0),T(float32,[2],[1],0,8,0),T("
     "float32,[2],[1],0,9,0),T(float32,[2],[1],0,10,0),T(float32,[2],[1],0,11,0),T"
     "(float32,[2],[1],0,12,0),T(float32,[2],[1],0,13,0),T(float32,[2],[1],0,14,0)"
     ",T(float32,[2],[1],0,15,0),T(float32,[2],[1],0,16,0),T(float32,[2],[1],0,17,"
     "0),T(float32,[2],[1],0,18,0),T(float32,[2],[1],0,19,0),T(float32,[2],[1],0,2"
     "0,0),T(float32,[2],[1],0,21,0),T(float32,[2],[1],0,22,0),T(float32,[2],[1],0"
     ",23,0),T(float32,[2],[1],0,24,0),T(float32,[2],[1],0,25,0),T(float32,[2],[1]"
     ",0,26,0),T(float32,[2],[1],0,27,0),T(float32,[2],[1],0,28,0),T(float32,[2],["
     "1],0,29,0),T(float32,[2],[1],0,30,0),T(float32,[2],[1],0,31,0),T(float32,[2]"
     ",[1],0,32,0),T(float32,[2],[1],0,33,0),T(float32,[2],[1],0,34,0),T(float32,["
     "2],[1],0,35,0),T(uint8,[15,20],[20,1],0,36,0),T(uint8,[3],[1],0,37,0),T(uint"
     "8,[15,20],[20,1],0,36,0)]",
     f3_tensors, 38, f3_storages, 38, f3_same, 1},
    {"non_contiguous.pt", "non_contiguous", 1929,
     "[T(float32,[3,2],[1,3],0,0,0),T(float64,[4,2,3],[1,12,4],0,1,0),T(float64,[2"
     ",2,2],[12,4,2],4,1,0),T(int32,[2,3],[0,1],0,2,0),T(int64,[1,4,2,2],[16,1,8,4"
     "],0,3,0)]",
     f4_tensors, 5, f4_storages, 4, NULL, 0},
    {"ordereddict_state_dict.pt", "ordereddict_state_dict", 1187,
     "OD{\"weight\":T(float32,[3,2],[2,1],0,0,0),\"bias\":T(float32,[3],[1],0,1,0)}@{\""
     "_metadata\":OD{\"\":{\"version\":1}}}",
     f5_tensors, 2, f5_storages, 2, NULL, 0},
    {"plain_tensor.pt", "plain_tensor", 762, "T(float32,[2,3],[3,1],0,0,0)", f6_tensors, 1,
     f6_storages, 1, NULL, 0},
    {"python_scalars.pt", "python_scalars", 1088,
     "{\"none\":None,\"true\":True,\"false\":False,\"ints\":[0,255,256,65535,65536,-1,-214"
     "7483648,2147483648,9223372036854775807,-9223372036854775808,1844674407370955"
     "1616],\"floats\":[f0.5,f-0,finf,fnan],\"str\":\"\317\203-gate "
     "\"q\"\",\"tuple4\":(1,2,3,4),\"t"
     "1\":(1),\"t3\":(1,2,3),\"int_keys\":{0:\"zero\",7:\"seven\"},\"tensor_in_tuple\":(T(flo"
     "at32,[1],[1],0,0,0))}",
     f7_tensors, 1, f7_storages, 1, NULL, 0},
    {"shared_storage.pt", "shared_storage", 832,
     "[T(float32,[4],[1],2,0,0),T(float32,[2,3],[3,1],6,0,0),T(float32,[4],[1],2,0"
     ",0),T(float32,[12],[1],0,0,0)]",
     f8_tensors, 3, f8_storages, 1, f8_same, 1},
    {"state_dict_params.pt", "state_dict_params", 1365,
     "{\"weight\":P(float32,[3,2],[2,1],0,0,1),\"bias\":P(float32,[3],[1],0,1,1),\"runn"
     "ing\":T(float32,[2],[1],0,2,0)}",
     f9_tensors, 3, f9_storages, 3, NULL, 0},
    {"zero_dim_and_empty.pt", "zero_dim_and_empty", 1768,
     "{\"scalar_f32\":T(float32,[],[],0,0,0),\"scalar_i64\":T(int64,[],[],0,1,0),\"scal"
     "ar_bool\":T(bool,[],[],0,2,0),\"empty_f32\":T(float32,[0],[1],0,3,0),\"empty_2d_"
     "i32\":T(int32,[3,0],[1,1],0,4,0)}",
     f10_tensors, 5, f10_storages, 5, NULL, 0},
};

/* ---- helpers -------------------------------------------------------------- */

static char data_dir[1024];

static void init_data_dir(void)
{
	const char *src = getenv("ETC_SRC");
	if (src && *src) {
		snprintf(data_dir, sizeof data_dir, "%s/tests/data/torchsave", src);
		return;
	}
	const char *f = __FILE__, *cut = strstr(f, "tests/unit/");
	snprintf(data_dir, sizeof data_dir, "%.*stests/data/torchsave", cut ? (int)(cut - f) : 0,
	         f);
}

static void data_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", data_dir, name);
}

static uint8_t *read_file(const char *name, size_t *len)
{
	char path[1400];
	data_path(path, sizeof path, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* A growable byte buffer for strings, pickles and zips. */
typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void b_put(buf *b, const void *p, size_t n)
{
	if (n > SIZE_MAX / 4 || b->n > SIZE_MAX / 4)
		exit(2); /* also tells gcc -O3 that b->n + n + 1 cannot wrap */
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			exit(2);
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void b_u8(buf *b, unsigned v)
{
	uint8_t c = (uint8_t)v;
	b_put(b, &c, 1);
}

static void b_le(buf *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b_u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}

static void b_str(buf *b, const char *s)
{
	b_put(b, s, strlen(s));
}

#define B_LIT(b, lit) b_put(b, lit, sizeof(lit) - 1)

static void b_free(buf *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

static const char *b_cstr(buf *b)
{
	if (!b->p)
		b_put(b, "", 0);
	return (const char *)b->p;
}

/* ---- canonical form of an object tree (matches the generator) ------------ */

static void bigint_decimal(buf *s, const uint8_t *bytes, size_t n)
{
	uint8_t mag[300];
	char digits[800];
	size_t nd = 0;
	bool neg = n && (bytes[n - 1] & 0x80);
	memcpy(mag, bytes, n);
	if (neg) { /* two's complement negation */
		unsigned carry = 1;
		for (size_t i = 0; i < n; i++) {
			unsigned v = (uint8_t)~mag[i] + carry;
			mag[i] = (uint8_t)v;
			carry = v >> 8;
		}
	}
	for (;;) {
		bool zero = true;
		unsigned rem = 0;
		for (size_t i = n; i-- > 0;) {
			unsigned cur = rem * 256 + mag[i];
			mag[i] = (uint8_t)(cur / 10);
			rem = cur % 10;
			if (mag[i])
				zero = false;
		}
		digits[nd++] = (char)('0' + rem);
		if (zero)
			break;
	}
	if (neg)
		b_u8(s, '-');
	while (nd)
		b_u8(s, (unsigned)digits[--nd]);
}

static void canon(buf *s, const etc_pyobj *o)
{
	char tmp[64];
	size_t n;
	switch (etc_pyobj_kind(o)) {
	case ETC_PY_NONE:
		b_str(s, "None");
		return;
	case ETC_PY_BOOL:
		b_str(s, etc_pyobj_bool(o) ? "True" : "False");
		return;
	case ETC_PY_INT:
		snprintf(tmp, sizeof tmp, "%lld", (long long)etc_pyobj_int(o));
		b_str(s, tmp);
		return;
	case ETC_PY_BIGINT: {
		const uint8_t *b = etc_pyobj_bigint(o, &n);
		bigint_decimal(s, b, n);
		return;
	}
	case ETC_PY_FLOAT:
		if (isnan(etc_pyobj_float(o)))
			snprintf(tmp, sizeof tmp, "fnan");
		else
			snprintf(tmp, sizeof tmp, "f%.17g", etc_pyobj_float(o));
		b_str(s, tmp);
		return;
	case ETC_PY_STR: {
		etc_str v = etc_pyobj_str(o);
		b_u8(s, '"');
		b_put(s, v.ptr, v.len);
		b_u8(s, '"');
		return;
	}
	case ETC_PY_TUPLE:
	case ETC_PY_LIST: {
		bool tuple = etc_pyobj_kind(o) == ETC_PY_TUPLE;
		b_u8(s, tuple ? '(' : '[');
		for (size_t i = 0; i < etc_pyobj_len(o); i++) {
			if (i)
				b_u8(s, ',');
			canon(s, etc_pyobj_item(o, i));
		}
		b_u8(s, tuple ? ')' : ']');
		return;
	}
	case ETC_PY_DICT:
		b_str(s, etc_pyobj_is_ordered_dict(o) ? "OD{" : "{");
		for (size_t i = 0; i < etc_pyobj_len(o); i++) {
			if (i)
				b_u8(s, ',');
			canon(s, etc_pyobj_dict_key(o, i));
			b_u8(s, ':');
			canon(s, etc_pyobj_dict_value(o, i));
		}
		b_u8(s, '}');
		if (etc_pyobj_attrs(o)) {
			b_u8(s, '@');
			canon(s, etc_pyobj_attrs(o));
		}
		return;
	case ETC_PY_TENSOR: {
		const etc_pytensor *t = etc_pyobj_tensor(o);
		b_str(s, t->is_parameter ? "P(" : "T(");
		b_str(s, etc_scalar_type_name(t->tensor.scalar_type));
		for (int part = 0; part < 2; part++) {
			b_str(s, ",[");
			for (uint32_t d = 0; d < t->tensor.ndim; d++) {
				int64_t v = part ? etc_tensor_stride(&t->tensor, d)
				                 : etc_tensor_size(&t->tensor, d);
				snprintf(tmp, sizeof tmp, "%s%lld", d ? "," : "", (long long)v);
				b_str(s, tmp);
			}
			b_u8(s, ']');
		}
		snprintf(tmp, sizeof tmp, ",%lld,", (long long)t->storage_offset);
		b_str(s, tmp);
		b_str(s, t->storage_key);
		b_str(s, t->requires_grad ? ",1)" : ",0)");
		return;
	}
	case ETC_PY_GLOBAL:
		b_str(s, "G(");
		b_str(s, etc_pyobj_str(o).ptr);
		b_u8(s, ')');
		return;
	case ETC_PY_STORAGE:
		b_str(s, "S");
		return;
	case ETC_PY_BYTES:
		b_str(s, "B");
		return;
	}
	b_str(s, "?");
}

static const etc_pyobj *follow(const etc_pyobj *o, const char *const *path)
{
	for (; o && *path; path++) {
		if ((*path)[0] == '#')
			o = etc_pyobj_item(o, strtoul(*path + 1, NULL, 10));
		else if (strcmp(*path, "@attrs") == 0)
			o = etc_pyobj_attrs(o);
		else
			o = etc_pyobj_dict_get(o, *path);
	}
	return o;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static bool hex_equal(const uint8_t *p, size_t n, const char *hex)
{
	if (strlen(hex) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] != (hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1])))
			return false;
	return true;
}

/* ---- the real archives ---------------------------------------------------- */

static void check_tensor(const exp_file *f, const exp_tensor *x, const etc_pyobj *o,
                         const uint8_t *base)
{
	const etc_pytensor *t = o ? etc_pyobj_tensor(o) : NULL;
	CHECK(t != NULL);
	if (!t) {
		fprintf(stderr, "  (%s: tensor %s...)\n", f->file, x->path[0] ? x->path[0] : "");
		return;
	}
	CHECK_STR(etc_scalar_type_name(t->tensor.scalar_type), x->dtype);
	CHECK(t->tensor.ndim == x->ndim);
	CHECK(t->tensor.nstrides == x->ndim);
	for (uint32_t d = 0; d < x->ndim && d < t->tensor.ndim; d++) {
		CHECK(etc_tensor_size(&t->tensor, d) == x->shape[d]);
		CHECK(etc_tensor_stride(&t->tensor, d) == x->strides[d]);
	}
	CHECK(t->storage_offset == x->storage_offset);
	CHECK_STR(t->storage_key, x->key);
	CHECK_STR(t->location, "cpu");
	CHECK(t->storage_nbytes == x->storage_nbytes);
	CHECK(t->is_parameter == x->parameter);
	CHECK(t->requires_grad == x->requires_grad);
	CHECK(t->contiguous == x->contiguous);
	CHECK(t->tensor.numel == x->numel);
	size_t esz = etc_scalar_type_size(t->tensor.scalar_type);
	CHECK(t->tensor.nbytes == x->numel * esz);
	uint64_t first = x->numel ? (uint64_t)x->storage_offset * esz : 0;
	/* zero-copy: the storage is the member's bytes inside the archive */
	CHECK(t->tensor.offset == x->member_data_offset + (int64_t)first);
	if (base)
		CHECK(t->storage == base + x->member_data_offset);
	if (x->contiguous)
		CHECK(t->tensor.data == t->storage + first);
	else
		CHECK(t->tensor.data == NULL);
	for (size_t s = 0; s < f->nstorages; s++)
		if (strcmp(f->storages[s].key, x->key) == 0)
			CHECK(hex_equal(t->storage, (size_t)t->storage_nbytes, f->storages[s].hex));
	if (t->tensor.numel != x->numel)
		return;

	size_t n = (size_t)x->numel;
	double *vals = malloc((n + 1) * sizeof *vals);
	uint8_t *dense = malloc((size_t)t->tensor.nbytes + 1);
	etc_pytensor_to_double(t, 0, n, vals);
	CHECK(etc_pytensor_copy(t, dense, (size_t)t->tensor.nbytes) == 0);
	if (t->tensor.nbytes)
		CHECK(etc_pytensor_copy(t, dense, (size_t)t->tensor.nbytes - 1) == ETC_ERR_USAGE);
	etc_tensor d = t->tensor;
	d.data = dense;
	for (size_t i = 0; i < n; i++) {
		CHECK_DOUBLE_EXACT(etc_pytensor_get(t, i), x->values[i]);
		CHECK_DOUBLE_EXACT(vals[i], x->values[i]);
		CHECK_DOUBLE_EXACT(etc_tensor_get(&d, i), x->values[i]);
		if (t->tensor.data)
			CHECK_DOUBLE_EXACT(etc_tensor_get(&t->tensor, i), x->values[i]);
	}
	if (n > 2) { /* a window in the middle */
		etc_pytensor_to_double(t, 1, n - 2, vals);
		for (size_t i = 0; i + 2 < n; i++)
			CHECK_DOUBLE_EXACT(vals[i], x->values[i + 1]);
	}
	free(vals);
	free(dense);
}

static void check_file(const exp_file *f)
{
	size_t len;
	uint8_t *data = read_file(f->file, &len);
	CHECK(len == f->size);
	etc_error err;
	etc_error_clear(&err);
	etc_torchsave *ts = NULL;
	int rc = etc_torchsave_wrap(&ts, data, len, f->file, &err);
	CHECK(rc == 0);
	if (rc < 0) {
		fprintf(stderr, "  %s: %s\n", f->file, err.message);
		free(data);
		return;
	}
	CHECK_STR(etc_torchsave_prefix(ts), f->prefix);
	CHECK_STR(etc_torchsave_name(ts), f->file);
	const etc_pyobj *root = etc_torchsave_root(ts);
	buf s = {0};
	canon(&s, root);
	CHECK_STR(b_cstr(&s), f->structure);

	for (size_t i = 0; i < f->ntensors; i++)
		check_tensor(f, &f->tensors[i], follow(root, f->tensors[i].path), data);
	/* tensors share bytes exactly when they name the same storage */
	for (size_t i = 0; i < f->ntensors; i++)
		for (size_t j = i + 1; j < f->ntensors; j++) {
			const etc_pyobj *a = follow(root, f->tensors[i].path);
			const etc_pyobj *b = follow(root, f->tensors[j].path);
			if (!a || !b || !etc_pyobj_tensor(a) || !etc_pyobj_tensor(b))
				continue;
			bool same_key = strcmp(f->tensors[i].key, f->tensors[j].key) == 0;
			bool same_ptr =
			    etc_pyobj_tensor(a)->storage == etc_pyobj_tensor(b)->storage;
			CHECK(same_key == same_ptr);
		}
	/* an object pickled twice (memo) is one object */
	for (size_t i = 0; i < f->nsame; i++) {
		const etc_pyobj *a = follow(root, f->same[i].a), *b = follow(root, f->same[i].b);
		CHECK(a != NULL && a == b);
	}
	etc_torchsave_free(ts);

	/* the same through the file mapping */
	char path[1400];
	data_path(path, sizeof path, f->file);
	rc = etc_torchsave_open(&ts, path, &err);
	CHECK(rc == 0);
	if (rc == 0) {
		buf s2 = {0};
		canon(&s2, etc_torchsave_root(ts));
		CHECK_STR(b_cstr(&s2), f->structure);
		for (size_t i = 0; i < f->ntensors; i++)
			check_tensor(f, &f->tensors[i],
			             follow(etc_torchsave_root(ts), f->tensors[i].path), NULL);
		b_free(&s2);
		etc_torchsave_free(ts);
	}
	b_free(&s);
	free(data);
}

static const exp_file *expected(const char *file)
{
	for (size_t i = 0; i < sizeof expected_files / sizeof expected_files[0]; i++)
		if (strcmp(expected_files[i].file, file) == 0)
			return &expected_files[i];
	return NULL;
}

static etc_torchsave *open_fixture(const char *name)
{
	char path[1400];
	etc_error err;
	etc_torchsave *ts = NULL;
	data_path(path, sizeof path, name);
	if (etc_torchsave_open(&ts, path, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return NULL;
	}
	return ts;
}

static void test_python_values(void)
{
	etc_torchsave *ts = open_fixture("python_scalars.pt");
	CHECK(ts != NULL);
	if (!ts)
		return;
	const etc_pyobj *root = etc_torchsave_root(ts);
	CHECK(etc_pyobj_kind(root) == ETC_PY_DICT);
	CHECK(!etc_pyobj_is_ordered_dict(root));
	CHECK(etc_pyobj_len(root) == 11);
	CHECK(etc_pyobj_attrs(root) == NULL);
	CHECK(etc_pyobj_dict_get(root, "missing") == NULL);
	CHECK(etc_pyobj_kind(etc_pyobj_dict_get(root, "none")) == ETC_PY_NONE);
	CHECK(etc_pyobj_bool(etc_pyobj_dict_get(root, "true")));
	CHECK(!etc_pyobj_bool(etc_pyobj_dict_get(root, "false")));
	CHECK(etc_pyobj_int(etc_pyobj_dict_get(root, "true")) == 1);

	const etc_pyobj *ints = etc_pyobj_dict_get(root, "ints");
	CHECK(etc_pyobj_kind(ints) == ETC_PY_LIST && etc_pyobj_len(ints) == 11);
	CHECK(etc_pyobj_int(etc_pyobj_item(ints, 4)) == 65536);
	CHECK(etc_pyobj_int(etc_pyobj_item(ints, 6)) == INT32_MIN);
	CHECK(etc_pyobj_int(etc_pyobj_item(ints, 7)) == 2147483648LL);
	CHECK(etc_pyobj_int(etc_pyobj_item(ints, 8)) == INT64_MAX);
	CHECK(etc_pyobj_int(etc_pyobj_item(ints, 9)) == INT64_MIN);
	const etc_pyobj *big = etc_pyobj_item(ints, 10);
	CHECK(etc_pyobj_kind(big) == ETC_PY_BIGINT);
	size_t n;
	const uint8_t *bb = etc_pyobj_bigint(big, &n);
	CHECK(n == 9 && bb && bb[8] == 1 && bb[0] == 0);
	CHECK_DOUBLE_EXACT(etc_pyobj_float(big), 18446744073709551616.0);
	CHECK(etc_pyobj_int(big) == 0);
	CHECK(etc_pyobj_bigint(ints, &n) == NULL && n == 0);
	CHECK(etc_pyobj_item(ints, 11) == NULL);
	CHECK(etc_pyobj_dict_get(ints, "x") == NULL);

	const etc_pyobj *floats = etc_pyobj_dict_get(root, "floats");
	CHECK_DOUBLE_EXACT(etc_pyobj_float(etc_pyobj_item(floats, 0)), 0.5);
	CHECK(signbit(etc_pyobj_float(etc_pyobj_item(floats, 1))));
	CHECK(isinf(etc_pyobj_float(etc_pyobj_item(floats, 2))));
	CHECK(isnan(etc_pyobj_float(etc_pyobj_item(floats, 3))));
	CHECK(isnan(etc_pyobj_float(root)));

	etc_str str = etc_pyobj_str(etc_pyobj_dict_get(root, "str"));
	CHECK(str.len == 11 && memcmp(str.ptr, "\xcf\x83-gate \"q\"", 11) == 0 && !str.ptr[11]);
	CHECK(etc_pyobj_str(ints).len == 0);
	CHECK(etc_pyobj_kind(etc_pyobj_dict_get(root, "t1")) == ETC_PY_TUPLE);
	CHECK(etc_pyobj_len(etc_pyobj_dict_get(root, "t1")) == 1);

	const etc_pyobj *ik = etc_pyobj_dict_get(root, "int_keys");
	CHECK(etc_pyobj_len(ik) == 2);
	CHECK(etc_pyobj_kind(etc_pyobj_dict_key(ik, 1)) == ETC_PY_INT);
	CHECK(etc_pyobj_int(etc_pyobj_dict_key(ik, 1)) == 7);
	CHECK_STR(etc_pyobj_str(etc_pyobj_dict_value(ik, 1)).ptr, "seven");
	CHECK(etc_pyobj_dict_get(ik, "7") == NULL);
	CHECK(etc_pyobj_dict_key(ik, 2) == NULL);
	CHECK(etc_pyobj_tensor(ik) == NULL);
	CHECK_STR(etc_pykind_name(ETC_PY_TENSOR), "tensor");
	/* absent values chain safely */
	const etc_pyobj *absent = etc_pyobj_dict_get(root, "missing");
	CHECK(etc_pyobj_kind(absent) == ETC_PY_NONE && etc_pyobj_len(absent) == 0);
	CHECK(etc_pyobj_tensor(etc_pyobj_item(etc_pyobj_dict_get(absent, "x"), 0)) == NULL);
	CHECK(isnan(etc_pyobj_float(absent)) && etc_pyobj_str(absent).len == 0);
	CHECK(!etc_pyobj_is_ordered_dict(absent) && etc_pyobj_attrs(absent) == NULL);
	CHECK_STR(etc_pykind_name(99), "unknown");
	etc_torchsave_free(ts);

	ts = open_fixture("ordereddict_state_dict.pt");
	CHECK(ts != NULL);
	if (!ts)
		return;
	root = etc_torchsave_root(ts);
	CHECK(etc_pyobj_is_ordered_dict(root));
	const etc_pyobj *meta = etc_pyobj_dict_get(etc_pyobj_attrs(root), "_metadata");
	CHECK(meta && etc_pyobj_is_ordered_dict(meta));
	const etc_pyobj *version =
	    meta ? etc_pyobj_dict_get(etc_pyobj_dict_get(meta, ""), "version") : NULL;
	CHECK(version && etc_pyobj_int(version) == 1);
	etc_torchsave_free(ts);
}

/* ---- building archives ---------------------------------------------------- */

typedef struct zmember {
	const char *name;
	const void *data;
	size_t len;
	uint16_t method; /* 0 stored; 8: data is a deflate stream */
	uint64_t usize;  /* deflated members: the inflated size and CRC */
	uint32_t crc;
} zmember;

/* A minimal zip writer: local headers without data descriptors, no ZIP64. */
static uint8_t *zip_build(const zmember *m, size_t n, size_t *out_len)
{
	buf b = {0};
	uint32_t lho[64], crc[64];
	for (size_t i = 0; i < n; i++) {
		lho[i] = (uint32_t)b.n;
		crc[i] = m[i].method ? m[i].crc : etc_crc32(0, m[i].data, m[i].len);
		uint64_t usize = m[i].method ? m[i].usize : m[i].len;
		b_le(&b, 0x04034b50, 4);
		b_le(&b, 20, 2);
		b_le(&b, 0, 2);
		b_le(&b, m[i].method, 2);
		b_le(&b, 0, 4);
		b_le(&b, crc[i], 4);
		b_le(&b, m[i].len, 4);
		b_le(&b, usize, 4);
		b_le(&b, strlen(m[i].name), 2);
		b_le(&b, 0, 2);
		b_str(&b, m[i].name);
		b_put(&b, m[i].data, m[i].len);
	}
	size_t cd = b.n;
	for (size_t i = 0; i < n; i++) {
		b_le(&b, 0x02014b50, 4);
		b_le(&b, 20, 2);
		b_le(&b, 20, 2);
		b_le(&b, 0, 2);
		b_le(&b, m[i].method, 2);
		b_le(&b, 0, 4);
		b_le(&b, crc[i], 4);
		b_le(&b, m[i].len, 4);
		b_le(&b, m[i].method ? m[i].usize : m[i].len, 4);
		b_le(&b, strlen(m[i].name), 2);
		b_le(&b, 0, 6);
		b_le(&b, 0, 6);
		b_le(&b, lho[i], 4);
		b_str(&b, m[i].name);
	}
	size_t cd_size = b.n - cd;
	b_le(&b, 0x06054b50, 4);
	b_le(&b, 0, 4);
	b_le(&b, n, 2);
	b_le(&b, n, 2);
	b_le(&b, cd_size, 4);
	b_le(&b, cd, 4);
	b_le(&b, 0, 2);
	*out_len = b.n;
	return b.p;
}

/* A fixture's members, read with the library's own zip reader. */
typedef struct fixture {
	uint8_t *file;
	size_t len;
	etc_arena arena;
	zmember m[64];
	size_t n;
} fixture;

static bool fixture_load(fixture *f, const char *name)
{
	etc_error err;
	etc_zip *z;
	memset(f, 0, sizeof *f);
	f->file = read_file(name, &f->len);
	etc_arena_init(&f->arena);
	if (etc_zip_open(&z, &f->arena, f->file, f->len, name, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return false;
	}
	for (size_t i = 0; i < etc_zip_count(z) && i < 64; i++) {
		const etc_zip_entry *e = etc_zip_entry_at(z, i);
		const uint8_t *p;
		size_t len;
		if (etc_zip_read(z, e, &p, &len, NULL, &err) < 0)
			return false;
		f->m[f->n++] = (zmember){e->name, p, len, 0, 0, 0};
	}
	etc_zip_close(z);
	return true;
}

static void fixture_free(fixture *f)
{
	etc_arena_release(&f->arena);
	free(f->file);
}

static zmember *fixture_member(fixture *f, const char *suffix)
{
	size_t sl = strlen(suffix);
	for (size_t i = 0; i < f->n; i++) {
		size_t nl = strlen(f->m[i].name);
		if (nl >= sl && strcmp(f->m[i].name + nl - sl, suffix) == 0)
			return &f->m[i];
	}
	return NULL;
}

/* Replaces the first `from` in `b` by `to`. */
static bool patch(buf *b, const char *from, size_t fl, const char *to, size_t tl)
{
	for (size_t i = 0; i + fl <= b->n; i++) {
		if (memcmp(b->p + i, from, fl) == 0) {
			buf out = {0};
			b_put(&out, b->p, i);
			b_put(&out, to, tl);
			b_put(&out, b->p + i + fl, b->n - i - fl);
			b_free(b);
			*b = out;
			return true;
		}
	}
	return false;
}

/* Opens `zip` as a torch.save archive; returns the status, err filled. */
static int try_wrap(const uint8_t *zip, size_t len, etc_error *err, etc_torchsave **keep)
{
	etc_torchsave *ts = NULL;
	etc_error_clear(err);
	int rc = etc_torchsave_wrap(&ts, zip, len, "test.pt", err);
	if (keep)
		*keep = ts;
	else
		etc_torchsave_free(ts);
	return rc;
}

/* ---- a pickle writer -------------------------------------------------------- */

static void pk_unicode(buf *b, const char *s)
{
	b_u8(b, 'X');
	b_le(b, strlen(s), 4);
	b_str(b, s);
}

static void pk_int(buf *b, int64_t v)
{
	if (v >= 0 && v < 256) {
		b_u8(b, 'K');
		b_u8(b, (unsigned)v);
	} else if (v >= 0 && v < 65536) {
		b_u8(b, 'M');
		b_le(b, (uint64_t)v, 2);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		b_u8(b, 'J');
		b_le(b, (uint64_t)v, 4);
	} else {
		b_u8(b, 0x8a);
		b_u8(b, 8);
		b_le(b, (uint64_t)v, 8);
	}
}

static void pk_global(buf *b, const char *mod, const char *name)
{
	b_u8(b, 'c');
	b_str(b, mod);
	b_u8(b, '\n');
	b_str(b, name);
	b_u8(b, '\n');
}

static void pk_ints(buf *b, const int64_t *v, int n)
{
	b_u8(b, '(');
	for (int i = 0; i < n; i++)
		pk_int(b, v[i]);
	b_u8(b, 't');
}

/* A tensor as torch writes it; dtype non-NULL selects _rebuild_tensor_v3. */
static void pk_tensor(buf *b, const char *stype, const char *key, int64_t numel, int64_t off,
                      int nd, const int64_t *size, const int64_t *stride, const char *dtype)
{
	pk_global(b, "torch._utils", dtype ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2");
	b_u8(b, '(');
	b_u8(b, '(');
	pk_unicode(b, "storage");
	pk_global(b, "torch", stype);
	pk_unicode(b, key);
	pk_unicode(b, "cpu");
	pk_int(b, numel);
	b_u8(b, 't');
	b_u8(b, 'Q');
	pk_int(b, off);
	pk_ints(b, size, nd);
	pk_ints(b, stride, nd);
	b_u8(b, 0x89);
	pk_global(b, "collections", "OrderedDict");
	b_u8(b, ')');
	b_u8(b, 'R');
	if (dtype)
		pk_global(b, "torch", dtype);
	b_u8(b, 't');
	b_u8(b, 'R');
}

static void pk_start(buf *b)
{
	b_u8(b, 0x80);
	b_u8(b, 2);
}

/*
 * Wraps `pkl` as t/data.pkl plus the given storages (t/data/<key>) in a zip
 * and opens it. Returns the status; *zip_out keeps the bytes when non-NULL.
 */
static int open_pickle(const buf *pkl, const zmember *extra, size_t nextra, etc_error *err,
                       etc_torchsave **keep, uint8_t **zip_out)
{
	zmember m[16];
	size_t n = 0;
	m[n++] = (zmember){"t/data.pkl", pkl->p, pkl->n, 0, 0, 0};
	for (size_t i = 0; i < nextra && n < 15; i++)
		m[n++] = extra[i];
	m[n++] = (zmember){"t/version", "3\n", 2, 0, 0, 0};
	size_t len;
	uint8_t *zip = zip_build(m, n, &len);
	int rc = try_wrap(zip, len, err, keep);
	if (zip_out)
		*zip_out = zip;
	else if (!keep || !*keep)
		free(zip);
	else
		*zip_out = zip; /* unreachable: callers keeping ts pass zip_out */
	return rc;
}

/* Expects `rc` to be `status` with `needle` in the message. */
static void expect_fail(int rc, const etc_error *err, int status, const char *needle,
                        const char *what)
{
	CHECK(rc == status);
	if (rc != status)
		fprintf(stderr, "  %s: rc %d, expected %d (%s)\n", what, rc, status, err->message);
	if (needle && !strstr(err->message, needle)) {
		check_failures++;
		fprintf(stderr, "  %s: message \"%s\" lacks \"%s\"\n", what, err->message, needle);
	}
	check_count++;
}

static int pickle_only(const char *bytes, size_t n, etc_error *err)
{
	buf b = {0};
	b_put(&b, bytes, n);
	int rc = open_pickle(&b, NULL, 0, err, NULL, NULL);
	b_free(&b);
	return rc;
}

#define PICKLE(lit, err) pickle_only(lit, sizeof(lit) - 1, err)

/* ---- hostile and malformed input -------------------------------------------- */

static void test_forbidden_globals(void)
{
	etc_error err;
	fixture f;
	CHECK(fixture_load(&f, "plain_tensor.pt"));
	zmember *pkl = fixture_member(&f, "/data.pkl");
	buf b = {0};
	b_put(&b, pkl->data, pkl->len);
	static const char from[] = "torch._utils\n_rebuild_tensor_v2\n";
	CHECK(patch(&b, from, sizeof from - 1, "os\nsystem\n", 10));
	pkl->data = b.p;
	pkl->len = b.n;
	size_t len;
	uint8_t *zip = zip_build(f.m, f.n, &len);
	expect_fail(try_wrap(zip, len, &err, NULL), &err, ETC_ERR_FORMAT,
	            "forbidden GLOBAL os.system", "os.system");
	CHECK(err.offset > 0);
	free(zip);
	b_free(&b);
	fixture_free(&f);

	expect_fail(PICKLE("\x80\x02"
	                   "cbuiltins\neval\nX\x01\x00\x00\x00xR.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "forbidden GLOBAL builtins.eval", "eval");
	expect_fail(PICKLE("\x80\x02"
	                   "ctorch._utils\n_rebuild_tensor\n.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "forbidden GLOBAL torch._utils._rebuild_tensor", "v1");
	expect_fail(PICKLE("\x80\x02"
	                   "ctorch\ncomplex64\n.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "forbidden GLOBAL torch.complex64", "complex64");
	expect_fail(PICKLE("\x80\x02"
	                   "cos\x01\nsystem\n.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "forbidden GLOBAL os?.system", "control char");
	expect_fail(PICKLE("\x80\x02"
	                   "ctorch\nFloatStorage",
	                   &err),
	            &err, ETC_ERR_FORMAT, "ends inside the name", "truncated GLOBAL");
	/* a whitelisted non-function is still not callable */
	expect_fail(PICKLE("\x80\x02"
	                   "ctorch\nFloatStorage\n)R.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "not callable", "storage type called");
	expect_fail(PICKLE("\x80\x02"
	                   "K\x01)R.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "not callable", "int called");
	expect_fail(PICKLE("\x80\x02"
	                   "ccollections\nOrderedDict\n(K\x01tR.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "OrderedDict called with 1", "OrderedDict args");

	/* a dtype as a plain value */
	etc_torchsave *ts = NULL;
	uint8_t *z = NULL;
	buf p = {0};
	static const char dt[] = "\x80\x02}X\x05\x00\x00\x00"
	                         "dtypectorch\nfloat8_e4m3fn\ns.";
	b_put(&p, dt, sizeof dt - 1);
	CHECK(open_pickle(&p, NULL, 0, &err, &ts, &z) == 0);
	if (ts) {
		const etc_pyobj *g = etc_pyobj_dict_get(etc_torchsave_root(ts), "dtype");
		CHECK(g && etc_pyobj_kind(g) == ETC_PY_GLOBAL);
		CHECK(g && strcmp(etc_pyobj_str(g).ptr, "torch.float8_e4m3fn") == 0);
	}
	etc_torchsave_free(ts);
	free(z);
	b_free(&p);
}

static void test_opcodes(void)
{
	etc_error err;
	/* t/data.pkl data starts at 30 + 10 = 40 in the built zip */
	expect_fail(PICKLE("\x80\x02N0.", &err), &err, ETC_ERR_FORMAT,
	            "pickle opcode POP (0x30) is not supported", "POP");
	CHECK(err.offset == 40 + 3);
	CHECK(strstr(err.message, "t/data.pkl byte 3") != NULL);
	expect_fail(PICKLE("\x80\x02\xff.", &err), &err, ETC_ERR_FORMAT,
	            "unknown pickle opcode 0xff", "0xff");
	expect_fail(PICKLE("\x80\x04\x95\x64\x00\x00\x00\x00\x00\x00\x00N.", &err), &err,
	            ETC_ERR_FORMAT, "FRAME needs 100 more bytes", "FRAME");
	expect_fail(PICKLE("\x80\x02\x8c\x05x.", &err), &err, ETC_ERR_FORMAT,
	            "SHORT_BINUNICODE needs 5", "short unicode");
	expect_fail(PICKLE("\x80\x06N.", &err), &err, ETC_ERR_UNSUPPORTED, "protocol 6", "proto");
	expect_fail(PICKLE("\x80\x02N", &err), &err, ETC_ERR_FORMAT, "without STOP", "no STOP");
	expect_fail(PICKLE("", &err), &err, ETC_ERR_FORMAT, "without STOP", "empty pickle");
	expect_fail(PICKLE("\x80\x02X\x09\x00\x00\x00"
	                   "abc.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "BINUNICODE needs 9", "short string");
	expect_fail(PICKLE("\x80\x02X\x02\x00\x00\x00\xc3\x28.", &err), &err, ETC_ERR_FORMAT,
	            "UTF-8", "bad utf-8");
	expect_fail(PICKLE("\x80\x02X\x02\x00\x00\x00\xc0\x80.", &err), &err, ETC_ERR_FORMAT,
	            "UTF-8", "overlong utf-8");
	expect_fail(PICKLE("\x80\x02J\x01\x00.", &err), &err, ETC_ERR_FORMAT, "BININT needs",
	            "short BININT");
	expect_fail(PICKLE("\x80\x02\x8a\x05\x01.", &err), &err, ETC_ERR_FORMAT, "LONG1 needs",
	            "short LONG1");
	expect_fail(PICKLE("\x80\x02G\x00\x00.", &err), &err, ETC_ERR_FORMAT, "BINFLOAT needs",
	            "short BINFLOAT");
	expect_fail(PICKLE("\x80\x02.", &err), &err, ETC_ERR_FORMAT, "underflow", "empty STOP");
	expect_fail(PICKLE("\x80\x02Na.", &err), &err, ETC_ERR_FORMAT, "underflow", "APPEND");
	expect_fail(PICKLE("\x80\x02}Na.", &err), &err, ETC_ERR_FORMAT, "APPEND to a dict",
	            "APPEND dict");
	expect_fail(PICKLE("\x80\x02](K\x01u.", &err), &err, ETC_ERR_FORMAT, "SETITEMS on a list",
	            "SETITEMS list");
	expect_fail(PICKLE("\x80\x02}(K\x01u.", &err), &err, ETC_ERR_FORMAT, "odd number",
	            "SETITEMS odd");
	expect_fail(PICKLE("\x80\x02(e.", &err), &err, ETC_ERR_FORMAT, "nothing below the MARK",
	            "APPENDS empty");
	expect_fail(PICKLE("\x80\x02Nt.", &err), &err, ETC_ERR_FORMAT, "without a MARK",
	            "TUPLE no mark");
	expect_fail(PICKLE("\x80\x02(N\x86.", &err), &err, ETC_ERR_FORMAT, "TUPLE2", "TUPLE2");
	expect_fail(PICKLE("\x80\x02}]N}s.", &err), &err, ETC_ERR_FORMAT, "SETITEM on a list",
	            "SETITEM list");
	expect_fail(PICKLE("\x80\x02}]Ns.", &err), &err, ETC_ERR_FORMAT, "unhashable", "list key");
	expect_fail(PICKLE("\x80\x02]}b.", &err), &err, ETC_ERR_FORMAT, "BUILD on a list",
	            "BUILD list");
	expect_fail(PICKLE("\x80\x02}K\x01"
	                   "b.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "state is a int", "BUILD int");
	expect_fail(PICKLE("\x80\x02h\x00.", &err), &err, ETC_ERR_FORMAT, "never stored",
	            "BINGET unset");
	expect_fail(PICKLE("\x80\x02q\x00.", &err), &err, ETC_ERR_FORMAT, "underflow",
	            "BINPUT empty");
	expect_fail(PICKLE("\x80\x02Nr\xf0\xff\xff\xff.", &err), &err, ETC_ERR_LIMIT, "memo index",
	            "LONG_BINPUT huge");
	expect_fail(PICKLE("\x80\x02NQ.", &err), &err, ETC_ERR_FORMAT, "persistent id",
	            "BINPERSID none");
	expect_fail(PICKLE("\x80\x02(X\x07\x00\x00\x00storageK\x01X\x01\x00\x00\x00"
	                   "0X\x03\x00\x00\x00"
	                   "cpuK\x01tQ.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "storage type", "BINPERSID type");
	/* reference cycles: l = [l]; d = {'a': d}; OrderedDict whose attrs hold it */
	expect_fail(PICKLE("\x80\x02]q\x00h\x00"
	                   "a.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "reference cycle", "list cycle");
	expect_fail(PICKLE("\x80\x02}q\x00X\x01\x00\x00\x00"
	                   "ah\x00s.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "reference cycle", "dict cycle");
	expect_fail(PICKLE("\x80\x02"
	                   "ccollections\nOrderedDict\n)Rq\x00}X\x01\x00\x00\x00"
	                   "ah\x00sb.",
	                   &err),
	            &err, ETC_ERR_FORMAT, "reference cycle", "attrs cycle");

	/* values: LONG1 forms, duplicate and numerically equal keys */
	etc_torchsave *ts = NULL;
	uint8_t *z = NULL;
	buf p = {0};
	static const char vals[] = "\x80\x02(\x8a\x00\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff"
	                           "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00\x8a\x02\xff\x7f"
	                           "}(X\x01\x00\x00\x00"
	                           "aK\x01X\x01\x00\x00\x00"
	                           "bK\x02X\x01\x00\x00\x00"
	                           "aK\x03K\x01N\x88K\x04G\x3f\xf0\x00\x00\x00\x00\x00\x00K\x05u"
	                           "J\xff\xff\xff\xffM\xff\xfft.";
	b_put(&p, vals, sizeof vals - 1);
	CHECK(open_pickle(&p, NULL, 0, &err, &ts, &z) == 0);
	if (ts) {
		const etc_pyobj *t = etc_torchsave_root(ts);
		buf s = {0};
		canon(&s, t);
		CHECK_STR(b_cstr(&s),
		          "(0,-1,9223372036854775808,32767,{\"a\":3,\"b\":2,1:5},-1,65535)");
		const etc_pyobj *d = etc_pyobj_item(t, 4);
		CHECK(etc_pyobj_kind(etc_pyobj_dict_key(d, 2)) == ETC_PY_INT);
		CHECK(etc_pyobj_int(etc_pyobj_dict_get(d, "a")) == 3);
		size_t n;
		CHECK(etc_pyobj_bigint(etc_pyobj_item(t, 2), &n) && n == 9);
		CHECK_DOUBLE_EXACT(etc_pyobj_float(etc_pyobj_item(t, 2)), 9223372036854775808.0);
		b_free(&s);
	} else {
		fprintf(stderr, "  values: %s\n", err.message);
	}
	etc_torchsave_free(ts);
	free(z);
	b_free(&p);
}

static void test_limits(void)
{
	etc_error err;
	buf p = {0};
	/* 300 nested lists: [[[...]]] */
	pk_start(&p);
	for (int i = 0; i < 300; i++)
		b_u8(&p, ']');
	for (int i = 0; i < 299; i++)
		b_u8(&p, 'a');
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, NULL, 0, &err, NULL, NULL), &err, ETC_ERR_LIMIT,
	            "nested deeper than 200", "deep lists");
	b_free(&p);
	/* 150 is fine */
	pk_start(&p);
	for (int i = 0; i < 150; i++)
		b_u8(&p, ']');
	for (int i = 0; i < 149; i++)
		b_u8(&p, 'a');
	b_u8(&p, '.');
	CHECK(open_pickle(&p, NULL, 0, &err, NULL, NULL) == 0);
	b_free(&p);
	/* 300 nested 1-tuples through MARKs */
	pk_start(&p);
	for (int i = 0; i < 300; i++)
		b_u8(&p, '(');
	b_u8(&p, 'N');
	for (int i = 0; i < 300; i++)
		b_u8(&p, 't');
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, NULL, 0, &err, NULL, NULL), &err, ETC_ERR_LIMIT,
	            "nested deeper", "deep tuples");
	b_free(&p);
	/* deep through the memo with a constant stack: l_{i+1} = [l_i] */
	pk_start(&p);
	B_LIT(&p, "]q\x00");
	for (int i = 0; i < 250; i++)
		B_LIT(&p, "]h\x00"
		          "aq\x00");
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, NULL, 0, &err, NULL, NULL), &err, ETC_ERR_LIMIT,
	            "nested deeper", "deep via memo");
	b_free(&p);

	/* the machine's own bounds, tightened through the options */
	etc_arena arena;
	etc_arena_init(&arena);
	const etc_pyobj *root;
	etc_pickle_opts o = {.file = "x", .member = "data.pkl", .base_offset = -1, .max_stack = 8};
	static const char nines[] = "\x80\x02NNNNNNNNN.";
	CHECK(etc_unpickle(&arena, (const uint8_t *)nines, sizeof nines - 1, &o, &root, &err) ==
	      ETC_ERR_LIMIT);
	CHECK(strstr(err.message, "stack deeper than 8") != NULL);
	CHECK(err.offset == -1);
	o.max_stack = 0;
	o.max_objects = 4;
	CHECK(etc_unpickle(&arena, (const uint8_t *)nines, sizeof nines - 1, &o, &root, &err) ==
	      ETC_ERR_LIMIT);
	CHECK(strstr(err.message, "more than 4 objects") != NULL);
	o.max_objects = 0;
	o.max_memo = 3;
	static const char memo[] = "\x80\x02Nq\x03.";
	CHECK(etc_unpickle(&arena, (const uint8_t *)memo, sizeof memo - 1, &o, &root, &err) ==
	      ETC_ERR_LIMIT);
	o.max_memo = 0;
	o.max_depth = 2;
	static const char two[] = "\x80\x02]]a.";
	static const char three[] = "\x80\x02]]]aa.";
	CHECK(etc_unpickle(&arena, (const uint8_t *)two, sizeof two - 1, &o, &root, &err) == 0);
	CHECK(etc_unpickle(&arena, (const uint8_t *)three, sizeof three - 1, &o, &root, &err) ==
	      ETC_ERR_LIMIT);
	/* a DAG with much sharing is walked once per node, not once per path */
	o.max_depth = 0;
	p = (buf){0};
	pk_start(&p);
	B_LIT(&p, "Nq\x00");
	for (int i = 0; i < 60; i++)
		B_LIT(&p, "h\x00h\x00\x86q\x00");
	b_u8(&p, '.');
	CHECK(etc_unpickle(&arena, p.p, p.n, &o, &root, &err) == 0);
	b_free(&p);
	CHECK(etc_unpickle(&arena, NULL, 0, NULL, &root, &err) == ETC_ERR_USAGE);
	etc_arena_release(&arena);
}

static const uint8_t f32_0_5[24] = {0, 0, 0,    0,    0, 0, 0x80, 0x3f, 0, 0, 0,    0x40,
                                    0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40};

static void test_tensor_checks(void)
{
	etc_error err;
	buf p = {0};
	zmember st = {"t/data/0", f32_0_5, 24, 0, 0, 0};
	etc_torchsave *ts = NULL;
	uint8_t *z = NULL;

	/* expanded view (stride 0) and a column of a 2x3 matrix: fine */
	pk_start(&p);
	b_u8(&p, '(');
	pk_tensor(&p, "FloatStorage", "0", 6, 0, 2, (int64_t[]){3, 2}, (int64_t[]){0, 1}, NULL);
	pk_tensor(&p, "FloatStorage", "0", 6, 1, 1, (int64_t[]){2}, (int64_t[]){3}, NULL);
	b_str(&p, "t.");
	CHECK(open_pickle(&p, &st, 1, &err, &ts, &z) == 0);
	if (ts) {
		const etc_pytensor *a = etc_pyobj_tensor(etc_pyobj_item(etc_torchsave_root(ts), 0));
		const etc_pytensor *b = etc_pyobj_tensor(etc_pyobj_item(etc_torchsave_root(ts), 1));
		CHECK(a && b && a->storage == b->storage && !a->contiguous && !b->contiguous);
		if (a && b) {
			CHECK_DOUBLE_EXACT(etc_pytensor_get(a, 4), 0.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(a, 5), 1.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(b, 0), 1.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(b, 1), 4.0);
		}
	} else {
		fprintf(stderr, "  views: %s\n", err.message);
	}
	etc_torchsave_free(ts);
	free(z);
	b_free(&p);

	struct bad {
		int64_t off;
		int nd;
		int64_t size[2], stride[2];
		int status;
		const char *needle;
	} bad[] = {
	    {0, 2, {2, 4}, {4, 1}, ETC_ERR_FORMAT, "only 6 float32 elements"},
	    {5, 1, {2}, {1}, ETC_ERR_FORMAT, "reaches element 6 of storage '0'"},
	    {0, 2, {2, 3}, {3, -1}, ETC_ERR_FORMAT, "negative stride -1"},
	    {0, 1, {-2}, {1}, ETC_ERR_FORMAT, "negative size"},
	    {-1, 1, {2}, {1}, ETC_ERR_FORMAT, "negative storage offset"},
	    {0, 2, {1LL << 40, 1LL << 40}, {1, 1}, ETC_ERR_FORMAT, "overflow"},
	    {0, 1, {2}, {INT64_MAX}, ETC_ERR_FORMAT, "storage '0'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pk_start(&p);
		pk_tensor(&p, "FloatStorage", "0", 6, bad[i].off, bad[i].nd, bad[i].size,
		          bad[i].stride, NULL);
		b_u8(&p, '.');
		expect_fail(open_pickle(&p, &st, 1, &err, NULL, NULL), &err, bad[i].status,
		            bad[i].needle, "bad tensor");
		b_free(&p);
	}
	/* empty tensors may sit anywhere */
	pk_start(&p);
	pk_tensor(&p, "FloatStorage", "0", 6, 100, 2, (int64_t[]){0, 5}, (int64_t[]){5, 1}, NULL);
	b_u8(&p, '.');
	CHECK(open_pickle(&p, &st, 1, &err, NULL, NULL) == 0);
	b_free(&p);

	/* a bare storage */
	pk_start(&p);
	b_u8(&p, '(');
	pk_unicode(&p, "storage");
	pk_global(&p, "torch", "FloatStorage");
	pk_unicode(&p, "0");
	pk_unicode(&p, "cpu");
	pk_int(&p, 6);
	b_str(&p, "tQ.");
	CHECK(open_pickle(&p, &st, 1, &err, &ts, &z) == 0);
	if (ts) {
		size_t n = 0;
		const etc_pyobj *r = etc_torchsave_root(ts);
		CHECK(etc_pyobj_kind(r) == ETC_PY_STORAGE);
		CHECK(etc_pyobj_storage_bytes(r, &n) == z + 40 + 30 + 8 + p.n && n == 24);
		CHECK(etc_pyobj_storage_bytes(NULL, &n) == NULL && n == 0);
	}
	etc_torchsave_free(ts);
	ts = NULL;
	free(z);
	b_free(&p);

	/* storage members that do not match the persistent id */
	pk_start(&p);
	pk_tensor(&p, "FloatStorage", "0", 7, 0, 1, (int64_t[]){6}, (int64_t[]){1}, NULL);
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, &st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "should hold 7 float32 elements (28 bytes) but member t/data/0 has 24",
	            "storage size");
	expect_fail(open_pickle(&p, NULL, 0, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "no member t/data/0", "storage missing");
	b_free(&p);
	pk_start(&p);
	b_u8(&p, '(');
	pk_tensor(&p, "FloatStorage", "0", 6, 0, 1, (int64_t[]){6}, (int64_t[]){1}, NULL);
	pk_tensor(&p, "IntStorage", "0", 6, 0, 1, (int64_t[]){6}, (int64_t[]){1}, NULL);
	b_str(&p, "t.");
	expect_fail(open_pickle(&p, &st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "referenced as 6 float32 elements and as 6 int32", "storage retyped");
	b_free(&p);
	pk_start(&p);
	pk_tensor(&p, "UntypedStorage", "0", 24, 0, 1, (int64_t[]){6}, (int64_t[]){1}, NULL);
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, &st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT, "untyped",
	            "v2 untyped");
	b_free(&p);
}

static void test_v3_dtypes(void)
{
	etc_error err;
	etc_torchsave *ts = NULL;
	uint8_t *z = NULL;
	static const uint8_t u16[8] = {1, 0, 2, 0, 0xff, 0xff, 0, 0x80};
	static const uint8_t f8[3] = {0x38, 0x40, 0xb8};
	static const uint8_t u64[16] = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
	zmember st[3] = {{"t/data/0", u16, 8, 0, 0, 0},
	                 {"t/data/1", f8, 3, 0, 0, 0},
	                 {"t/data/2", u64, 16, 0, 0, 0}};
	buf p = {0};
	pk_start(&p);
	b_u8(&p, '(');
	pk_tensor(&p, "UntypedStorage", "0", 8, 0, 1, (int64_t[]){4}, (int64_t[]){1}, "uint16");
	pk_tensor(&p, "UntypedStorage", "1", 3, 1, 1, (int64_t[]){2}, (int64_t[]){1},
	          "float8_e4m3fn");
	pk_tensor(&p, "UntypedStorage", "2", 16, 0, 1, (int64_t[]){2}, (int64_t[]){1}, "uint64");
	pk_tensor(&p, "FloatStorage", "3", 0, 0, 1, (int64_t[]){0}, (int64_t[]){1}, "float32");
	b_str(&p, "t.");
	zmember all[4] = {st[0], st[1], st[2], {"t/data/3", "", 0, 0, 0, 0}};
	CHECK(open_pickle(&p, all, 4, &err, &ts, &z) == 0);
	if (ts) {
		const etc_pyobj *r = etc_torchsave_root(ts);
		const etc_pytensor *a = etc_pyobj_tensor(etc_pyobj_item(r, 0));
		const etc_pytensor *b = etc_pyobj_tensor(etc_pyobj_item(r, 1));
		const etc_pytensor *c = etc_pyobj_tensor(etc_pyobj_item(r, 2));
		const etc_pytensor *d = etc_pyobj_tensor(etc_pyobj_item(r, 3));
		CHECK(a && a->tensor.scalar_type == ETC_UINT16 && a->storage_nbytes == 8);
		CHECK(b && b->tensor.scalar_type == ETC_FLOAT8E4M3FN);
		CHECK(c && c->tensor.scalar_type == ETC_UINT64);
		CHECK(d && d->tensor.scalar_type == ETC_FLOAT && d->tensor.numel == 0);
		if (a && b && c) {
			CHECK_DOUBLE_EXACT(etc_pytensor_get(a, 0), 1.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(a, 2), 65535.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(a, 3), 32768.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(b, 0), 2.0);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(b, 1), -1.0);
			CHECK(b->tensor.data == b->storage + 1);
			CHECK_DOUBLE_EXACT(etc_pytensor_get(c, 1), 9223372036854775808.0);
		}
	} else {
		fprintf(stderr, "  v3: %s\n", err.message);
	}
	etc_torchsave_free(ts);
	free(z);
	b_free(&p);

	/* the dtype must agree with a typed storage; the 7th argument must be a dtype */
	pk_start(&p);
	pk_tensor(&p, "IntStorage", "0", 2, 0, 1, (int64_t[]){2}, (int64_t[]){1}, "float32");
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "dtype float32 but storage '0' holds int32", "v3 mismatch");
	b_free(&p);
	pk_start(&p);
	pk_tensor(&p, "UntypedStorage", "0", 8, 0, 1, (int64_t[]){4}, (int64_t[]){1},
	          "FloatStorage");
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "expected a torch dtype", "v3 not dtype");
	b_free(&p);
	/* an untyped storage too short for the dtype */
	pk_start(&p);
	pk_tensor(&p, "UntypedStorage", "0", 8, 0, 1, (int64_t[]){2}, (int64_t[]){1}, "float64");
	b_u8(&p, '.');
	expect_fail(open_pickle(&p, st, 1, &err, NULL, NULL), &err, ETC_ERR_FORMAT,
	            "only 1 float64 elements", "v3 short");
	b_free(&p);
}

static void test_truncated_and_corrupt(void)
{
	size_t len;
	uint8_t *data = read_file("plain_tensor.pt", &len);
	uint8_t *copy = malloc(len);
	etc_error err;
	const exp_file *x = expected("plain_tensor.pt");
	int64_t lo = x->storages[0].member_data_offset;
	int64_t hi = lo + (int64_t)x->storages[0].nbytes;
	/* every truncation fails cleanly */
	size_t opened = 0, not_format = 0;
	for (size_t n = 0; n < len; n++) {
		memcpy(copy, data, n);
		int rc = try_wrap(copy, n, &err, NULL);
		opened += rc == 0;
		not_format += rc != ETC_ERR_FORMAT;
	}
	CHECK(opened == 0);
	CHECK(not_format == 0);
	/* every byte flipped: no crash; flips inside the pickle or storage fail */
	int64_t plo = 0, phi = 0;
	{
		etc_arena arena;
		etc_zip *z = NULL;
		etc_arena_init(&arena);
		CHECK(etc_zip_open(&z, &arena, data, len, "plain_tensor.pt", &err) == 0);
		const etc_zip_entry *e = z ? etc_zip_find(z, "plain_tensor/data.pkl") : NULL;
		CHECK(e != NULL);
		if (e) {
			plo = (int64_t)e->data_offset;
			phi = plo + (int64_t)e->usize;
		}
		etc_zip_close(z);
		etc_arena_release(&arena);
	}
	CHECK(plo == 64 && phi > plo && phi < lo);
	size_t missed = 0;
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, data, len);
		copy[i] ^= 0xff;
		int rc = try_wrap(copy, len, &err, NULL);
		bool in_data = ((int64_t)i >= lo && (int64_t)i < hi) ||
		               ((int64_t)i >= plo && (int64_t)i < phi);
		if (in_data && rc == 0) {
			missed++;
			fprintf(stderr, "  flip at %zu opened\n", i);
		}
	}
	CHECK(missed == 0);
	/* the flipped storage byte is reported as a CRC mismatch at its offset */
	memcpy(copy, data, len);
	copy[lo] ^= 1;
	expect_fail(try_wrap(copy, len, &err, NULL), &err, ETC_ERR_FORMAT, "CRC-32", "storage crc");
	CHECK(err.offset == lo);
	free(copy);
	free(data);

	CHECK(try_wrap((const uint8_t *)"", 0, &err, NULL) == ETC_ERR_FORMAT);
	CHECK(try_wrap((const uint8_t *)"PK\x05\x06", 4, &err, NULL) == ETC_ERR_FORMAT);
}

/* Every tensor reachable from `o` stays inside its storage (checked independently). */
static size_t walk_tensors(const etc_pyobj *o, int depth)
{
	size_t bad = 0;
	if (depth > ETC_TORCHSAVE_MAX_DEPTH + 1)
		return 1;
	switch (etc_pyobj_kind(o)) {
	case ETC_PY_TUPLE:
	case ETC_PY_LIST:
		for (size_t i = 0; i < etc_pyobj_len(o); i++)
			bad += walk_tensors(etc_pyobj_item(o, i), depth + 1);
		break;
	case ETC_PY_DICT:
		for (size_t i = 0; i < etc_pyobj_len(o); i++)
			bad += walk_tensors(etc_pyobj_dict_key(o, i), depth + 1) +
			       walk_tensors(etc_pyobj_dict_value(o, i), depth + 1);
		if (etc_pyobj_attrs(o))
			bad += walk_tensors(etc_pyobj_attrs(o), depth + 1);
		break;
	case ETC_PY_TENSOR: {
		const etc_pytensor *t = etc_pyobj_tensor(o);
		if (t->tensor.numel == 0)
			break;
		double last = (double)t->storage_offset;
		for (uint32_t d = 0; d < t->tensor.ndim; d++)
			last += (double)(etc_tensor_size(&t->tensor, d) - 1) *
			        (double)etc_tensor_stride(&t->tensor, d);
		double esz = (double)etc_scalar_type_size(t->tensor.scalar_type);
		bad += (last + 1) * esz > (double)t->storage_nbytes;
		double v = 0;
		etc_pytensor_to_double(t, t->tensor.numel - 1, 1, &v);
		break;
	}
	default:
		break;
	}
	return bad;
}

/* Every single-byte change of real pickles (with valid CRCs): a clean result. */
static void test_mutated_pickles(void)
{
	static const char *const names[] = {"plain_tensor.pt", "python_scalars.pt",
	                                    "ordereddict_state_dict.pt", "non_contiguous.pt",
	                                    "shared_storage.pt"};
	static const uint8_t xors[] = {0x01, 0x80, 0xff};
	size_t unexpected = 0, escaped = 0, opened = 0, runs = 0;
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		fixture f;
		CHECK(fixture_load(&f, names[k]));
		zmember *pkl = fixture_member(&f, "/data.pkl");
		const void *orig = pkl->data;
		uint8_t *w = malloc(pkl->len);
		for (size_t i = 0; i < pkl->len; i++) {
			for (size_t x = 0; x < sizeof xors; x++) {
				memcpy(w, orig, pkl->len);
				w[i] ^= xors[x];
				pkl->data = w;
				size_t len;
				uint8_t *zip = zip_build(f.m, f.n, &len);
				etc_error err;
				etc_torchsave *ts = NULL;
				int rc = try_wrap(zip, len, &err, &ts);
				runs++;
				if (rc == 0) {
					opened++;
					escaped += walk_tensors(etc_torchsave_root(ts), 0);
				} else if (rc != ETC_ERR_FORMAT && rc != ETC_ERR_LIMIT &&
				           rc != ETC_ERR_UNSUPPORTED) {
					unexpected++;
					fprintf(stderr, "  %s byte %zu: %s\n", names[k], i,
					        err.message);
				}
				etc_torchsave_free(ts);
				free(zip);
			}
		}
		pkl->data = orig;
		free(w);
		fixture_free(&f);
	}
	CHECK(unexpected == 0);
	CHECK(escaped == 0);
	CHECK(opened > 0 && opened < runs);
}

static void test_archive_layout(void)
{
	etc_error err;
	buf p = {0};
	pk_start(&p);
	b_str(&p, "N.");
	size_t len;
	uint8_t *zip;

	zmember none[] = {{"t/other.pkl", p.p, p.n, 0, 0, 0}};
	zip = zip_build(none, 1, &len);
	expect_fail(try_wrap(zip, len, &err, NULL), &err, ETC_ERR_FORMAT, "no <top>/data.pkl",
	            "no pickle");
	free(zip);
	zmember root_level[] = {{"data.pkl", p.p, p.n, 0, 0, 0}};
	zip = zip_build(root_level, 1, &len);
	expect_fail(try_wrap(zip, len, &err, NULL), &err, ETC_ERR_FORMAT, "no <top>/data.pkl",
	            "pickle without folder");
	free(zip);
	zmember two[] = {{"a/data.pkl", p.p, p.n, 0, 0, 0}, {"b/data.pkl", p.p, p.n, 0, 0, 0}};
	zip = zip_build(two, 2, &len);
	expect_fail(try_wrap(zip, len, &err, NULL), &err, ETC_ERR_FORMAT, "two pickles",
	            "two pickles");
	free(zip);
	zmember dup[] = {{"t/data.pkl", p.p, p.n, 0, 0, 0}, {"t/data.pkl", p.p, p.n, 0, 0, 0}};
	zip = zip_build(dup, 2, &len);
	CHECK(try_wrap(zip, len, &err, NULL) == ETC_ERR_FORMAT);
	free(zip);
	/* any top folder name, members in any order, byteorder honoured */
	zmember ok[] = {{"zz/byteorder", "little", 6, 0, 0, 0}, {"zz/data.pkl", p.p, p.n, 0, 0, 0}};
	etc_torchsave *ts = NULL;
	zip = zip_build(ok, 2, &len);
	CHECK(try_wrap(zip, len, &err, &ts) == 0);
	if (ts) {
		CHECK_STR(etc_torchsave_prefix(ts), "zz");
		CHECK(etc_pyobj_kind(etc_torchsave_root(ts)) == ETC_PY_NONE);
	}
	etc_torchsave_free(ts);
	free(zip);
	zmember bigend[] = {{"t/data.pkl", p.p, p.n, 0, 0, 0}, {"t/byteorder", "big", 3, 0, 0, 0}};
	zip = zip_build(bigend, 2, &len);
	expect_fail(try_wrap(zip, len, &err, NULL), &err, ETC_ERR_UNSUPPORTED, "big-endian",
	            "big endian");
	free(zip);
	zmember odd[] = {{"t/data.pkl", p.p, p.n, 0, 0, 0}, {"t/byteorder", "middle", 6, 0, 0, 0}};
	zip = zip_build(odd, 2, &len);
	CHECK(try_wrap(zip, len, &err, NULL) == ETC_ERR_FORMAT);
	free(zip);
	b_free(&p);

	/* API misuse and I/O */
	etc_torchsave *t2 = NULL;
	CHECK(etc_torchsave_open(NULL, "x", &err) == ETC_ERR_USAGE);
	CHECK(etc_torchsave_open(&t2, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_torchsave_wrap(&t2, NULL, 5, "x", &err) == ETC_ERR_USAGE);
	CHECK(etc_torchsave_open(&t2, "/nonexistent/file.pt", &err) == ETC_ERR_IO);
	CHECK(t2 == NULL);
	etc_torchsave_free(NULL);
}

/* An ETRecord-like zip holding a torch.save archive as a STORED member. */
static void test_nested(void)
{
	size_t len;
	uint8_t *inner = read_file("dict_of_lists.pt", &len);
	zmember outer_m[] = {{"ETRECORD_V0", "", 0, 0, 0, 0},
	                     {"odd", "xyz", 3, 0, 0, 0},
	                     {"reference_outputs", inner, len, 0, 0, 0}};
	size_t olen;
	uint8_t *outer = zip_build(outer_m, 3, &olen);
	etc_arena arena;
	etc_arena_init(&arena);
	etc_error err;
	etc_zip *z = NULL;
	CHECK(etc_zip_open(&z, &arena, outer, olen, "etrecord.bin", &err) == 0);
	const etc_zip_entry *e = z ? etc_zip_find(z, "reference_outputs") : NULL;
	CHECK(e != NULL);
	CHECK(z && etc_zip_find(z, "reference") == NULL);
	const uint8_t *p = NULL;
	size_t n = 0;
	int64_t at = -1;
	if (e)
		CHECK(etc_zip_read(z, e, &p, &n, &at, &err) == 0);
	CHECK(p == outer + at && n == len && at % 64 != 0);
	etc_zip_close(z);
	etc_torchsave *ts = NULL;
	CHECK(p && etc_torchsave_wrap(&ts, p, n, "etrecord.bin:reference_outputs", &err) == 0);
	const exp_file *x = expected("dict_of_lists.pt");
	if (ts && x) {
		buf s = {0};
		canon(&s, etc_torchsave_root(ts));
		CHECK_STR(b_cstr(&s), x->structure);
		for (size_t i = 0; i < x->ntensors; i++)
			check_tensor(x, &x->tensors[i],
			             follow(etc_torchsave_root(ts), x->tensors[i].path), p);
		b_free(&s);
	}
	etc_torchsave_free(ts);
	etc_arena_release(&arena);
	free(outer);
	free(inner);
}

/* ---- deflated members ------------------------------------------------------- */

typedef struct bitw {
	buf *b;
	unsigned acc, nacc;
} bitw;

static void bits(bitw *w, unsigned v, int n) /* LSB first */
{
	for (int i = 0; i < n; i++) {
		w->acc |= ((v >> i) & 1u) << w->nacc;
		if (++w->nacc == 8) {
			b_u8(w->b, w->acc);
			w->acc = w->nacc = 0;
		}
	}
}

static void huff(bitw *w, unsigned code, int n) /* Huffman codes go MSB first */
{
	for (int i = n - 1; i >= 0; i--)
		bits(w, (code >> i) & 1u, 1);
}

/* Fixed-Huffman deflate of 'A' followed by k matches of 258 'A's at distance 1. */
static void deflate_run(buf *out, size_t k)
{
	bitw w = {out, 0, 0};
	bits(&w, 1, 1); /* BFINAL */
	bits(&w, 1, 2); /* fixed Huffman */
	huff(&w, 0x30 + 'A', 8);
	for (size_t i = 0; i < k; i++) {
		huff(&w, 0xc5, 8); /* length code 285: 258 */
		huff(&w, 0, 5);    /* distance code 0: 1 */
	}
	huff(&w, 0, 7); /* end of block */
	if (w.nacc)
		b_u8(out, w.acc);
}

/* Deflate "stored" blocks: the bytes as they are. */
static void deflate_stored(buf *out, const uint8_t *p, size_t n)
{
	do {
		size_t k = n > 65535 ? 65535 : n;
		b_u8(out, k == n ? 1 : 0);
		b_le(out, k, 2);
		b_le(out, ~k & 0xffff, 2);
		b_put(out, p, k);
		p += k;
		n -= k;
	} while (n);
}

static void test_deflate(void)
{
	etc_error err;
	size_t k = 400, usize = 1 + 258 * k;
	uint8_t *plain = malloc(usize);
	memset(plain, 'A', usize);
	buf d = {0};
	deflate_run(&d, k);
	uint32_t crc = etc_crc32(0, plain, usize);
	zmember m[] = {{"bomb", d.p, d.n, 8, usize, crc}, {"small", "ok", 2, 0, 0, 0}};
	size_t len;
	uint8_t *zip = zip_build(m, 2, &len);

	etc_arena arena;
	etc_arena_init(&arena);
	etc_zip *z = NULL;
	CHECK(etc_zip_open(&z, &arena, zip, len, "deflate.zip", &err) == 0);
	if (z) {
		const uint8_t *p;
		size_t n;
		int64_t at = 0;
		CHECK(etc_zip_read(z, etc_zip_find(z, "bomb"), &p, &n, &at, &err) == 0);
		CHECK(n == usize && at == -1 && memcmp(p, plain, usize) == 0);
		const uint8_t *again;
		CHECK(etc_zip_read(z, etc_zip_find(z, "bomb"), &again, &n, NULL, &err) == 0);
		CHECK(again == p);
		etc_zip_close(z);
	}
	/* the inflation budget: a zip bomb stops before inflating */
	CHECK(etc_zip_open(&z, &arena, zip, len, "deflate.zip", &err) == 0);
	if (z) {
		const uint8_t *p;
		size_t n;
		etc_zip_set_budget(z, usize - 1);
		expect_fail(etc_zip_read(z, etc_zip_find(z, "bomb"), &p, &n, NULL, &err), &err,
		            ETC_ERR_LIMIT, "zip bomb", "budget");
		CHECK(etc_zip_read(z, etc_zip_find(z, "small"), &p, &n, NULL, &err) == 0);
		etc_zip_close(z);
	}
	free(zip);
	/* a member that inflates to more than it declares */
	m[0].usize = usize - 10;
	m[0].crc = etc_crc32(0, plain, usize - 10);
	zip = zip_build(m, 2, &len);
	CHECK(etc_zip_open(&z, &arena, zip, len, "deflate.zip", &err) == 0);
	if (z) {
		const uint8_t *p;
		size_t n;
		CHECK(etc_zip_read(z, etc_zip_find(z, "bomb"), &p, &n, NULL, &err) ==
		      ETC_ERR_FORMAT);
		etc_zip_close(z);
	}
	free(zip);
	etc_arena_release(&arena);
	b_free(&d);
	free(plain);

	/* a torch.save archive whose pickle and storage are deflated */
	fixture f;
	CHECK(fixture_load(&f, "plain_tensor.pt"));
	buf defl[8] = {{0}};
	for (size_t i = 0; i < f.n; i++) {
		deflate_stored(&defl[i], f.m[i].data, f.m[i].len);
		f.m[i].method = 8;
		f.m[i].usize = f.m[i].len;
		f.m[i].crc = etc_crc32(0, f.m[i].data, f.m[i].len);
		f.m[i].data = defl[i].p;
		f.m[i].len = defl[i].n;
	}
	zip = zip_build(f.m, f.n, &len);
	etc_torchsave *ts = NULL;
	CHECK(try_wrap(zip, len, &err, &ts) == 0);
	if (ts) {
		const etc_pytensor *t = etc_pyobj_tensor(etc_torchsave_root(ts));
		CHECK(t && t->tensor.offset == -1 && t->tensor.data != NULL);
		CHECK(t && (t->storage < zip || t->storage >= zip + len));
		if (t)
			CHECK_DOUBLE_EXACT(etc_pytensor_get(t, 1), -2.25);
	} else {
		fprintf(stderr, "  deflated archive: %s\n", err.message);
	}
	etc_torchsave_free(ts);
	free(zip);
	for (size_t i = 0; i < f.n; i++)
		b_free(&defl[i]);
	fixture_free(&f);
}

int main(void)
{
	init_data_dir();
	for (size_t i = 0; i < sizeof expected_files / sizeof expected_files[0]; i++)
		check_file(&expected_files[i]);
	test_python_values();
	CHECK_GROUP(test_forbidden_globals);
	CHECK_GROUP(test_opcodes);
	CHECK_GROUP(test_limits);
	CHECK_GROUP(test_tensor_checks);
	test_v3_dtypes();
	CHECK_GROUP(test_truncated_and_corrupt);
	CHECK_GROUP(test_mutated_pickles);
	test_archive_layout();
	test_nested();
	CHECK_GROUP(test_deflate);
	return check_report("test_torchsave");
}
