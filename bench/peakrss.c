/*
 * peakrss.c - runs a command and reports its wall time and peak resident set
 * size, like `/usr/bin/time -f '%e s %M KB'` (used when GNU time is absent).
 *
 * Usage: peakrss [-o FILE] COMMAND [ARGS...]
 * Prints "<wall> s <kilobytes> KB <user> user <sys> sys" (seconds) to FILE
 * (default stderr) and exits with the command's status (128 + signal when
 * it was killed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *outpath = NULL;
	int first = 1;
	if (argc > 2 && !strcmp(argv[1], "-o")) {
		outpath = argv[2];
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: peakrss [-o FILE] COMMAND [ARGS...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("peakrss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[first], argv + first);
		fprintf(stderr, "peakrss: cannot run %s: %s\n", argv[first], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("peakrss: wait4");
			return 2;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	FILE *out = outpath ? fopen(outpath, "w") : stderr;
	if (!out) {
		perror("peakrss: cannot open the output file");
		out = stderr;
	}
	fprintf(out, "%.3f s %ld KB %.3f user %.3f sys\n", secs, ru.ru_maxrss,
	        (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
	        (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	if (out != stderr)
		fclose(out);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
