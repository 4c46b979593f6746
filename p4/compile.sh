#!/bin/sh
# compile.sh OUTDIR: compile sliceportal.p4 for BMv2 (v1model) into OUTDIR/sliceportal.json and
# check that p4c emits exactly the committed P4Info (check-p4info). The one compile line of the
# project: `make compile` runs it with p4c-bm2-ss from PATH (P4C overrides), `make
# compile-docker` and docker-compose.yml's `p4c` service inside the p4lang/p4c image.
set -eu

if [ $# -ne 1 ]; then
    echo "usage: compile.sh OUTDIR" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$here"
"${P4C:-p4c-bm2-ss}" --std p4-16 --arch v1model -o "$out/sliceportal.json" \
    --p4runtime-files "$tmp/sliceportal.p4info.txtpb" sliceportal.p4
sh "$here/check-p4info" build/sliceportal.p4info.txtpb "$tmp/sliceportal.p4info.txtpb"
echo "compiled $out/sliceportal.json"
