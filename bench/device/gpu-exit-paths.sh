#!/usr/bin/env bash
# The GPU tier's exit paths on a real GPU, for bench/device/gpu-check.sh: a kvbench run (and a suite
# trial, whose engine runs in a child process) is stopped while its GPU tier holds device memory,
# by one Ctrl-C, by SIGTERM and by SIGKILL (the kernel driver reclaims it). (Two Ctrl-Cs are not a
# case: the first stop ends a run in well under the second that a repeat must wait to count as a
# second request, so the quit-at-once path is never reached; the exit hook it relies on is checked
# from inside the process instead, by gpu-exit-hook.ts, on process.exit() and an uncaught exception.) For each it prints how long the
# process took to end after the signal, its exit status against the expected one, the GPU memory
# in use before the signal and after the exit (nvidia-smi), and any kvbench process left running.
# Each case ends with one "EXIT-PATH" line, which gpu-check.sh keeps for the closing note.
#
# usage: gpu-exit-paths.sh NODE WORKDIR STORAGE_GB
set -uo pipefail
node=$1 work=$2 stor_gb=$3
cd "$(dirname "$0")/../.."
gpu_gib=32
# What nvidia-smi must show before the signal: the tier's reservation (the context adds ~0.5 GiB).
want_mib=$((gpu_gib * 1024 * 9 / 10))

used_mib() { timeout 10 nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | tr -dc '0-9'; }
# Processes of this repository's kvbench still alive (the CLI, its re-exec wrapper, an engine child).
left_running() { pgrep -f "$PWD/bin/kvbench.js|$PWD/src-main/" 2>/dev/null | grep -v "^$$\$" | tr '\n' ' '; }

# What a graceful stop leaves, checked after the exit: an exit status alone cannot tell kvbench's
# own stop from the signal's default action (SIGTERM's is exit 143 too), and the driver frees the
# memory after any death. KEPT is "-" (nothing: SIGKILL), "results:FILE" (a run's --output: status
# partial or aborted, its reason naming the signal, GPU tier present) or "suite:DB" (the suite's trial stored as stopped).
# Prints nothing when what was kept is right, else what is wrong.
kept_problem() {
  local kept=$1 signal=$2
  case $kept in
    -) return 0 ;;
    results:*)
      [ -s "${kept#results:}" ] || { echo "NO RESULTS FILE"; return 0; }
      "$node" -e '
        const r = require(process.argv[1]).kvbench ?? {};
        const wrong = [];
        // partial: stopped in the measured window; aborted: stopped before it measured anything.
        if (r.status !== "partial" && r.status !== "aborted") wrong.push(`status ${r.status}, not stopped`);
        if (!String(r.status_reason ?? r.statusReason ?? "").includes(process.argv[2])) wrong.push(`its reason does not name ${process.argv[2]}: ${JSON.stringify(r.status_reason ?? r.statusReason ?? null)}`);
        if (r.tiers?.gpu?.present !== true) wrong.push("GPU tier absent");
        if (wrong.length) console.log("RESULTS " + wrong.join("; "));' "${kept#results:}" "SIG$signal" 2>&1 | head -2
      ;;
    suite:*)
      "$node" bin/kvbench.js history --db "${kept#suite:}" --json 2>&1 | "$node" -e '
        let text = ""; process.stdin.on("data", (d) => (text += d)).on("end", () => {
          let rows; try { rows = JSON.parse(text); rows = rows.trials ?? rows; } catch { console.log("NO HISTORY: " + text.slice(0, 200)); return; }
          if (!Array.isArray(rows) || rows.length === 0) { console.log("NO TRIAL STORED"); return; }
          const t = rows[0];
          if (!["partial", "aborted"].includes(t.status)) console.log(`TRIAL STORED AS ${t.status}, not stopped`);
        });'
      ;;
  esac
}

