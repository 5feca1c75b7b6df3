#!/bin/sh
. "$top_srcdir/t/lib.sh"
skip_all todo
