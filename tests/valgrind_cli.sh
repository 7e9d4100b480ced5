#!/bin/sh
# A sample of CLI invocations under valgrind (ctest label `valgrind`):
# the bundled example, every report and output file, an ETRecord with a
# comparison, JUnit and plots, reference outputs from .npz and torch.save,
# and bad inputs (exit 3). $ETC_VALGRIND is the valgrind command line
# (exit 99 on any error or leak); each run must end with its usual status.
set -u
data="$ETC_SRC/tests/data"
work=$(mktemp -d "${ETC_WORK:-/tmp}/valgrind-XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect() {
	want=$1
	shift
	# shellcheck disable=SC2086
	$ETC_VALGRIND "$ETCOMPARE" "$@" >"$work/out" 2>"$work/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL (exit $got, want $want): etcompare $*"
		tail -n 30 "$work/err"
		failures=$((failures + 1))
	else
		echo "ok   (exit $got): etcompare $*"
	fi
}
dump="--etdump $data/runs5_ops12.etdp --debug_buffer $data/runs5_ops12.bin"
expect 0 --example --plot "$work/plots"
expect 0 $dump --show-outputs --tsv "$work/t.tsv" --csv "$work/t.csv" --json "$work/t.json"
expect 0 $dump --etrecord "$data/example_refs.etrecord" --graph --show-references --module conv1
expect 1 $dump --etrecord "$data/example_refs.etrecord" --min-snr 40 --junit "$work/j.xml" \
	--json "$work/a.json" --plot "$work/plots"
expect 0 --etdump "$data/misaligned.etdp" --debug_buffer "$data/misaligned_debug.bin" --show-outputs
expect 0 --etdump "$data/tutorial.etdp" --etrecord "$data/etrecord_2023.bin" --json "$work/l.json"
# reference sets of the wrong size: a clear error
expect 3 $dump --reference-outputs "$data/npz/arrays_v1.npz" --compare
expect 3 $dump --reference-outputs "$data/torchsave/list_of_tensors.pt" --compare
# bad inputs
head -c 700 "$data/runs5_ops12.etdp" >"$work/cut.etdp"
expect 3 --etdump "$work/cut.etdp"
head -c 5000 "$data/example_refs.etrecord" >"$work/cut.etrecord"
expect 3 $dump --etrecord "$work/cut.etrecord"
expect 3 --etdump "$data/runs5_ops12.bin"
expect 2 --etdump
[ "$failures" -eq 0 ]
