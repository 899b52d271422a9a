#!/bin/sh
# The README's first command: set up, build, profile the bundled example and
# print its report.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
cd "$top"
out=${LJLOG_EXAMPLE_OUT:-"$top/example.ljlog"}
build/ljlog record -o "$out" -- luajit examples/demo.lua
build/ljlog report "$out"
