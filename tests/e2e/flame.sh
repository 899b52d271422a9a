#!/bin/sh
. "$(dirname "$0")/lib.sh"
skip "not yet"
