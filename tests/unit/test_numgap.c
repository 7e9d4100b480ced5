/*
 * test_numgap.c - the grouping core of the numeric gap
 * (etc_numgap_components_): items sharing a debug handle, directly or
 * through others, form one component; components are numbered by their
 * first item; an item without handles stands alone. Expected components
 * are worked out by hand next to each case. Plus a brute-force cross-check
 * on random keys: two items are in one component exactly when the
 * transitive closure of "share a handle" (computed here by repeated
 * relaxation, O(n^3), independent of the union-find) connects them.
 */
#include "check.h"

#include "analysis/numgap_private.h"

#include <stdbool.h>
#include <stdlib.h>

static void expect(const char *name, const etc_ng_key *keys, size_t n, const uint32_t *want,
                   size_t want_n)
{
	uint32_t comp[64];
	size_t nc = 0;
	etc_error err;
	CHECK(etc_numgap_components_(keys, n, comp, &nc, &err) == 0);
	CHECK(nc == want_n);
	for (size_t i = 0; i < n; i++)
		if (comp[i] != want[i]) {
			fprintf(stderr, "%s: item %zu in component %u, expected %u\n", name, i,
			        comp[i], want[i]);
			CHECK(comp[i] == want[i]);
		}
}

static void random_case(unsigned seed, size_t n, int handles)
{
	int64_t h[64][4];
	etc_ng_key keys[64];
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		uint32_t c = (uint32_t)(rand() % 4);
		for (uint32_t k = 0; k < c; k++)
			h[i][k] = rand() % handles;
		keys[i] = (etc_ng_key){h[i], c};
	}
	/* reach[i][j]: i and j connected, closed transitively */
	static unsigned char reach[64][64];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			reach[i][j] = i == j;
			for (uint32_t a = 0; a < keys[i].count; a++)
				for (uint32_t b = 0; b < keys[j].count; b++)
					reach[i][j] |= h[i][a] == h[j][b];
		}
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				reach[i][j] |= reach[i][k] && reach[k][j];
	uint32_t comp[64];
	size_t nc;
	CHECK(etc_numgap_components_(keys, n, comp, &nc, NULL) == 0);
	int bad = 0;
	size_t firsts = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++)
			bad += (comp[i] == comp[j]) != (reach[i][j] != 0);
		bool first = true; /* numbered by first item: a new id is max so far + 1 */
		for (size_t j = 0; j < i; j++)
			first &= !reach[i][j];
		if (first)
			CHECK(comp[i] == firsts++);
	}
	CHECK(bad == 0);
	CHECK(nc == firsts);
}

int main(void)
{
	/* runtime: (3,4,5) fused; reference: 3, 4, 5 separately -> one group */
	const int64_t f345[] = {3, 4, 5}, h3[] = {3}, h4[] = {4}, h5[] = {5};
	const etc_ng_key fused[] = {{f345, 3}, {h3, 1}, {h4, 1}, {h5, 1}};
	const uint32_t fused_want[] = {0, 0, 0, 0};
	expect("fused", fused, 4, fused_want, 1);

	/* a chain through overlaps: (9,10) - (10,11) - 11 - (20) alone - () alone */
	const int64_t a[] = {9, 10}, b[] = {10, 11}, c[] = {11}, d[] = {20};
	const etc_ng_key chain[] = {{d, 1}, {a, 2}, {NULL, 0}, {b, 2}, {c, 1}, {d, 1}};
	/* item 0 (20) is component 0, item 1 starts component 1, item 2 has no
	 * handle: component 2; items 3 and 4 join 1; item 5 shares 20 with 0 */
	const uint32_t chain_want[] = {0, 1, 2, 1, 1, 0};
	expect("chain", chain, 6, chain_want, 3);

	/* a later item bridging two earlier components merges them under the first */
	const int64_t x1[] = {1}, x2[] = {2}, x12[] = {2, 1};
	const etc_ng_key bridge[] = {{x2, 1}, {x1, 1}, {x12, 2}};
	const uint32_t bridge_want[] = {0, 0, 0};
	expect("bridge", bridge, 3, bridge_want, 1);

	/* repeated handles within a key, negative and huge handles */
	const int64_t r[] = {7, 7, 7}, big[] = {INT64_MAX, -5}, big2[] = {INT64_MAX};
	const etc_ng_key odd[] = {{r, 3}, {big, 2}, {big2, 1}, {r, 1}};
	const uint32_t odd_want[] = {0, 1, 1, 0};
	expect("odd", odd, 4, odd_want, 2);

	/* nothing at all */
	size_t nc = 99;
	CHECK(etc_numgap_components_(NULL, 0, NULL, &nc, NULL) == 0 && nc == 0);

	for (unsigned s = 1; s <= 200; s++)
		random_case(s, 1 + s % 64, 2 + (int)(s % 40));
	return check_report("test_numgap");
}
