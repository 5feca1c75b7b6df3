/* SPDX-License-Identifier: MIT */
/* Empty stand-ins of htmlreport_assets.c (generated) for timeline_fuzz. */
#include "common.h"
#include "htmlreport_assets.h"

const char htmlreport_css[] = "";
const char htmlreport_libs_js[] = "";
const char htmlreport_page_js[] = "";
const char htmlreport_licenses[] = "";
const char htmlreport_versions[] = "";
