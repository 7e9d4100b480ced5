#!/bin/sh
# bench/bench_python.sh - the Python package's two performance figures
# (issue 16), as whole processes under Debian's /usr/bin/python3:
#
#  1. Inspector(...) + print_data_tabular() on 10 runs x 1,000 events with
#     1k-float debug tensors (bench/gen_etdump), interpreter start included,
#     against the upstream Inspector's 3.7 s on the same machine (target:
#     50x faster, i.e. <= 74 ms).
#  2. python3 -m etcompare.batch over 1,000 small ETDumps (2 runs x 60
#     events, 64-float tensors, each with its debug buffer): --workers 2
#     against --workers 1 (target: >= 1.7x).
#
# Each timing is the median and the minimum of REPEAT runs (default 7); the load average is
# printed before and after, since the machine may be shared.
#
# Usage: bench/bench_python.sh [BUILD_DIR]   (default: build)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
py=/usr/bin/python3
repeat=${REPEAT:-7}
gen=$build/bench/gen_etdump
[ -x "$gen" ] || { echo "bench_python: no $gen (build with ETC_BUILD_BENCH=ON)" >&2; exit 2; }
[ -e "$build/libetcompare.so" ] || { echo "bench_python: no $build/libetcompare.so" >&2; exit 2; }
export ETCOMPARE_LIBRARY="$build/libetcompare.so"
export PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "median min" wall time in seconds of "$@" run $repeat times (output discarded)
median() {
	"$py" -c 'import subprocess, sys, time
ts = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append(time.perf_counter() - t)
ts.sort()
print(ts[(len(ts) - 1) // 2], ts[0])' "$repeat" "$@"
}

echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# "median1 median2 ratio": two commands (separated by ---) run alternately
# $repeat times, so that a change of the machine's load hits both; ratio is
# the median over the pairs of time1 / time2
pair() {
	"$py" -c 'import subprocess, sys, time
args = sys.argv[2:]
cut = args.index("---")
cmds = (args[:cut], args[cut + 1:])
t = ([], [])
for _ in range(int(sys.argv[1])):
    for k in (0, 1):
        s = time.perf_counter()
        subprocess.run(cmds[k], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t[k].append(time.perf_counter() - s)
ratios = sorted(a / b for a, b in zip(*t))
med = lambda v: sorted(v)[(len(v) - 1) // 2]
print(med(t[0]), med(t[1]), med(ratios))' "$repeat" "$@"
}

# --- 1. Inspector + print_data_tabular --------------------------------------------------------
"$gen" --runs 10 --events 1000 --numel 1000 --seed 16 \
	--etdump "$tmp/big.etdp" --debug-buffer "$tmp/big.bin" >/dev/null 2>&1
script='import sys
from etcompare import Inspector
Inspector(etdump_path=sys.argv[1], debug_buffer_path=sys.argv[2]).print_data_tabular()'
lines=$("$py" -c "$script" "$tmp/big.etdp" "$tmp/big.bin" | wc -l)
t_py=$(median "$py" -c "$script" "$tmp/big.etdp" "$tmp/big.bin")
t_cli=$(median "$build/etcompare" --etdump "$tmp/big.etdp" --debug_buffer "$tmp/big.bin")
t_start=$(median "$py" -c "pass")
"$py" - "$t_py" "$t_cli" "$t_start" "$lines" "$(stat -c %s "$tmp/big.etdp")" \
	"$(stat -c %s "$tmp/big.bin")" <<'PY'
import sys
(py, py_min), (cli, cli_min), (st, st_min) = (map(float, x.split()) for x in sys.argv[1:4])
lines, etdp, dbg = (int(x) for x in sys.argv[4:7])
print(f"1. Inspector + print_data_tabular, 10 runs x 1,000 events, 1k-float tensors "
      f"({etdp / 1e6:.1f} MB ETDump, {dbg / 1e6:.1f} MB debug buffer, {lines} table lines),")
print(f"   whole python3 process, median (min): {py:.3f} s ({py_min:.3f} s); interpreter "
      f"start alone {st:.3f} s ({st_min:.3f} s); the CLI {cli:.3f} s ({cli_min:.3f} s)")
print(f"   against the upstream Inspector's 3.7 s: {3.7 / py:.0f}x ({3.7 / py_min:.0f}x) "
      f"faster (target 50x: {'PASS' if 3.7 / py >= 50 else 'FAIL'} on the median)")
PY

# --- 2. batch, workers 2 vs 1 -----------------------------------------------------------------
# two sizes of "small": 2 runs x 60 events (a few KB; the batch's fixed cost of
# about 48 ms per invocation - interpreter, imports, pool - weighs most) and
# 10 runs x 200 events (about 150 KB, a small model's run on a device farm)
farm() { # farm DIR RUNS EVENTS
	mkdir "$1"
	"$py" - "$gen" "$1" "$2" "$3" <<'PY'
import subprocess, sys
gen, farm, runs, events = sys.argv[1:5]
for i in range(1000):
    subprocess.run([gen, "--runs", runs, "--events", events, "--numel", "64", "--seed", str(i),
                    "--etdump", f"{farm}/run{i:04d}.etdp", "--debug-buffer",
                    f"{farm}/run{i:04d}.bin"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
PY
}
farm "$tmp/farm" 2 60
b=$(pair "$py" -m etcompare.batch -o "$tmp/w1.jsonl" --workers 1 "$tmp/farm" --- \
	"$py" -m etcompare.batch -o "$tmp/w2.jsonl" --workers 2 "$tmp/farm")
ok=$(grep -c '"status": "ok"' "$tmp/w2.jsonl" || true)
rm -rf "$tmp/farm"
farm "$tmp/farm" 10 200
b2=$(pair "$py" -m etcompare.batch -o "$tmp/w1.jsonl" --workers 1 "$tmp/farm" --- \
	"$py" -m etcompare.batch -o "$tmp/w2.jsonl" --workers 2 "$tmp/farm")
ok2=$(grep -c '"status": "ok"' "$tmp/w2.jsonl" || true)
# what 2 processes can gain on this machine right now: a pure CPU loop, same pool
cat >"$tmp/burn.py" <<'PY'
import concurrent.futures, sys
def burn(n):
    s = 0
    for i in range(n):
        s += i
    return s
with concurrent.futures.ProcessPoolExecutor(int(sys.argv[1])) as ex:
    list(ex.map(burn, [2_000_000] * 8))
PY
c=$(pair "$py" "$tmp/burn.py" 1 --- "$py" "$tmp/burn.py" 2)
"$py" - "$b" "$ok" "$c" "$b2" "$ok2" <<'PY'
import sys
c1, c2, cr = map(float, sys.argv[3].split())
for what, times, ok in (("2 runs x 60 events each", sys.argv[1], sys.argv[2]),
                        ("10 runs x 200 events each", sys.argv[4], sys.argv[5])):
    t1, t2, r = map(float, times.split())
    print(f"2. batch of 1,000 small ETDumps, {what} ({ok} ok lines), run alternately, "
          f"medians: --workers 1 {t1:.3f} s, --workers 2 {t2:.3f} s; speed-up (median of the "
          f"pairs) {r:.2f}x (target 1.7x: {'PASS' if r >= 1.7 else 'FAIL'})")
print(f"   calibration, a pure CPU loop in the same pool, alternately: 1 worker {c1:.3f} s, "
      f"2 workers {c2:.3f} s -> {cr:.2f}x (what 2 processes could gain meanwhile)")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
