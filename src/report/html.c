/*
 * html.c - the self-contained HTML report (--report): see etcompare/html.h.
 *
 * Written in one pass at etc_html_report_write from the objects collected:
 * inline CSS, tables with a data-v attribute per numeric cell for the
 * inline sorting script, plots as base64 data: URIs. Every string that
 * comes from an input goes through put_esc.
 */
#define _GNU_SOURCE
#include "etcompare/html.h"
#include "etcompare/report.h"
#include "core/internal.h"
#include "core/utf8.h"
#include "core/fmt.h"
#include "report/report_private.h"
#include "report/band_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_ITEMS 256
#define IMAGE_MAX (64u << 20)

typedef struct html_input {
	char *role, *name;
	uint64_t size;
	uint32_t crc;
} html_input;

typedef struct html_image {
	char *caption;
	uint8_t *png;
	size_t size;
} html_image;

struct etc_html_report {
	char *title, *command, *verdict;
	bool failed, has_verdict, ungated;
	html_input inputs[MAX_ITEMS];
	size_t ninputs;
	html_image images[MAX_ITEMS];
	size_t nimages;
	html_image numgap_chart; /* shown in the numeric gap section; png NULL: none */
	char *notes[MAX_ITEMS];
	size_t nnotes;
	const etc_accuracy *acc;
	const etc_inspector *acc_insp;
	const etc_numgap *ng;
	const etc_numgap_dist *dist;
	const etc_taps *taps;
	const etc_inspector *taps_insp;
	const etc_profile *profile;
	unsigned profile_mask;
	const etc_perfdiff *diff;
};

static int nomem(etc_error *err)
{
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
}

int etc_html_report_create(etc_html_report **out, const char *title, etc_error *err)
{
	if (out)
		*out = NULL;
	etc_html_report *h = calloc(1, sizeof *h);
	if (!h || !(h->title = strdup(title ? title : "etcompare report"))) {
		free(h);
		return nomem(err);
	}
	*out = h;
	return 0;
}

void etc_html_report_free(etc_html_report *h)
{
	if (!h)
		return;
	free(h->title);
	free(h->command);
	free(h->verdict);
	for (size_t i = 0; i < h->ninputs; i++) {
		free(h->inputs[i].role);
		free(h->inputs[i].name);
	}
	for (size_t i = 0; i < h->nimages; i++) {
		free(h->images[i].caption);
		free(h->images[i].png);
	}
	free(h->numgap_chart.caption);
	free(h->numgap_chart.png);
	for (size_t i = 0; i < h->nnotes; i++)
		free(h->notes[i]);
	free(h);
}

/* Appends `s` quoted for a POSIX shell when it needs it. */
static void put_shell_word(etc_sbuf *b, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		        (*p >= '0' && *p <= '9') || strchr("-_./=:,+@%", *p);
	if (plain) {
		etc_sbuf_puts(b, s);
		return;
	}
	etc_sbuf_puts(b, "'");
	for (const char *p = s; *p; p++)
		if (*p == '\'')
			etc_sbuf_puts(b, "'\\''");
		else
			etc_sbuf_put(b, p, 1);
	etc_sbuf_puts(b, "'");
}

int etc_html_report_command(etc_html_report *h, int argc, char *const *argv, etc_error *err)
{
	etc_sbuf b = {0};
	for (int i = 0; i < argc; i++) {
		if (i)
			etc_sbuf_puts(&b, " ");
		put_shell_word(&b, argv[i] ? argv[i] : "");
	}
	if (b.failed || !b.p) {
		etc_sbuf_free(&b);
		return nomem(err);
	}
	free(h->command);
	h->command = b.p;
	return 0;
}

int etc_html_report_verdict(etc_html_report *h, bool failed, const char *text, etc_error *err)
{
	char *t = strdup(text ? text : "");
	if (!t)
		return nomem(err);
	free(h->verdict);
	h->verdict = t;
	h->failed = failed;
	h->ungated = false;
	h->has_verdict = true;
	return 0;
}

int etc_html_report_verdict_ungated(etc_html_report *h, const char *text, etc_error *err)
{
	int rc = etc_html_report_verdict(h, false, text, err);
	if (rc == 0)
		h->ungated = true;
	return rc;
}

int etc_html_report_input_bytes(etc_html_report *h, const char *role, const char *name,
                                const void *data, size_t size, etc_error *err)
{
	if (h->ninputs == MAX_ITEMS)
		return 0;
	html_input *in = &h->inputs[h->ninputs];
	in->role = strdup(role ? role : "");
	in->name = strdup(name ? name : "");
	if (!in->role || !in->name) {
		free(in->role);
		free(in->name);
		return nomem(err);
	}
	in->size = size;
	in->crc = etc_crc32(0, data, size);
	h->ninputs++;
	return 0;
}

int etc_html_report_input(etc_html_report *h, const char *role, const char *path, etc_error *err)
{
	etc_map m;
	ETC_TRY(etc_map_open(&m, path, err));
	int rc = etc_html_report_input_bytes(h, role, path, m.data, m.size, err);
	etc_map_close(&m);
	return rc;
}

void etc_html_report_accuracy(etc_html_report *h, const etc_accuracy *acc,
                              const etc_inspector *insp)
{
	h->acc = acc;
	h->acc_insp = insp;
}

void etc_html_report_numgap(etc_html_report *h, const etc_numgap *ng)
{
	h->ng = ng;
}

