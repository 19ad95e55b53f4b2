#!/usr/bin/env bash
# Issue #7's check on the lent GPU machine, in one device-tool call (its time is scarce: a call that
# finds no warm machine spends minutes starting one). Runs from the repository root there, with
# .device-carry/ from bench/device/pack.sh carried, and writes everything under $OUT:
#   log.txt          every step's output, in order
#   hw.json          kvbench hw --json: the GPU as detection sees it
#   gpu-bw.json      bench/gpu-copy-bandwidth.ts: H2D/D2H of the tier next to torch's pinned copies
#   suite-report.txt kvbench report of the suites below (median/P95, tier comparison)
#   trials.json      kvbench export of every trial: options, metrics, hardware snapshots
#   run-gpu-cpu-storage.json  one kvbench run's whole results file (kvbench.tiers.gpu in full)
# Steps: the smoke suite's nine scenarios (structure, 1 trial each), then the quick profile's GPU
# scenarios (gpu-only, gpu-cpu-storage) with this machine's real sizes. Each step has its own time
# limit so that a hung step still leaves the others' output.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder the results go to}"
carry=.device-carry
work=${KVBENCH_CHECK_DIR:-/tmp/kvbench-gpu-check}
rm -rf "$work" && mkdir -p "$work/cache"
exec > >(tee "$OUT/log.txt") 2>&1

step() { echo; echo "=== $* ($(date +%T))"; }
run_limited() { local limit=$1; shift; timeout --kill-after=10 "$limit" "$@"; local rc=$?; echo "--- exit $rc" >&2; return $rc; }

step "unpack Node 24 and the runtime packages"
[ -f "$carry/node.xz" ] && [ -f "$carry/node_modules.tar.xz" ] || { echo "no $carry: run bench/device/pack.sh and carry it"; exit 1; }
xz -dc "$carry/node.xz" >"$work/node" && chmod +x "$work/node"
if [ ! -d node_modules ]; then xz -dc "$carry/node_modules.tar.xz" | tar -xf -; fi
node="$work/node"
kvbench() { "$node" bin/kvbench.js "$@"; }
export KVBENCH_DB="$work/kvbench.sqlite"
"$node" --version
uname -a
nvidia-smi -L 2>&1 || echo "nvidia-smi: not available"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1
df -h "$work" | tail -1
[ -r /proc/diskstats ] || echo "no /proc/diskstats: device bytes cannot be counted here (results will say so)"

step "hardware detection"
run_limited 60 "$node" bin/kvbench.js hw --cache-dir "$work/cache" --json >"$OUT/hw.json"
"$node" -e 'const h = require(process.argv[1]); console.log(JSON.stringify({ gpus: h.gpus, cuda: h.cuda, warnings: h.warnings }, null, 1).slice(0, 3000))' "$OUT/hw.json"

step "host<->device copy bandwidth: kvbench tier vs torch pinned copies"
run_limited 240 "$node" bench/gpu-copy-bandwidth.ts --entry-mib 256 --total-gib 8 --budget-gib 16 --chunk-mib 16,64 --reps 3 --json "$OUT/gpu-bw.json"

step "smoke suite: the nine scenarios, one trial each"
run_limited 180 "$node" bin/kvbench.js suite --profile smoke --trials 1 --cache-dir "$work/cache" --label "gpu-check smoke"

step "quick suite: GPU only and GPU + CPU + storage at this machine's sizes"
run_limited 240 "$node" bin/kvbench.js suite --profile quick --trials 1 --warm-up 5 --scenarios gpu-only,gpu-cpu-storage \
  --cache-dir "$work/cache" --label "gpu-check quick"

step "report and export"
run_limited 60 "$node" bin/kvbench.js report --all >"$OUT/suite-report.txt"
run_limited 60 "$node" bin/kvbench.js export --out "$OUT/trials.json"
cat "$OUT/suite-report.txt"
"$node" -e '
  const trials = require(process.argv[1]).trials ?? [];
  const gbs = (x) => (x == null ? "—" : (x / 1e9).toFixed(2) + " GB/s");
  for (const t of trials) {
    const m = t.metrics;
    console.log(`${t.scenarioId} #${t.trialIndex + 1}: ${t.status}; GPU bytes written ${m.gpu_write_bytes ?? "—"}, read ${m.gpu_read_bytes ?? "—"}; ` +
      `copy H2D ${gbs(m.gpu_h2d_copy_bytes_per_s)}, D2H ${gbs(m.gpu_d2h_copy_bytes_per_s)}`);
  }' "$OUT/trials.json" 2>&1 | head -40

step "one GPU + CPU + storage run with its whole results file (the GPU tier's model, driver, staging, copies)"
run_limited 120 "$node" bin/kvbench.js run --model llama3.1-8b --num-users 32 --duration 30 --warm-up 5 --gpu-mem-gb 16 --cpu-mem-gb 16 \
  --storage-capacity-gb 16 --cache-dir "$work/cache" --seed 7 --output "$OUT/run-gpu-cpu-storage.json" | tail -60
rm -rf "$work"
