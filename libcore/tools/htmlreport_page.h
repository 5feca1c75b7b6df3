/* SPDX-License-Identifier: MIT */
/* palloc-report's page: the document and the inlined libraries as HTML. */
#ifndef PALLOC_HTMLREPORT_PAGE_H
#define PALLOC_HTMLREPORT_PAGE_H

#include "common.h"

#include <jansson.h>
#include <stdio.h>

/*
 * Write one self-contained HTML page to FP: the styles, the libraries and
 * the page's script of htmlreport_assets.h inlined (nothing is fetched),
 * the libraries' licences, and DOC (htmlreport_model.h) inside
 * <script type="application/json" id="palloc-data">. In the data every
 * '<', '>' and '&' is written as a \u escape, so no string of the
 * profiles (a symbol, a path) can end the script or open a tag. TITLE is
 * escaped for HTML. Returns 0, or -1 with msg_set() (ENOMEM, or a write
 * error with errno's reason).
 */
int htmlreport_write(FILE *fp, const json_t *doc, const char *title);

/*
 * Write s to fp with '<', '>' and '&' as JSON \u escapes (s is JSON text:
 * they occur in strings only, where the escape means the same). Returns 0
 * or -1 (errno set) on a write error.
 */
int htmlreport_put_json(FILE *fp, const char *s);

#endif /* PALLOC_HTMLREPORT_PAGE_H */
