/* SPDX-License-Identifier: MIT */
/* palloc-report's page: the document and the inlined libraries as HTML. */
#include "common.h"
#include "htmlreport_page.h"
#include "htmlreport_assets.h"
#include "msg.h"

/* A character written as another text. */
struct escape {
	char c;
	const char *with;
};

/* JSON text inside <script>: only strings hold these, where a \u escape
 * means the same. */
static const struct escape json_escapes[] = {
	{'<', "\\u003c"},
	{'>', "\\u003e"},
	{'&', "\\u0026"},
};

/* Text in HTML, in an element or an attribute's double quotes. */
static const struct escape html_escapes[] = {
	{'<', "&lt;"},
	{'>', "&gt;"},
	{'&', "&amp;"},
	{'"', "&quot;"},
};

/* Write s to fp with each character of the N escapes E replaced. Returns
 * 0 or -1 (errno set) on a write error. */
static int put_escaped(FILE *fp, const char *s, const struct escape *e,
		       size_t n)
{
	for (; *s; s++) {
		const char *esc = NULL;

		for (size_t i = 0; i < n && !esc; i++)
			if (*s == e[i].c)
				esc = e[i].with;
		if (esc ? fputs(esc, fp) == EOF : putc(*s, fp) == EOF)
			return -1;
	}
	return 0;
}

int htmlreport_put_json(FILE *fp, const char *s)
{
	return put_escaped(fp, s, json_escapes, ARRAY_SIZE(json_escapes));
}

static void put_html(FILE *fp, const char *s)
{
	/* A write error shows in ferror(fp), which the caller checks. */
	(void)put_escaped(fp, s, html_escapes, ARRAY_SIZE(html_escapes));
}

int htmlreport_write(FILE *fp, const json_t *doc, const char *title)
{
	char *data = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (!data)
		return msg_set_errno(ENOMEM, "report");
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\""
	      "default-src 'none'; script-src 'unsafe-inline'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n"
	      "<title>",
	      fp);
	put_html(fp, title);
	fputs("</title>\n<style>\n", fp);
	fputs(htmlreport_css, fp);
	fputs("</style>\n</head>\n<body>\n<header><h1>", fp);
	put_html(fp, title);
	fputs("</h1></header>\n<main id=\"app\"><p id=\"noscript\">"
	      "This report needs JavaScript.</p></main>\n"
	      "<script type=\"application/json\" id=\"palloc-data\">",
	      fp);
	if (htmlreport_put_json(fp, data) < 0) {
		free(data);
		return msg_set_errno(errno, "write error");
	}
	free(data);
	fputs("</script>\n<script>\n", fp);
	fputs(htmlreport_libs_js, fp);
	fputs("\n</script>\n<script>\n", fp);
	fputs(htmlreport_page_js, fp);
	fputs("\n</script>\n<footer><details><summary>Made by palloc-report "
	      "with ",
	      fp);
	put_html(fp, htmlreport_versions);
	fputs(" (licences)</summary>\n<pre id=\"licenses\">", fp);
	fputs(htmlreport_licenses, fp);
	fputs("</pre></details></footer>\n</body>\n</html>\n", fp);
	if (fflush(fp) != 0 || ferror(fp))
		return msg_set_errno(errno ? errno : EIO, "write error");
	return 0;
}