void etc_html_report_taps(etc_html_report *h, const etc_taps *t, const etc_inspector *insp)
{
	h->taps = t;
	h->taps_insp = insp;
}

void etc_html_report_numgap_dist(etc_html_report *h, const etc_numgap_dist *d)
{
	h->dist = d;
}

void etc_html_report_profile(etc_html_report *h, const etc_profile *p, unsigned mask)
{
	h->profile = p;
	h->profile_mask = mask;
}

void etc_html_report_perfdiff(etc_html_report *h, const etc_perfdiff *d)
{
	h->diff = d;
}

/* Reads the PNG at `png_path` into `im`. */
static int read_image(html_image *im, const char *caption, const char *png_path, etc_error *err)
{
	etc_map m;
	ETC_TRY(etc_map_open(&m, png_path, err));
	int rc = 0;
	if (m.size > IMAGE_MAX || m.size < 8 || memcmp(m.data, "\x89PNG\r\n\x1a\n", 8) != 0) {
		rc = etc_fail(err, ETC_ERR_FORMAT, png_path, 0, "not a PNG of at most %u bytes",
		              IMAGE_MAX);
	} else {
		im->png = malloc(m.size);
		im->caption = strdup(caption ? caption : "");
		if (!im->png || !im->caption) {
			free(im->png);
			free(im->caption);
			im->png = NULL;
			im->caption = NULL;
			rc = nomem(err);
		} else {
			memcpy(im->png, m.data, m.size);
			im->size = m.size;
		}
	}
	etc_map_close(&m);
	return rc;
}

int etc_html_report_image(etc_html_report *h, const char *caption, const char *png_path,
                          etc_error *err)
{
	if (h->nimages == MAX_ITEMS)
		return 0;
	ETC_TRY(read_image(&h->images[h->nimages], caption, png_path, err));
	h->nimages++;
	return 0;
}

int etc_html_report_numgap_chart(etc_html_report *h, const char *caption, const char *png_path,
                                 etc_error *err)
{
	html_image im = {0};
	ETC_TRY(read_image(&im, caption, png_path, err));
	free(h->numgap_chart.caption);
	free(h->numgap_chart.png);
	h->numgap_chart = im;
	return 0;
}

int etc_html_report_note(etc_html_report *h, const char *text, etc_error *err)
{
	if (h->nnotes == MAX_ITEMS)
		return 0;
	if (!(h->notes[h->nnotes] = strdup(text ? text : "")))
		return nomem(err);
	h->nnotes++;
	return 0;
}

/* ---- writing ---- */

/* `s` (n bytes) HTML-escaped; control characters but \n and \t, and bytes
 * that are not UTF-8 (names from ETDumps may hold any), as U+FFFD. */
void etc_html_escape_n_(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			uint32_t cp;
			size_t len = etc_utf8_decode((const unsigned char *)s + i, n - i, &cp);
			if (len == 0 || (cp >= 0x80 && cp < 0xa0)) {
				fputs("\xef\xbf\xbd", f);
				i += len ? len : 1;
			} else {
				fwrite(s + i, 1, len, f);
				i += len;
			}
			continue;
		}
		i++;
		switch (c) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				fputs("\xef\xbf\xbd", f);
			else
				fputc(c, f);
		}
	}
}

static void put_esc(FILE *f, const char *s)
{
	etc_html_escape_n_(f, s ? s : "", s ? strlen(s) : 0);
}

static void put_base64(FILE *f, const uint8_t *p, size_t n)
{
	static const char tbl[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		fputc(tbl[(v >> 18) & 63], f);
		fputc(tbl[(v >> 12) & 63], f);
		fputc(i + 1 < n ? tbl[(v >> 6) & 63] : '=', f);
		fputc(i + 2 < n ? tbl[v & 63] : '=', f);
	}
}

/* A plot as a figure with its caption; a wide one (timeline, long bar
 * charts) gets the full width. */
static void put_figure(FILE *f, const html_image *im, const char *id)
{
	const uint8_t *ih = im->png;
	uint32_t w = im->size >= 24 ? (uint32_t)ih[16] << 24 | (uint32_t)ih[17] << 16 |
	                                  (uint32_t)ih[18] << 8 | ih[19]
	                            : 0;
	fputs(w >= 1000 ? "<figure class=\"wide\"" : "<figure", f);
	if (id)
		fprintf(f, " id=\"%s\"", id);
	fputs("><img alt=\"", f);
	put_esc(f, im->caption);
	fputs("\" src=\"data:image/png;base64,", f);
	put_base64(f, im->png, im->size);
	fputs("\"><figcaption>", f);
	put_esc(f, im->caption);
	fputs("</figcaption></figure>\n", f);
}

/* A numeric cell: the shown text and a data-v for sorting (inf sorts last). */
static void num_cell(FILE *f, double v, const char *cls)
{
	char buf[48];
	etc_fmt_metric_(buf, sizeof buf, v);
	fprintf(f, "<td class=\"n%s%s\" data-v=\"%s\">%s</td>", cls ? " " : "", cls ? cls : "",
	        isnan(v)   ? "NaN"
	        : isinf(v) ? (v > 0 ? "Infinity" : "-Infinity")
	                   : buf,
	        buf);
}

static void text_cell(FILE *f, const char *s)
{
	fputs("<td>", f);
	put_esc(f, s);
	fputs("</td>", f);
}

