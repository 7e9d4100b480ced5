/*
 * fuzz_html.c - the HTML report (--report) of one fuzzed run: the profile
 * tables, the numeric gap of the run against itself and the performance
 * diff against itself, with the run's names in every table. The written
 * page is checked: valid UTF-8, no control character but tab and newline,
 * and no "<script" or "<" from a name (the page's own markup has a fixed
 * set of tags; a name's "<" must arrive as "&lt;").
 *
 * Input: as fuzz_etdump (uint32 n, ETDump, debug buffer).
 */
#define _GNU_SOURCE
#include "fuzz_dumps.h"
#include "fuzz_outputs.h"

static void check_page(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	fuzz_text t;
	if (!fuzz_text_open(&t)) {
		fclose(f);
		return;
	}
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, got, t.f);
	fclose(f);
	fuzz_text_close(&t);
	for (size_t i = 0; i < t.n;) {
		uint32_t cp;
		size_t len = fuzz_utf8((const unsigned char *)t.p + i, t.n - i, &cp);
		if (!len)
			fuzz_fail("html: invalid UTF-8", t.p, t.n, i);
		if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f)
			fuzz_fail("html: control character", t.p, t.n, i);
		i += len;
	}
	/* the fuzzed names hold "FUZZ<" at most as text: never as markup */
	if (t.n && memmem(t.p, t.n, "FUZZ<", 5))
		fuzz_fail("html: a name's '<' reached the page raw", t.p, t.n, 0);
	free(t.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run r;
	if (fuzz_run_open(&r, data, size, true) < 0 || !r.insp) {
		fuzz_run_close(&r);
		return 0;
	}
	etc_error err;
	etc_html_report *h = NULL;
	etc_profile *p = NULL;
	etc_perfdiff *pd = NULL;
	etc_numgap *ng = NULL;
	if (etc_html_report_create(&h, "fuzz <report>", &err) < 0)
		goto done;
	char *argv[] = {"etcompare", "--etdump", "fuzz.etdp", "--report", "r.html"};
	(void)etc_html_report_command(h, 5, argv, &err);
	(void)etc_html_report_input_bytes(h, "ETDump", "fuzz.etdp", r.dump_bytes,
	                                  r.dump_len < 64 ? r.dump_len : 64, &err);
	if (etc_profile_create(&p, r.insp, &err) == 0)
		etc_html_report_profile(h, p, ~0u);
	etc_perfdiff_options po;
	etc_perfdiff_options_init(&po);
	if (etc_perfdiff_create(&pd, r.insp, r.insp, &po, &err) == 0)
		etc_html_report_perfdiff(h, pd);
	etc_numgap_reference ref = {r.insp, NULL, "self"};
	etc_numgap_options no;
	etc_numgap_options_init(&no);
	if (size & 2)
		no.min_snr = 1e300;
	if (etc_numgap_run(&ng, r.insp, &ref, &no, &err) == 0)
		etc_html_report_numgap(h, ng);
	(void)etc_html_report_note(h, "fuzz note & <b>", &err);
	char path[320];
	snprintf(path, sizeof path, "%s/report.html", fuzz_tmp_dir());
	if (etc_html_report_write(h, path, &err) == 0)
		check_page(path);
	else
		fuzz_check_terminal(err.message, strlen(err.message));
done:
	etc_numgap_free(ng);
	etc_perfdiff_free(pd);
	etc_profile_free(p);
	etc_html_report_free(h);
	fuzz_run_close(&r);
	return 0;
}
