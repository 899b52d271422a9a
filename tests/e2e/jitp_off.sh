#!/usr/bin/env bash
# ljlog e2e: jitp.sh with the JIT off (that script says what is compared);
# a test of its own so that make -j runs it beside the JIT-on half.
. "$(dirname "$0")/jitp.sh"