static void table_head(FILE *f, const char *id, const char *const *cols, size_t n)
{
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable\" id=\"%s\"><thead><tr>", id);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "<th>%s</th>", cols[i]);
	fputs("</tr></thead><tbody>\n", f);
}

static void table_end(FILE *f)
{
	fputs("</tbody></table></div>\n", f);
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1200px;padding:16px 24px;color:#1d1d1f;background:#fff}"
    "h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;"
    "border-bottom:1px solid #ddd;padding-bottom:4px}"
    ".verdict{padding:10px 14px;border-radius:6px;font-weight:600;font-size:16px}"
    ".pass{background:#e6f4ea;color:#1e5631}.fail{background:#fde7e7;color:#8a1c1c}"
    ".none{background:#eef0f3;color:#3a3f45}"
    "pre,code{font:12px/1.4 ui-monospace,'DejaVu Sans Mono',monospace}"
    "pre{background:#f6f8fa;padding:8px;overflow-x:auto;border-radius:4px}"
    "table{border-collapse:collapse;margin:6px 0;font-size:13px}"
    "th,td{border:1px solid #d8dee4;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f3f6;cursor:pointer;white-space:nowrap}td.n{text-align:right;"
    "white-space:nowrap;font-variant-numeric:tabular-nums}th.n{text-align:right}"
    ".scroll{overflow-x:auto}tr.bad td{background:#fdecec}"
    "tr.bad td.st{color:#b00020;font-weight:600}"
    ".plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}"
    "figure{margin:0}figure.wide{grid-column:1/-1}figure img{width:100%;height:auto;border:1px "
    "solid #e3e3e3}"
    "figcaption{font-size:12px;color:#555}details{margin:4px 0}summary{cursor:pointer}"
    ".muted{color:#666}.warn{background:#fff4d6;color:#6b4e00;padding:6px 10px;"
    "border-radius:4px}\n";

/* Sorts a table by the clicked column: numbers by data-v (NaN last either
 * way: a NaN compared as "equal" to every number left the order
 * inconsistent), text otherwise. */
static const char script[] =
    "document.querySelectorAll('table.sortable th').forEach(function(th,i){"
    "th.addEventListener('click',function(){var tb=th.closest('table').tBodies[0];"
    "var up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';"
    "var rows=Array.prototype.slice.call(tb.rows);rows.sort(function(a,b){"
    "var x=a.cells[i],y=b.cells[i];var p=x.dataset.v,q=y.dataset.v;"
    "if(p!==undefined&&q!==undefined){p=parseFloat(p);q=parseFloat(q);"
    "if(isNaN(p)||isNaN(q))return isNaN(p)-isNaN(q);var d=(p-q)||0;return up?d:-d;}"
    "var r=x.textContent.localeCompare(y.textContent);return up?r:-r;});"
    "rows.forEach(function(r){tb.appendChild(r);});});});\n";

static void write_inputs(FILE *f, const etc_html_report *h)
{
	if (!h->ninputs)
		return;
	fputs("<h2>Inputs</h2>\n", f);
	static const char *const cols[] = {"role", "file", "bytes", "CRC-32"};
	table_head(f, "inputs", cols, 4);
	for (size_t i = 0; i < h->ninputs; i++) {
		const html_input *in = &h->inputs[i];
		fputs("<tr>", f);
		text_cell(f, in->role);
		text_cell(f, in->name);
		fprintf(
		    f, "<td class=\"n\" data-v=\"%llu\">%llu</td><td><code>%08x</code></td></tr>\n",
		    (unsigned long long)in->size, (unsigned long long)in->size, in->crc);
	}
	table_end(f);
}

/* A cell of an unsigned index, "-" for UINT32_MAX / a negative one. */
static void index_cell(FILE *f, long long v)
{
	if (v < 0 || v == UINT32_MAX)
		fputs("<td class=\"n\">-</td>", f);
	else
		fprintf(f, "<td class=\"n\" data-v=\"%lld\">%lld</td>", v, v);
}

/* The accuracy table: the terminal's columns (block, run within the block,
 * reference, output, ...) and verdicts, failing rows first. */
static void write_accuracy(FILE *f, const etc_html_report *h)
{
	const etc_accuracy *acc = h->acc;
	size_t n = etc_accuracy_row_count(acc);
	bool gated = etc_accuracy_gated(acc);
	fputs("<h2>Accuracy: program outputs against references</h2>\n<p>", f);
	if (gated)
		fprintf(f, "%zu of %zu output%s fail%s.", etc_accuracy_failures(acc), n,
		        n == 1 ? "" : "s", etc_accuracy_failures(acc) == 1 ? "s" : "");
	else
		fprintf(f, "%zu output%s compared, no gate (--min-snr and the like set one).", n,
		        n == 1 ? "" : "s");
	fputs("<br><span class=\"muted\">", f);
	put_esc(f, etc_accuracy_pair_note(acc));
	fputs("</span></p>\n", f);
	static const char *const cols[] = {"block",  "run",    "etdump run", "ref",
	                                   "output", "shape",  "dtype",      "SNR (dB)",
	                                   "MSE",    "cosine", "max abs",    "verdict"};
	table_head(f, "accuracy", cols, 12);
	/* failing rows first, each group in its order */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
			bool bad = r->status != ETC_ROW_PASS;
			if (bad != (pass == 0))
				continue;
			fputs(bad ? "<tr class=\"bad\">" : "<tr>", f);
			const etc_event_block *b =
			    h->acc_insp && r->block < etc_inspector_block_count(h->acc_insp)
			        ? etc_inspector_block(h->acc_insp, r->block)
			        : NULL;
			fputs("<td>", f);
			if (b)
				etc_html_escape_n_(f, b->name.ptr, b->name.len);
			if (b && etc_inspector_block_name_shared(h->acc_insp, r->block))
				fprintf(f, "#%u", r->block);
			fputs("</td>", f);
			/* a reference no run used has no run */
			index_cell(f, r->etdump_run == UINT32_MAX ? -1 : (long long)r->run);
			index_cell(f, r->etdump_run == UINT32_MAX ? -1 : (long long)r->etdump_run);
			index_cell(f, r->reference);
			index_cell(f, r->output);
			text_cell(f, *r->shape ? r->shape : r->reference_shape);
			text_cell(f, *r->dtype ? r->dtype : r->reference_dtype);
			const etc_metrics *m = &r->metrics;
			double v[4] = {m->snr_db, m->mse, m->cosine, m->max_abs};
			for (int k = 0; k < 4; k++)
				if (r->has_metrics)
					num_cell(f, v[k], NULL);
				else
					fputs("<td class=\"n\">-</td>", f);
			fputs("<td class=\"st\">", f);
			put_esc(f, r->status == ETC_ROW_PASS && !gated
			               ? "no gate"
			               : etc_row_status_str(r->status));
			if (r->status != ETC_ROW_PASS) {
				fputs(": ", f);
				put_esc(f, r->reason);
			} else if (r->has_metrics && m->identical) {
				fputs(" (identical)", f);
			}
			fputs("</td></tr>\n", f);
		}
	table_end(f);
}