# one_case NAME EXPECTED_STATUS KEPT SIGNALS... -- KVBENCH ARGS...: SIGNALS are sent 1.5 s apart (further
# than REPEAT_IS_SAME_DELIVERY_MS, so a second one is a second request).
one_case() {
  local name=$1 expected=$2 kept=$3
  shift 3
  local signals=()
  while [ "$1" != -- ]; do signals+=("$1"); shift; done
  shift
  echo "--- $name: kvbench $1, then ${signals[*]}"
  local before_run
  before_run=$(used_mib)
  "$node" bin/kvbench.js "$@" >"$work/exit-case.log" 2>&1 &
  local pid=$! t0=$SECONDS used=0
  # Until the tier holds its memory (at most 60 s), then 3 s more so copies are in flight.
  while [ $((SECONDS - t0)) -lt 60 ] && kill -0 "$pid" 2>/dev/null; do
    used=$(used_mib)
    [ "${used:-0}" -ge "$want_mib" ] && break
    sleep 0.5
  done
  if ! kill -0 "$pid" 2>/dev/null || [ "${used:-0}" -lt "$want_mib" ]; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "the tier never held ${want_mib} MiB (GPU memory in use ${used:-?} MiB); its output:"
    tail -20 "$work/exit-case.log"
    echo "EXIT-PATH $name: NOT MEASURED (the GPU tier did not reserve its memory in 60 s)"
    return 0
  fi
  sleep 3
  used=$(used_mib)
  local sent
  sent=$(date +%s.%N)
  local i=0
  for s in "${signals[@]}"; do
    [ "$i" -gt 0 ] && sleep 1.5
    kill "-$s" "$pid" 2>/dev/null
    i=$((i + 1))
  done
  # At most 60 s to end; a process still there then is itself the finding.
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  local hung=''
  if kill -0 "$pid" 2>/dev/null; then
    hung=' HUNG (still running 60 s after the signal; killed)'
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid"
  local status=$?
  local ended
  ended=$(date +%s.%N)
  # The driver gives the memory back as the process's last reference to its context goes. After a
  # SIGKILL the engine child (kvbench run's engine runs in one) sees its parent gone and stops by
  # itself: wait up to 20 s for both, and say how long each took.
  local after='' leftover='' gone_s='' freed_s='' k
  for k in $(seq 1 200); do
    after=$(used_mib)
    leftover=$(left_running)
    [ -z "$freed_s" ] && [ "${after:-1}" -le "${before_run:-0}" ] && freed_s=$(awk -v a="$ended" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [ -z "$gone_s" ] && [ -z "$leftover" ] && gone_s=$(awk -v a="$ended" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [ -n "$freed_s" ] && [ -n "$gone_s" ] && break
    sleep 0.1
  done
  tail -6 "$work/exit-case.log" | sed 's/^/    | /'
  local problems=()
  [ "$status" -eq "$expected" ] || problems+=("UNEXPECTED STATUS")
  [ -n "$hung" ] && problems+=(HUNG)
  [ -n "$freed_s" ] || problems+=("GPU MEMORY NOT RETURNED in 20 s")
  [ -z "$leftover" ] || problems+=("LEFT RUNNING 20 s after the exit: $leftover")
  local kept_wrong
  kept_wrong=$(kept_problem "$kept" "${signals[0]}")
  [ -z "$kept_wrong" ] || problems+=("$kept_wrong")
  local verdict=ok
  if [ "${#problems[@]}" -gt 0 ]; then
    verdict=${problems[0]}
    local p
    for p in "${problems[@]:1}"; do verdict="$verdict; $p"; done
  fi
  printf 'EXIT-PATH %s: %s; exit %s (expected %s) %.1f s after the first signal%s; every kvbench process gone %s s after that, GPU memory back %s s after it; in use %s MiB before the signal, %s MiB after (%s MiB before the run)\n' \
    "$name" "$verdict" "$status" "$expected" "$(awk -v a="$sent" -v b="$ended" 'BEGIN { print b - a }')" "$hung" "${gone_s:-?}" "${freed_s:-?}" "$used" "${after:-?}" "${before_run:-?}"
  [ -n "$leftover" ] && kill -KILL $leftover 2>/dev/null
  return 0
}

run_args=(run --model llama3.1-8b --num-users 32 --duration 120 --warm-up 0 --gpu-mem-gb "$gpu_gib" --cpu-mem-gb 0
  --storage-capacity-gb "$stor_gb" --cache-dir "$work/cache" --seed 7)
one_case "run, one Ctrl-C" 130 "results:$work/exit-int.json" INT -- "${run_args[@]}" --output "$work/exit-int.json"
one_case "run, SIGTERM" 143 "results:$work/exit-term.json" TERM -- "${run_args[@]}" --output "$work/exit-term.json"
one_case "run, SIGKILL" 137 - KILL -- "${run_args[@]}" --output "$work/exit-kill.json"
# A suite trial: the engine runs in a child process the suite started.
# Its GPU tier takes the GPU's memory less the driver's share: more than the runs' 32 GiB.
one_case "suite trial, one Ctrl-C" 130 "suite:$work/exit-paths.sqlite" INT -- suite --profile quick --trials 1 --warm-up 0 --scenarios gpu-only --no-probe \
  --storage-capacity-gb "$stor_gb" --cache-dir "$work/cache" --label "gpu-check exit paths" --db "$work/exit-paths.sqlite"
"$node" bin/kvbench.js history --db "$work/exit-paths.sqlite" --limit 3 2>&1 | tail -5 | sed 's/^/    /'
# The exit hook of a tier never closed: process.exit() and an uncaught exception.
for how in exit throw; do
  out=$(timeout 60 "$node" bench/device/gpu-exit-hook.ts "$how" 2>&1)
  printf '%s\n' "$out" | grep -a '^EXIT-HOOK ' || { echo "EXIT-HOOK $how: NO VERDICT; its output:"; printf '%s\n' "$out" | tail -8; }
done
# What the killed runs left in the cache directory goes, so later steps have its space.
rm -rf "$work/cache" && mkdir -p "$work/cache"
exit 0
