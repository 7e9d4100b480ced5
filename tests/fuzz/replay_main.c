/*
 * replay_main.c - runs a fuzz target's LLVMFuzzerTestOneInput over files
 * and folders (recursively) given on the command line, without libFuzzer,
 * so that any compiler builds it and ctest replays the corpus and every
 * past crasher. Prints how many inputs ran; exits 2 when a path cannot be
 * read. A crash is the test failing.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int replay_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			fprintf(stderr, "replay: %s: out of memory\n", path);
			return -1;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		uint8_t *bigger = realloc(buf, cap * 2);
		if (!bigger)
			free(buf);
		buf = bigger, cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		fprintf(stderr, "replay: %s: read error\n", path);
		return -1;
	}
	/* An exact-size copy, as libFuzzer passes it. */
	uint8_t *exact = fuzz_copy(buf, len);
	free(buf);
	if (!exact)
		return -1;
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	(*count)++;
	return 0;
}

static int replay_path(const char *path, size_t *count)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, count);
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue; /* ., .. and .gitkeep */
		size_t n = strlen(path) + strlen(e->d_name) + 2;
		char *child = malloc(n);
		if (!child) {
			rc = -1;
			break;
		}
		snprintf(child, n, "%s/%s", path, e->d_name);
		if (replay_path(child, count) < 0)
			rc = -1;
		free(child);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) < 0)
			rc = 2;
	printf("replayed %zu inputs\n", count);
	if (count == 0 && rc == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 2;
	}
	return rc;
}