/* The row's op types, else its event name, else its instruction. */
static void put_row_ops(FILE *f, const etc_numgap_row *r)
{
	if (*r->ops || *r->event_name)
		put_esc(f, *r->ops ? r->ops : r->event_name);
	else
		fprintf(f, "instruction %d", r->instruction_id);
}

static void put_handles(FILE *f, const int64_t *h, size_t n)
{
	fputs("(", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ", %lld" : "%lld", (long long)h[i]);
	fputs(n == 1 ? ",)" : ")", f);
}

/* Module path and stack trace; the source line too when `source`. */
static void put_trace(FILE *f, const etc_numgap_row *r, bool source)
{
	if (source && *r->source_line) {
		fputs("<div>source: <code>", f);
		put_esc(f, r->source_line);
		fputs("</code></div>", f);
	}
	if (*r->module_path) {
		fputs("<div class=\"muted\">module ", f);
		put_esc(f, r->module_path);
		fputs("</div>", f);
	}
	if (*r->stack_trace) {
		fputs("<details><summary>stack trace</summary><pre>", f);
		put_esc(f, r->stack_trace);
		fputs("</pre></details>", f);
	}
}

/* "row 3, node native_layer_norm: aten.native_layer_norm.default", as the
 * terminal's first-divergence line names it. */
static void put_first(FILE *f, long first, const etc_numgap_row *r)
{
	fprintf(f, "First divergence: row %ld, ", first);
	if (*r->nodes) {
		fputs("node ", f);
		put_esc(f, r->nodes);
		fputs(": ", f);
	}
	put_row_ops(f, r);
}

/* The terminal's "where the error enters": the same rows (etc_numgap_top_drops). */
static void write_drops(FILE *f, const etc_numgap *ng)
{
	size_t n = etc_numgap_row_count(ng), top[ETC_REPORT_DROPS];
	size_t k = etc_numgap_top_drops(ng, ETC_REPORT_DROPS, top);
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = !isnan(etc_numgap_row_at(ng, i)->snr_drop) ||
		      etc_numgap_row_at(ng, i)->has_local;
	if (!any)
		return; /* no graph: no drops */
	fputs("<h3>Where the error enters</h3>\n<p class=\"muted\">", f);
	put_esc(f, etc_numgap_enters_rule_(ng));
	fputs(". The local SNR re-runs the op on the runtime's own logged inputs; without a "
	      "reference graph, the noise an op adds is its error-to-signal ratio "
	      "10<sup>-SNR/10</sup> minus the largest of its inputs'.</p>\n",
	      f);
	if (!k) {
		fputs("<p>No op adds error of its own.</p>\n", f);
		return;
	}
	fputs("<ol id=\"enters\">\n", f);
	for (size_t i = 0; i < k; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, top[i]);
		char fig[400];
		etc_numgap_enters_figures_(fig, sizeof fig, r);
		fprintf(f, "<li><b>row %zu ", top[i]);
		put_esc(f, *r->nodes ? r->nodes : r->event_name);
		fputs("</b> (", f);
		put_esc(f, *r->ops ? r->ops : r->event_name);
		fputs("): ", f);
		put_esc(f, fig);
		if (r->status != ETC_ROW_PASS)
			fputs(", FAIL", f);
		if (*r->source_line) {
			fputs(" at <code>", f);
			put_esc(f, r->source_line);
			fputs("</code>", f);
		}
		put_trace(f, r, false);
		fputs("</li>\n", f);
	}
	fputs("</ol>\n", f);
}

