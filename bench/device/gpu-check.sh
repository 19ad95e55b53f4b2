#!/usr/bin/env bash
# Issue #7's check on the lent GPU machine, in one device-tool call (its time is scarce: a call that
# finds no warm machine spends minutes starting one). Runs from the repository root there, with
# .device-carry/ from bench/device/pack.sh carried, and writes everything under $OUT (the tool
# brings back at most 8 files; these are 8):
#   log.txt          every step's output, in order, ending with a summary: each step's exit code
#                    and time, the lines a closing note needs (the GPU, driver and CUDA versions,
#                    each run's and trial's status and copy bandwidth) and always one
#                    "CRITERION gpu-copy:" line (the bench's, or NOT MEASURED with the reason
#                    when the bench gave none: no driver, skipped, killed at its limit)
#   nvidia-smi.csv   the GPU's PCIe link, compute and persistence mode, memory in use: one row at idle,
#                    one 10 s into the bench and one right after it (a link trains down at idle, so
#                    the later rows are the link under load); bench/device/nvidia-smi-watch.sh
#   hw.json          kvbench hw --json: the GPU as detection sees it
#   gpu-bw.json      bench/gpu-copy-bandwidth.ts: H2D/D2H of the tier next to torch's pinned copies,
#                    with the ≥ 90 % verdict per direction and chunk size
#   run-gpu-only.json, run-gpu-cpu-storage.json
#                    two kvbench runs' whole results files (kvbench.tiers.gpu in full); log.txt also
#                    has a short run with --verify (bytes read back checked through GPU → CPU →
#                    storage demotions) and the exit paths (bench/device/gpu-exit-paths.sh: Ctrl-C,
#                    SIGTERM, SIGKILL, a suite trial's engine child, with the GPU memory in use before
#                    each signal and after the exit; and gpu-exit-hook.ts: the exit hook of a tier never
#                    closed, on process.exit() and an uncaught exception, asked of the driver itself)
#   suite-report.txt, trials.json
#                    the quick profile's gpu-only and gpu-cpu-storage at this machine's sizes:
#                    kvbench report and kvbench export
# The steps run most important first, each under its own time limit, and all of them under one
# deadline (KVBENCH_CHECK_DEADLINE_S, 560 s from the start, inside the call's 590 s): a step's
# limit is cut to the time left, and a step with less than 20 s left is skipped and says so, so
# a slow step costs the ones after it, never the output of the ones before.
# If the NVIDIA driver cannot be loaded or initialised (the preflight right after unpacking), the
# check stops at once with the reason in log.txt instead of spending minutes on GPU-less runs.
# Nothing but those 8 files is ever written under $OUT: every program writes into the work
# directory, and its output is copied to $OUT when its step ends (a step killed mid-write leaves
# no temporary file there).
set -uo pipefail
start=$SECONDS
deadline=${KVBENCH_CHECK_DEADLINE_S:-560}
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder the results go to}"
mkdir -p "$OUT"
repo=$PWD
carry=$repo/.device-carry
# On the machine's disk, in the working copy (its tmp/ is git-ignored, so nothing left there ever
# travels with a call): /tmp may be memory-backed, and the storage tier's cache directory must be
# a real disk for its numbers to mean anything.
work=${KVBENCH_CHECK_DIR:-$repo/tmp/gpu-check}
rm -rf "$work" && mkdir -p "$work/cache" "$work/out" || { echo "cannot create $work" >&2; exit 1; }
# Programs write their results into $work/out (their own temporary files stay there); keep copies
# them to $OUT, complete, once written.
keep() {
  local f
  for f in "$work"/out/*; do
    [ -f "$f" ] && cp -f "$f" "$OUT/"
  done
  return 0
}

exec > >(tee "$OUT/log.txt") 2>&1
tee_pid=$!
summary=()
# One line each for the closing note, printed together in the summary.
note_lines=()
# Why there is no verdict, for when the bench printed none.
no_verdict="the copy-bandwidth bench did not run"
failed=0
finish() {
  local rc=$?
  [ "$rc" -eq 0 ] && rc=$failed
  echo
  echo "=== summary ($((SECONDS - start)) s of the ${deadline} s deadline)"
  local line
  for line in "${summary[@]}"; do echo "  $line"; done
  if [ "${#note_lines[@]}" -gt 0 ]; then
    echo "  for the closing note:"
    for line in "${note_lines[@]}"; do echo "    $line"; done
  fi
  if [ -f "$work/bw.txt" ] && grep -aq '^CRITERION ' "$work/bw.txt"; then
    grep -a '^CRITERION ' "$work/bw.txt" | sed 's/^/  /'
  else
    echo "  CRITERION gpu-copy: NOT MEASURED; $no_verdict"
  fi
  keep
  echo "  files in \$OUT (the tool brings back 8 at most):"
  (cd "$OUT" && ls -l | tail -n +2 | sed 's/^/    /')
  rm -rf "$work"
  # log.txt is complete only once tee has read everything: close our end and wait for it.
  exec >&- 2>&-
  wait "$tee_pid" 2>/dev/null
  exit "$rc"
}
trap finish EXIT

left() { echo $((deadline - (SECONDS - start))); }
step() { echo; echo "=== $* ($(date +%T), $((SECONDS - start)) s in, $(left) s left)"; }

# run_step [-o FILE] [-t FILE] NAME LIMIT_S RESERVE_S CMD...: runs CMD under min(LIMIT_S, time
# left − RESERVE_S − 10 s for the kill); -o sends its stdout to FILE, -t copies it to FILE too.
run_step() {
  local to='' copy=''
  while [ "${1:0:1}" = - ]; do
    case $1 in -o) to=$2 ;; -t) copy=$2 ;; esac
    shift 2
  done
  local name=$1 limit=$2 reserve=$3
  shift 3
  local avail=$(($(left) - reserve - 10))
  step "$name"
  if [ "$avail" -lt 20 ]; then
    echo "--- skipped: $(left) s left of the ${deadline} s deadline"
    summary+=("$name: SKIPPED (deadline)")
    return 0
  fi
  if [ "$limit" -gt "$avail" ]; then
    echo "(its ${limit} s limit cut to ${avail} s by the deadline)"
    limit=$avail
  fi
  local t0=$SECONDS rc
  if [ -n "$to" ]; then
    timeout --kill-after=10 "$limit" "$@" >"$to"
    rc=$?
  elif [ -n "$copy" ]; then
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$copy"
    rc=${PIPESTATUS[0]}
  else
    timeout --kill-after=10 "$limit" "$@"
    rc=$?
  fi
  local note=''
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && note=', TIMED OUT'
  keep
  echo "--- exit $rc after $((SECONDS - t0)) s$note"
  summary+=("$name: exit $rc in $((SECONDS - t0)) s$note")
  [ "$rc" -eq 0 ] || failed=1
  return "$rc"
}

# note LINE...: prints each line and keeps it for the summary's "for the closing note".
note() {
  local line
  while IFS= read -r line; do
    echo "$line"
    note_lines+=("$line")
  done
}

# Where the driver library is, before anything else (a shell search: no Node needed yet). The
# preflight after unpacking tries these in order when the loader's own search finds nothing.
step "find the NVIDIA driver library (libcuda.so.1)"
echo "KVBENCH_CUDA_LIBRARY=${KVBENCH_CUDA_LIBRARY:-(unset)}"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-(unset)}"
cuda_candidates=()
add_candidate() {
  local c
  [ -e "$1" ] || return 0
  for c in "${cuda_candidates[@]}"; do [ "$c" = "$1" ] && return 0; done
  cuda_candidates+=("$1")
}
[ -n "${KVBENCH_CUDA_LIBRARY:-}" ] && add_candidate "$KVBENCH_CUDA_LIBRARY"
IFS=: read -r -a ld_dirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${ld_dirs[@]}" /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/cuda/compat; do
  [ -n "$d" ] && add_candidate "$d/libcuda.so.1"
done
ldconfig_cuda=$(timeout 10 ldconfig -p 2>/dev/null | grep -i 'libcuda\.so' || true)
echo "ldconfig -p: ${ldconfig_cuda:-(no libcuda)}"
while read -r lib_path; do
  [ -n "$lib_path" ] && add_candidate "$lib_path"
done < <(printf '%s\n' "$ldconfig_cuda" | awk '/libcuda\.so\.1 /{print $NF}')
if [ "${#cuda_candidates[@]}" -gt 0 ]; then
  echo "found: ${cuda_candidates[*]}"
else
  echo "no libcuda.so.1 in \$LD_LIBRARY_PATH, /usr/local/nvidia/lib64, /usr/local/nvidia/lib, /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/cuda/compat or ldconfig's cache"
fi

step "unpack Node 24 and the runtime packages"
[ -f "$carry/node.xz" ] && [ -f "$carry/node_modules.tar.xz" ] || { no_verdict="nothing was carried: $carry is missing"; echo "no $carry: run bench/device/pack.sh and carry it"; exit 1; }
# xz is not on every image; Python's lzma reads the same files.
unxz_to() {
  if command -v xz >/dev/null 2>&1; then xz -dc "$1" >"$2"; else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2"
  fi
}
untar_xz() {
  if command -v xz >/dev/null 2>&1; then xz -dc "$1" | tar -xf -; else
    python3 -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    t.extractall(".", **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))' "$1"
  fi
}
command -v xz >/dev/null 2>&1 || echo "(no xz here: unpacking with python3's lzma)"
# The working copy first, /tmp if that cannot run programs (a noexec mount).
node=''
for dir in "$work" /tmp/kvbench-gpu-check-node; do
  mkdir -p "$dir" && unxz_to "$carry/node.xz" "$dir/node" && chmod +x "$dir/node" || continue
  if "$dir/node" --version >/dev/null 2>&1; then node=$dir/node; break; fi
  echo "$dir/node does not run here ($("$dir/node" --version 2>&1 | head -1)); trying elsewhere"
done
[ -n "$node" ] || { no_verdict="the carried Node 24 binary does not run here"; echo "STOP: the carried Node 24 binary runs nowhere here (noexec mounts, or not an x86-64 Linux)"; exit 1; }
# A marker, not the folder: a run killed while unpacking leaves a folder that is not complete. A
# node_modules that npm installed (it has .package-lock.json) is used as it is.
marker=node_modules/.kvbench-carry-unpacked
if [ ! -f "$marker" ] && [ ! -f node_modules/.package-lock.json ]; then
  rm -rf node_modules
  untar_xz "$carry/node_modules.tar.xz" && touch "$marker" || { no_verdict="node_modules.tar.xz did not unpack"; echo "STOP: node_modules.tar.xz did not unpack"; exit 1; }
fi
export KVBENCH_DB="$work/kvbench.sqlite"
echo "node $("$node" --version) at $node; $((SECONDS - start)) s to unpack"

# The driver must load and initialise (probeCudaDriver: dlopen, cuInit, the devices), or nothing
# after this measures a GPU: stop now, with the reason, and leave the call's time for a retry.
step "preflight: can kvbench load and initialise the NVIDIA driver?"
probe() {
  timeout --kill-after=5 60 "$node" --input-type=module -e '
    import { probeCudaDriver } from "./src-main/hardware/gpu-driver.ts";
    const p = await probeCudaDriver();
    console.log(`${p.library}: ${p.available ? `available, ${p.devices.length} device(s): ${p.devices.map((d) => d.name).join(", ")}; driver ${p.driverVersion ?? "?"}, supports CUDA ${p.cudaVersion}` : `NOT usable: ${p.reason}`}`);
    process.exitCode = p.available ? 0 : 3;' 2>&1
}
probe_reasons=()
if out=$(probe); then
  echo "$out"
  note_lines+=("driver: $out")
else
  probe_reasons+=("$out")
  echo "$out"
  unset_env=${KVBENCH_CUDA_LIBRARY:-}
  ok=''
  for lib_path in "${cuda_candidates[@]}"; do
    [ "$lib_path" = "$unset_env" ] && continue
    if out=$(KVBENCH_CUDA_LIBRARY=$lib_path probe); then
      echo "$out"
      export KVBENCH_CUDA_LIBRARY=$lib_path
      export LD_LIBRARY_PATH="$(dirname "$lib_path")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "using KVBENCH_CUDA_LIBRARY=$KVBENCH_CUDA_LIBRARY (and its folder first on LD_LIBRARY_PATH)"
      note_lines+=("driver: $out (through KVBENCH_CUDA_LIBRARY)")
      ok=1
      break
    fi
    echo "$out"
    probe_reasons+=("$out")
  done
  if [ -z "$ok" ]; then
    echo
    echo "STOP: the NVIDIA driver cannot be loaded or initialised, so nothing here would measure a GPU."
    for r in "${probe_reasons[@]}"; do echo "  - $r"; done
    for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
      echo "  ls -l $d/libcuda*:"; ls -l "$d"/libcuda* 2>&1 | head -5 | sed 's/^/    /'
    done
    ls -l /dev/nvidia* 2>&1 | head -8 | sed 's/^/  /'
    summary+=("preflight: STOP (no usable NVIDIA driver; see above)")
    no_verdict="no usable NVIDIA driver (the preflight stopped the check: ${probe_reasons[0]})"
    exit 2
  fi
fi

step "machine"
uname -a
timeout 20 nvidia-smi -L 2>&1 || echo "nvidia-smi -L: not available or timed out"
# nvidia-smi.csv: rows at idle, during the bench and after it (the link generation trains down at idle).
. "$repo/bench/device/nvidia-smi-watch.sh"
smi_csv_start
cat "$OUT/nvidia-smi.csv"
[ -r /proc/driver/nvidia/version ] || echo "no /proc/driver/nvidia/version: the driver version comes from nvidia-smi"
timeout 60 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1 | tail -3
echo "work and cache directory $work, on:"
df -T "$work" 2>&1 | tail -1
echo "filesystem type: $(stat -f -c %T "$work" 2>&1); /tmp is $(stat -f -c %T /tmp 2>&1)"
[ -r /proc/diskstats ] || echo "no /proc/diskstats: device bytes cannot be counted here (results will say so)"
# The runs' CPU tier and storage capacity from what this machine has (the CPU tier is refused above
# MemTotal − 2 GiB, the storage tier above the free space): a quarter of the memory and a third of
# the free disk, at most 16 GiB each, at least 1.
mem_gib=$(awk '/^MemTotal:/{print int($2 / 1048576)}' /proc/meminfo 2>/dev/null)
free_gib=$(df -Pk "$work" 2>/dev/null | awk 'NR==2{print int($4 / 1048576)}')
clamp() { local v=${1:-0}; [ "$v" -gt "$2" ] && v=$2; [ "$v" -lt 1 ] && v=1; echo "$v"; }
cpu_gb=$(clamp $(( ${mem_gib:-0} / 4 )) 16)
stor_gb=$(clamp $(( ${free_gib:-0} / 3 )) 16)
echo "memory ${mem_gib:-?} GiB (MemTotal), ${free_gib:-?} GiB free on the work disk: runs use --cpu-mem-gb $cpu_gb, --storage-capacity-gb $stor_gb"

run_step -o "$OUT/hw.json" "hardware detection" 60 0 "$node" bin/kvbench.js hw --cache-dir "$work/cache" --json
[ -s "$OUT/hw.json" ] && "$node" -e 'const h = require(process.argv[1]); console.log(JSON.stringify({ gpus: h.gpus, cuda: h.cuda, warnings: h.warnings }, null, 1).slice(0, 3000))' "$OUT/hw.json"
[ -s "$OUT/hw.json" ] && note < <("$node" -e 'const h = require(process.argv[1]); console.log(`hardware detection: ${h.gpus.length} GPU(s): ${h.gpus.map((g) => `${g.model} at ${g.busId ?? "?"}${g.engineUsable ? "" : " (not usable)"}`).join(", ")}`)' "$OUT/hw.json")
# What systeminformation itself says (detection merges it with the driver's list): for a GPU listed twice.
echo "systeminformation graphics controllers, as it reports them:"
timeout 30 "$node" --input-type=module -e '
  import si from "systeminformation";
  const g = await si.graphics();
  for (const c of g.controllers) console.log("  " + JSON.stringify({ vendor: c.vendor, model: c.model, name: c.name, bus: c.bus, busAddress: c.busAddress, pciBus: c.pciBus, vram: c.vram, memoryTotal: c.memoryTotal, driverVersion: c.driverVersion }));' 2>&1 | head -20

# nvidia-smi beside the bench: dmon's PCIe snapshots, appended to log.txt, and the link under load, a
# row 10 s into the bench (its first kvbench repetition), besides the one after it.
smi_watch_start 10
# The bench stops starting measurements after --time-limit-s and goes to its verdict, so its
# CRITERION line comes even when the machine is slower than planned: its step limit (200 s, or less
# when the deadline cuts it), less 90 s for a torch run started just before then (killed after 80 s)
# and the verdict.
bw_limit=$(( $(left) - 10 ))
[ "$bw_limit" -gt 200 ] && bw_limit=200
bw_time_limit=$(( bw_limit - 90 ))
[ "$bw_time_limit" -lt 10 ] && bw_time_limit=10
no_verdict="the bench printed no verdict"
run_step -t "$work/bw.txt" "host<->device copy bandwidth: kvbench tier vs torch pinned copies" 200 0 \
  "$node" bench/gpu-copy-bandwidth.ts --entry-mib 256 --total-gib 8 --budget-gib 16 --chunk-mib 16,64 --copy-threads 2,1,4 --reps 3 \
  --time-limit-s "$bw_time_limit" --torch-timeout-s 80 --json "$work/out/gpu-bw.json"
no_verdict="the bench printed no verdict (${summary[-1]})"
smi_watch_stop
smi_row after-bench
smi_csv_print

run_step "kvbench run, GPU only (GPU tier 64 GiB, CPU tier off, storage $stor_gb GiB)" 90 0 \
  "$node" bin/kvbench.js run --model llama3.1-8b --num-users 32 --duration 30 --warm-up 5 --gpu-mem-gb 64 --cpu-mem-gb 0 \
  --storage-capacity-gb "$stor_gb" --cache-dir "$work/cache" --seed 7 --output "$work/out/run-gpu-only.json"

# A small GPU tier (8 GiB): it crosses its 80 % target within the run, so demotion GPU → CPU runs on the real GPU.
run_step "kvbench run, GPU 8 GiB + CPU $cpu_gb GiB + storage $stor_gb GiB" 90 0 \
  "$node" bin/kvbench.js run --model llama3.1-8b --num-users 32 --duration 30 --warm-up 5 --gpu-mem-gb 8 --cpu-mem-gb "$cpu_gb" \
  --storage-capacity-gb "$stor_gb" --cache-dir "$work/cache" --seed 7 --output "$work/out/run-gpu-cpu-storage.json"
for f in "$OUT/run-gpu-only.json" "$OUT/run-gpu-cpu-storage.json"; do
  [ -s "$f" ] || { echo "$(basename "$f"): not written" | note; continue; }
  note < <("$node" -e '
    const r = require(process.argv[1]);
    const k = r.kvbench ?? {};
    const g = k.tiers?.gpu ?? {};
    const gbs = (x) => (x == null ? "—" : (x / 1e9).toFixed(2) + " GB/s");
    const d = g.devices?.[0];
    // A run whose GPU tier did not open still completes (on the tiers below): say so first.
    const gpu = g.present
      ? `GPU tier on ${d?.model ?? "?"}, ${((g.budget_bytes ?? 0) / 2 ** 30).toFixed(1)} GiB reserved, driver ${g.driver_version ?? "?"} (supports CUDA ${g.cuda_version ?? "?"}), staging ${g.staging_pinned ? "pinned" : "NOT pinned"}`
      : `GPU tier ABSENT: ${g.reason ?? "no reason given"}`;
    console.log(`${require("path").basename(process.argv[1])}: status ${k.status}; ${gpu}; demotions ${JSON.stringify(k.demotions ?? {})}; ` +
      `GPU H2D link ${gbs(g.h2d_link_busy_bytes_per_sec)} (per copy ${gbs(g.h2d_per_copy_bytes_per_sec ?? g.h2d_copy_bandwidth_bytes_per_sec)}), ` +
      `D2H staging link ${gbs(g.d2h_staging_link_busy_bytes_per_sec)} (per copy ${gbs(g.d2h_staging_per_copy_bytes_per_sec ?? g.d2h_copy_bandwidth_bytes_per_sec)}), ` +
      `demotion D2H ${gbs(g.demotion_d2h_link_busy_bytes_per_sec)}`);
    // The copy counters count the window the tier bytes count (0.8.1): each pair should be equal.
    const t = k.tier_bytes?.gpu;
    const cs = r.summary?.cache_stats ?? {};
    const same = (copies, tier) => (copies == null || tier == null ? "?" : copies === tier ? "equal" : `OFF by ${copies - tier} B`);
    const ms = (x) => (x == null ? "—" : x.toFixed(2) + " ms");
    const split = (op) => `${ms(cs[`gpu_${op}_p95_ms`])} (device ${ms(cs[`gpu_${op}_device_p95_ms`])}, host ${ms(cs[`gpu_${op}_host_p95_ms`])})`;
    if (g.present && t) console.log(`${require("path").basename(process.argv[1])}: GPU copies vs tier bytes: H2D vs writes ${same(g.h2d_copy_bytes, t.write_bytes)}, ` +
      `staging D2H vs reads less demoted out ${same(g.d2h_staging_copy_bytes, t.read_bytes - t.demoted_out_bytes)}, demotion D2H vs demoted out ${same(g.demotion_d2h_copy_bytes, t.demoted_out_bytes)}; ` +
      `GPU read P95 ${split("read")}, write P95 ${split("write")}; staging slot waits ${g.staging_slot_waits ?? "?"} of ${g.staging_slot_acquisitions ?? "?"} (longest ${g.staging_slot_max_wait_ns == null ? "?" : ms(g.staging_slot_max_wait_ns / 1e6)})`);' "$f" 2>&1 | head -3)
done

# Bytes read back through every tier and both demotions (GPU → CPU → storage), checked: a small GPU
# and CPU tier so that entries move down within the run.
run_step -t "$work/verify.txt" "kvbench run with --verify, GPU 2 GiB + CPU 2 GiB + storage $stor_gb GiB" 60 0 \
  "$node" bin/kvbench.js run --model llama3.1-8b --num-users 16 --duration 15 --warm-up 2 --gpu-mem-gb 2 --cpu-mem-gb 2 \
  --storage-capacity-gb "$stor_gb" --cache-dir "$work/cache" --seed 11 --verify
note < <(grep -a -E 'Data verification|DATA VERIFICATION|^    (gpu|cpu)->' "$work/verify.txt" 2>/dev/null | sed 's/^ */verify run: /')

run_step -t "$work/exit-paths.txt" "exit paths: signals while the GPU tier holds device memory" 150 0 \
  bash bench/device/gpu-exit-paths.sh "$node" "$work" "$stor_gb"
note < <(grep -a -E '^EXIT-(PATH|HOOK) ' "$work/exit-paths.txt" 2>/dev/null)

# Last: the longest step. 40 s stay for the report and export after it.
run_step "quick suite: gpu-only and gpu-cpu-storage at this machine's sizes, one trial each" 240 40 \
  "$node" bin/kvbench.js suite --profile quick --trials 1 --warm-up 5 --scenarios gpu-only,gpu-cpu-storage \
  --cache-dir "$work/cache" --label "gpu-check quick"
run_step -o "$OUT/suite-report.txt" "suite report" 30 0 "$node" bin/kvbench.js report --all
run_step "suite export" 30 0 "$node" bin/kvbench.js export --out "$work/out/trials.json"
[ -s "$OUT/suite-report.txt" ] && cat "$OUT/suite-report.txt"
[ -s "$OUT/trials.json" ] && note < <("$node" -e '
  const trials = require(process.argv[1]).trials ?? [];
  const gbs = (x) => (x == null ? "—" : (x / 1e9).toFixed(2) + " GB/s");
  for (const t of trials) {
    const m = t.metrics;
    console.log(`${t.scenarioId} #${t.trialIndex + 1}: ${t.status}; GPU bytes written ${m.gpu_write_bytes ?? "—"}, read ${m.gpu_read_bytes ?? "—"}; ` +
      `link H2D ${gbs(m.gpu_h2d_link_bytes_per_s)}, D2H staging ${gbs(m.gpu_d2h_link_bytes_per_s)}, demotion D2H ${gbs(m.gpu_demotion_d2h_link_bytes_per_s)} ` +
      `(per copy, diagnostic: H2D ${gbs(m.gpu_h2d_copy_bytes_per_s)}, D2H mixed ${gbs(m.gpu_d2h_copy_bytes_per_s)})`);
  }' "$OUT/trials.json" 2>&1 | head -40)
# The exit code (from finish): 1 when a step failed or timed out, 0 otherwise (skipped steps say so in the summary).
exit 0
