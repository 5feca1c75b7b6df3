#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the build system from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4
LIBTOOLIZE="libtoolize --quiet" autoreconf -fi