/* An SNR drop cell: "+inf" sorts first, "-" (not compared) has no value. */
static void drop_cell(FILE *f, double v)
{
	char buf[40];
	etc_fmt_snr_drop_(buf, sizeof buf, v);
	if (isnan(v))
		fputs("<td class=\"n\">-</td>", f);
	else
		fprintf(f, "<td class=\"n\" data-v=\"%s\">%s</td>",
		        isinf(v) ? (v > 0 ? "Infinity" : "-Infinity") : buf, buf);
}

static void write_numgap(FILE *f, const etc_html_report *h)
{
	const etc_numgap *ng = h->ng;
	size_t n = etc_numgap_row_count(ng), nf = etc_numgap_failures(ng);
	long first = etc_numgap_first_divergence(ng);
	fprintf(f,
	        "<h2>Numeric gap: intermediate outputs against the reference</h2>\n<p>%zu "
	        "intermediate output%s compared in execution order, %zu fail%s, %zu "
	        "unmatched.</p>\n",
	        n, n == 1 ? "" : "s", nf, nf == 1 ? "s" : "", etc_numgap_unmatched_count(ng));
	/* what the terminal warns of (the files may not be this run's) */
	for (size_t i = 0; i < etc_numgap_warning_count(ng); i++) {
		fputs("<p class=\"warn\">warning: ", f);
		put_esc(f, etc_numgap_warning(ng, i));
		fputs("</p>\n", f);
	}
	if (first >= 0) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, (size_t)first);
		fputs("<div class=\"verdict fail\" id=\"first-divergence\">", f);
		put_first(f, first, r);
		fputs("</div>\n<div>", f);
		put_esc(f, etc_row_status_str(r->status));
		fputs(": ", f);
		put_esc(f, r->reason);
		fputs("</div><div class=\"muted\">debug handles ", f);
		put_handles(f, r->handles, r->handle_count);
		if (*r->delegate_backend) {
			fputs(", ", f);
			put_esc(f, r->delegate_backend);
			fputs(" event", f);
		}
		if (*r->event_name) {
			fputs(", ", f);
			put_esc(f, r->event_name);
		}
		fprintf(f, ", instruction %d; reference ops ", r->instruction_id);
		put_esc(f, r->reference_ops);
		fputs("</div>", f);
		if (*r->layout) {
			fputs("<div class=\"muted\">layout: runtime ", f);
			put_esc(f, r->layout);
			fputs(" (max-abs index in the reference's layout)</div>", f);
		}
		if (r->quant_source) {
			fputs("<div class=\"muted\">dequantized: ", f);
			put_esc(f, r->quant);
			fputs("</div>", f);
		}
		put_trace(f, r, true);
		fputs("\n", f);
	} else if (etc_numgap_gated(ng)) {
		fputs("<div class=\"verdict pass\">No divergence.</div>\n", f);
	} else {
		fputs("<div class=\"verdict none\">No threshold given: nothing gated (only NaN and "
		      "integer mismatches fail; --min-snr and the like gate).</div>\n",
		      f);
	}
	/* the chart (full width) after the verdict, before the ranked list, the
	 * table and the plots' heat maps */
	if (h->numgap_chart.png)
		put_figure(f, &h->numgap_chart, "numgap-chart");
	write_drops(f, ng);
	/* the reference's ops only when they differ from the runtime's somewhere */
	bool refops = false;
	for (size_t i = 0; i < n && !refops; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		refops = strcmp(r->ops, r->reference_ops) != 0;
	}
	if (n && !refops)
		fputs("<p class=\"muted\">The reference ops equal the runtime ops in every "
		      "row.</p>\n",
		      f);
	bool local = false;
	for (size_t i = 0; i < n && !local; i++)
		local = etc_numgap_row_at(ng, i)->has_local;
	const char *cols[14] = {"row", "node", "runtime ops"};
	size_t nc = 3;
	if (refops)
		cols[nc++] = "reference ops";
	static const char *const rest[] = {"shape",  "SNR (dB)", "local SNR", "SNR drop", "MSE",
	                                   "cosine", "max abs",  "source",    "verdict"};
	for (size_t c = 0; c < 9; c++)
		if (c != 2 || local)
			cols[nc++] = rest[c];
	table_head(f, "numgap", cols, nc);
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		bool bad = r->status != ETC_ROW_PASS;
		fputs(bad ? "<tr class=\"bad\">" : "<tr>", f);
		fprintf(f, "<td class=\"n\" data-v=\"%zu\">%zu%s</td>", i, i,
		        (long)i == first ? " &#9664;" : "");
		text_cell(f, *r->nodes ? r->nodes : "-");
		fputs("<td>", f);
		put_row_ops(f, r);
		fputs("</td>", f);
		if (refops)
			text_cell(f, r->reference_ops);
		if (strcmp(r->shape, r->reference_shape)) {
			fputs("<td>", f);
			put_esc(f, r->shape);
			fputs(" vs ", f);
			put_esc(f, r->reference_shape);
			fputs("</td>", f);
		} else {
			text_cell(f, r->shape);
		}
		const etc_metrics *m = &r->metrics;
		if (r->has_metrics)
			num_cell(f, m->snr_db, NULL);
		else
			fputs("<td class=\"n\">-</td>", f);
		if (local) {
			/* the local SNR cell says why it is missing or what stood in */
			if (*r->local_note) {
				fputs("<td class=\"n\" title=\"", f);
				put_esc(f, r->local_note);
				fputs("\"", f);
			} else {
				fputs("<td class=\"n\"", f);
			}
			char v[40];
			etc_fmt_snr_drop_(v, sizeof v, r->local_snr);
			if (r->has_local && !isnan(r->local_snr))
				fprintf(f, " data-v=\"%s\">%s</td>",
				        isinf(r->local_snr) ? "Infinity" : v, v);
			else
				fputs(">-</td>", f);
		}
		if (r->has_metrics) {
			drop_cell(f, r->snr_drop);
			num_cell(f, m->mse, NULL);
			num_cell(f, m->cosine, NULL);
			num_cell(f, m->max_abs, NULL);
		} else {
			for (int c = 0; c < 4; c++)
				fputs("<td class=\"n\">-</td>", f);
		}
		text_cell(f, r->source_line);
		fputs("<td class=\"st\">", f);
		if ((long)i == first)
			fputs("FIRST DIVERGENCE ", f);
		put_esc(f, r->status == ETC_ROW_PASS && !etc_numgap_gated(ng)
		               ? "no gate"
		               : etc_row_status_str(r->status));
		if (r->reason[0]) {
			fputs(": ", f);
			put_esc(f, r->reason);
		} else if (r->has_metrics && m->identical) {
			fputs(" (identical)", f);
		}
		fputs("</td></tr>\n", f);
	}
	table_end(f);
}

