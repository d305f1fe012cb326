#!/bin/sh
# Generate ./configure from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
autoreconf -fi
