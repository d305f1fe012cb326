#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Generate ./configure from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
autoreconf -fi