/* The text a report writer prints, escaped in a <pre>. */
static void pre_of(FILE *f, int (*fn)(FILE *, const void *, etc_error *), const void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	etc_error err;
	int rc = fn(m, ctx, &err);
	fclose(m);
	if (rc == 0 && len) {
		fputs("<pre>", f);
		etc_html_escape_n_(f, buf, len);
		fputs("</pre>\n", f);
	}
	free(buf);
}

/* One profiling table (tax, memory, modules, delegates) as the terminal
 * shows it, as a sortable HTML table: numbers right-aligned with a data-v
 * to sort by, the units in the headers; a module's depth as indentation. */
static void write_profile_table(FILE *f, const etc_profile *p, unsigned bit)
{
	etc_profile_table t;
	etc_profile_table_build_(&t, p, bit);
	const char *name = etc_profile_table_name(bit);
	fprintf(f, "<h3>%s</h3>\n<p class=\"muted\">",
	        bit == ETC_TABLE_TAX         ? "Framework tax"
	        : bit == ETC_TABLE_MEMORY    ? "Memory allocations"
	        : bit == ETC_TABLE_MODULES   ? "Modules"
	        : bit == ETC_TABLE_DELEGATES ? "Delegates"
	                                     : name);
	put_esc(f, t.title);
	fputs("</p>\n", f);
	if (t.g.failed || !t.g.ncells || !t.nc) {
		fputs("<p class=\"muted\">", f);
		put_esc(f, t.g.failed ? "out of memory" : t.empty);
		fputs("</p>\n", f);
		etc_grid_free_(&t.g);
		return;
	}
	char id[40];
	snprintf(id, sizeof id, "%s", name);
	fprintf(f, "<div class=\"scroll\"><table class=\"sortable\" id=\"%s\"><thead><tr>", id);
	for (size_t c = 0; c < t.nc; c++) {
		fputs(t.right[c] ? "<th class=\"n\">" : "<th>", f);
		put_esc(f, t.hdrp[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead><tbody>\n", f);
	for (size_t i = 0; i < t.g.ncells; i++) {
		size_t c = i % t.nc;
		if (c == 0)
			fputs("<tr>", f);
		double v;
		const char *s = "";
		size_t len = 0;
		if (etc_grid_cell_(&t.g, i, &v, &s, &len)) {
			if (isnan(v))
				fputs("<td class=\"n\">-</td>", f);
			else
				num_cell(f, v, NULL);
		} else if (t.right[c]) {
			/* an integer (run, count, bytes) kept as text: sorted by its value */
			char *end = NULL, buf[64];
			snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), s);
			double x = strtod(buf, &end);
			if (len && end && *end == '\0' && len < 63)
				fprintf(f, "<td class=\"n\" data-v=\"%.17g\">", x);
			else
				fputs("<td class=\"n\">", f);
			etc_html_escape_n_(f, s, len);
			fputs("</td>", f);
		} else {
			/* leading spaces (a module's depth) as indentation */
			size_t sp = 0;
			while (sp < len && s[sp] == ' ')
				sp++;
			if (sp)
				fprintf(f, "<td style=\"padding-left:%zupx\">", 8 + 6 * sp);
			else
				fputs("<td>", f);
			etc_html_escape_n_(f, s + sp, len - sp);
			fputs("</td>", f);
		}
		if (c + 1 == t.nc)
			fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	if (bit == ETC_TABLE_MODULES && etc_profile_modules_mix_units(p))
		fputs("<p class=\"muted\">As find_total_for_module, totals include delegated "
		      "events' times in their own unit: see --delegate-time-scale.</p>\n",
		      f);
	etc_grid_free_(&t.g);
}

/* The Inspector's table as a sortable HTML table (etc_report_table_visit_). */
typedef struct insp_html {
	FILE *f;
	bool body;
} insp_html;

static void insp_header(void *ctx, size_t col, const char *s, size_t n)
{
	insp_html *t = ctx;
	(void)col;
	fputs("<th>", t->f);
	etc_html_escape_n_(t->f, s, n);
	fputs("</th>", t->f);
}

static void insp_row(void *ctx, bool start)
{
	insp_html *t = ctx;
	if (start && !t->body) {
		fputs("</tr></thead><tbody>\n", t->f);
		t->body = true;
	}
	fputs(start ? "<tr>" : "</tr>\n", t->f);
}

static void insp_cell(void *ctx, size_t col, bool is_num, double v, const char *s, size_t n)
{
	insp_html *t = ctx;
	(void)col;
	if (!is_num) {
		fputs("<td>", t->f);
		etc_html_escape_n_(t->f, s, n);
		fputs("</td>", t->f);
		return;
	}
	char buf[ETC_FMT_NUM];
	if (!s) { /* a float: shown as the terminal shows it, format(v, "g") */
		buf[etc_fmt_g(buf, v)] = '\0';
		s = buf;
		n = strlen(buf);
	}
	if (isfinite(v))
		fprintf(t->f, "<td class=\"n\" data-v=\"%.17g\">", v);
	else
		fputs("<td class=\"n\">", t->f);
	etc_html_escape_n_(t->f, s, n);
	fputs("</td>", t->f);
}

static void write_inspector(FILE *f, const etc_inspector *in)
{
	etc_report_options ro;
	etc_report_options_init(&ro);
	insp_html t = {f, false};
	etc_table_visitor v = {&t, insp_header, insp_row, insp_cell};
	fputs("<div class=\"scroll\"><table class=\"sortable\" id=\"inspector\"><thead><tr>", f);
	int rc = etc_report_table_visit_(in, &ro, &v);
	if (!t.body)
		fputs("</tr></thead><tbody>\n", f);
	fputs("</tbody></table></div>\n", f);
	if (rc < 0)
		fputs("<p class=\"muted\">out of memory: the table is incomplete</p>\n", f);
}

static int print_perfdiff(FILE *f, const void *ctx, etc_error *err)
{
	return etc_report_perfdiff(f, ctx, 0, err);
}

/* The performance diff as a sortable table, failing rows highlighted, every
 * time with its unit in the header; the text form stays collapsed below. */
static void write_perfdiff(FILE *f, const etc_perfdiff *d)
{
	const char *unit = etc_time_scale_name(
	    etc_inspector_options_get(etc_perfdiff_current(d))->target_time_scale);
	size_t n = etc_perfdiff_row_count(d), fails = etc_perfdiff_failures(d);
	double gate = etc_perfdiff_options_get(d)->max_regression;
	fputs("<h2>Performance diff</h2>\n<p>", f);
	if (isnan(gate))
		fprintf(f, "%zu events compared; no gate (--max-regression).", n);
	else
		fprintf(f, "%zu of %zu events regress more than %.6g %%.", fails, n, gate);
	fputs("</p>\n", f);
	char c2[48], c3[48], c4[48];
	snprintf(c2, sizeof c2, "baseline p50 (%s)", unit);
	snprintf(c3, sizeof c3, "current p50 (%s)", unit);
	snprintf(c4, sizeof c4, "change (%s)", unit);
	const char *const cols[] = {"block", "event", c2, c3, c4, "change (%)", "gate"};
	table_head(f, "perfdiff", cols, 7);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
			if (r->failed != (pass == 0))
				continue;
			fputs(r->failed ? "<tr class=\"bad\">" : "<tr>", f);
			fputs("<td>", f);
			etc_html_escape_n_(f, r->block.ptr, r->block.len);
			if (etc_inspector_block_name_shared(etc_perfdiff_current(d), r->cur_block))
				fprintf(f, "#%zu", r->cur_block);
			if (r->fallback) {
				const etc_inspector *b = etc_perfdiff_baseline(d);
				etc_str bn = etc_inspector_block(b, r->base_block)->name;
				fputs(" (baseline ", f);
				etc_html_escape_n_(f, bn.ptr, bn.len);
				if (etc_inspector_block_name_shared(b, r->base_block))
					fprintf(f, "#%zu", r->base_block);
				fputs(")", f);
			}
			fputs("</td><td>", f);
			etc_html_escape_n_(f, r->name.ptr, r->name.len);
			fputs("</td>", f);
			num_cell(f, r->base_p50, NULL);
			num_cell(f, r->cur_p50, NULL);
			num_cell(f, r->change, NULL);
			num_cell(f, r->change_percent, NULL);
			fprintf(f, "<td class=\"st\">%s</td></tr>\n",
			        r->failed      ? "FAIL"
			        : r->gated     ? "ok"
			        : r->below_min ? "below min"
			                       : "-");
		}
	table_end(f);
	/* events without a counterpart: the gate did not check them */
	size_t nu = etc_perfdiff_unmatched_count(d);
	if (nu) {
		fprintf(f,
		        "<p class=\"warn\">%zu event%s not compared: only in the current ETDump "
		        "(%zu) or only in the baseline (%zu); the gate did not check %s.</p>\n",
		        nu, nu == 1 ? "" : "s", etc_perfdiff_current_only(d),
		        etc_perfdiff_baseline_only(d), nu == 1 ? "it" : "them");
		char p2[48];
		snprintf(p2, sizeof p2, "p50 (%s)", unit);
		const char *const ucols[] = {"only in", "block", "event", "instr", p2, "why"};
		table_head(f, "perfdiff_unmatched", ucols, 6);
		for (size_t i = 0; i < nu; i++) {
			const etc_perfdiff_unmatched *u = etc_perfdiff_unmatched_at(d, i);
			const etc_inspector *in =
			    u->in_baseline ? etc_perfdiff_baseline(d) : etc_perfdiff_current(d);
			fprintf(f, "<tr><td>%s</td><td>", u->in_baseline ? "baseline" : "current");
			etc_html_escape_n_(f, u->block_name.ptr, u->block_name.len);
			if (etc_inspector_block_name_shared(in, u->block))
				fprintf(f, "#%zu", u->block);
			int32_t input = etc_inspector_block(in, u->block)->bundled_input_index;
			if (input >= 0)
				fprintf(f, " (input %d)", (int)input);
			fputs("</td><td>", f);
			etc_html_escape_n_(f, u->name.ptr, u->name.len);
			fprintf(f, "</td><td class=\"n\">%d</td>", (int)u->instruction_id);
			num_cell(f, u->p50, NULL);
			fprintf(f, "<td>%s</td></tr>\n",
			        u->whole_block ? (u->in_baseline ? "block not in the current ETDump"
			                                         : "no baseline block")
			        : u->in_baseline ? "event not in the current block"
			                         : "no baseline event");
		}
		table_end(f);
	}
	fputs("<details><summary>as text</summary>\n", f);
	pre_of(f, print_perfdiff, d);
	fputs("</details>\n", f);
}

static void write_profile(FILE *f, const etc_html_report *h)
{
	const etc_profile *p = h->profile;
	const etc_inspector *in = etc_profile_inspector(p);
	const char *unit = etc_time_scale_name(etc_inspector_options_get(in)->target_time_scale);
	fputs("<h2>Profile</h2>\n", f);
	size_t n = etc_profile_op_count(p);
	if (n) {
		fprintf(f, "<h3>%s</h3>\n", etc_profile_ops_by_type(p) ? "Op types" : "Operators");
		char c2[48], c3[48], c4[48];
		snprintf(c2, sizeof c2, "total (%s)", unit);
		snprintf(c3, sizeof c3, "mean (%s)", unit);
		snprintf(c4, sizeof c4, "p50 (%s)", unit);
		const char *const cols[] = {"name", "count", c2, c3, c4, "share of execute"};
		table_head(f, "ops", cols, 6);
		for (size_t i = 0; i < n; i++) {
			const etc_op_row *r = etc_profile_op(p, i);
			fputs("<tr>", f);
			text_cell(f, r->name);
			fprintf(f, "<td class=\"n\" data-v=\"%llu\">%llu</td>",
			        (unsigned long long)r->count, (unsigned long long)r->count);
			num_cell(f, r->total, NULL);
			num_cell(f, r->mean, NULL);
			num_cell(f, r->p50, NULL);
			char share[48];
			snprintf(share, sizeof share, "%.1f %%", 100 * r->share);
			fprintf(f, "<td class=\"n\" data-v=\"%.17g\">%s</td></tr>\n",
			        isfinite(r->share) ? r->share : 0.0,
			        isfinite(r->share) ? share : "");
		}
		table_end(f);
	}
	unsigned mask = h->profile_mask & ~(unsigned)(ETC_TABLE_PROFILE | ETC_TABLE_OPS);
	for (unsigned bit = ETC_TABLE_TAX; bit <= ETC_TABLE_DELEGATES; bit <<= 1)
		if (mask & bit)
			write_profile_table(f, p, bit);
	fputs("<details><summary>the Inspector's table</summary>\n", f);
	write_inspector(f, in);
	fputs("</details>\n", f);
}

static int write_all(FILE *f, const etc_html_report *h)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	      f);
	put_esc(f, h->title);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>", css);
	put_esc(f, h->title);
	fputs("</h1>\n", f);
	if (h->has_verdict) {
		fprintf(f, "<div class=\"verdict %s\" id=\"verdict\">",
		        h->failed    ? "fail"
		        : h->ungated ? "none"
		                     : "pass");
		put_esc(f, h->verdict);
		fputs("</div>\n", f);
	}
	if (h->command) {
		fputs("<p>Command: <code id=\"command\">", f);
		put_esc(f, h->command);
		fprintf(f, "</code><br><span class=\"muted\">etcompare %s</span></p>\n",
		        ETC_VERSION_STRING);
	}
	write_inputs(f, h);
	if (h->acc)
		write_accuracy(f, h);
	if (h->taps && h->taps_insp)
		etc_taps_html_(f, h->taps, h->taps_insp);
	if (h->ng)
		write_numgap(f, h);
	if (h->dist)
		etc_band_chart_html_(f, h->dist);
	if (h->profile)
		write_profile(f, h);
	if (h->diff)
		write_perfdiff(f, h->diff);
	if (h->nimages || h->nnotes) {
		fputs("<h2>Plots</h2>\n", f);
		for (size_t i = 0; i < h->nnotes; i++) {
			fputs("<p class=\"muted\">", f);
			put_esc(f, h->notes[i]);
			fputs("</p>\n", f);
		}
		fputs("<div class=\"plots\">\n", f);
		for (size_t i = 0; i < h->nimages; i++)
			put_figure(f, &h->images[i], NULL);
		fputs("</div>\n", f);
	}
	fprintf(f, "<script>%s</script>\n</body></html>\n", script);
	return ferror(f) ? -1 : 0;
}

int etc_html_report_write(const etc_html_report *h, const char *path, etc_error *err)
{
	etc_output *out;
	ETC_TRY(etc_output_open(&out, path, err));
	if (write_all(etc_output_stream(out), h) < 0) {
		etc_output_abort(out);
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot write the HTML report");
	}
	return etc_output_commit(out, err);
}
