# Sourced by gpu-check.sh: what nvidia-smi says about the GPU around the copy-bandwidth bench.
# Needs $OUT (nvidia-smi.csv goes there) and $work (dmon's output waits there).
#
#   smi_csv_start        the CSV's header, then its idle row (the link generation trains down at idle)
#   smi_row WHEN         one row of the query, its first column WHEN
#   smi_watch_start [S]  beside the bench: nvidia-smi dmon, and the "during-bench" row S seconds in
#                        (10 by default: the bench's first kvbench repetition; the H200's whole
#                        bench took 29 s, so a row 30 s in was never taken)
#   smi_watch_stop       after it: the during-bench row, or why there is none; then dmon's samples
#   smi_csv_print        the CSV, with the rows it has

smi_query=timestamp,name,pcie.link.gen.current,pcie.link.gen.max,pcie.link.gen.hostmax,pcie.link.width.current,pcie.link.width.max,compute_mode,persistence_mode,memory.used,memory.total
smi_row() {
  local rows
  if rows=$(timeout 20 nvidia-smi --query-gpu="$smi_query" --format=csv,noheader 2>&1); then
    printf '%s\n' "$rows" | sed "s/^/$1, /" >>"$OUT/nvidia-smi.csv"
  else
    echo "nvidia-smi --query-gpu ($1) failed or timed out: $rows" | head -3
  fi
}

smi_csv_start() {
  # An older nvidia-smi may not know pcie.link.gen.hostmax: then the query goes without it.
  timeout 20 nvidia-smi --query-gpu="$smi_query" --format=csv,noheader >/dev/null 2>&1 || smi_query=${smi_query/,pcie.link.gen.hostmax/}
  echo "when, $smi_query" >"$OUT/nvidia-smi.csv"
  smi_row idle
}

smi_dmon_pid=''
smi_during_pid=''
smi_during_at_s=10
smi_during_from=0
smi_watch_start() {
  command -v nvidia-smi >/dev/null 2>&1 || return 0
  smi_during_at_s=${1:-10}
  timeout 220 nvidia-smi dmon -s t -d 1 >"$work/dmon.txt" 2>&1 &
  smi_dmon_pid=$!
  smi_during_from=$SECONDS
  (sleep "$smi_during_at_s" && smi_row during-bench) >/dev/null 2>&1 &
  smi_during_pid=$!
}

smi_watch_stop() {
  [ -n "$smi_dmon_pid" ] || return 0
  if [ $((SECONDS - smi_during_from)) -ge "$smi_during_at_s" ]; then
    # Taken, or being taken (nvidia-smi runs under a 20 s timeout): let it finish.
    wait "$smi_during_pid" 2>/dev/null
  else
    kill "$smi_during_pid" 2>/dev/null
    wait "$smi_during_pid" 2>/dev/null
    echo "nvidia-smi during-bench row: not taken (the bench ended within ${smi_during_at_s} s, before it was due)"
  fi
  kill "$smi_dmon_pid" 2>/dev/null
  wait "$smi_dmon_pid" 2>/dev/null
  # dmon -s t is NVML's PCIe throughput counter: bytes over a 20 ms window, sampled once a second
  # (not a per-second average), counting raw PCIe traffic, protocol overhead included.
  echo "nvidia-smi dmon -s t during the bench: PCIe rx/tx in MB/s, each a 20 ms NVML snapshot taken once a second (raw PCIe traffic, protocol overhead included: not comparable with the bench's payload GB/s):"
  head -c 20000 "$work/dmon.txt" | sed 's/^/  /'
  smi_dmon_pid=''
}

smi_csv_print() {
  local rows
  rows=$(tail -n +2 "$OUT/nvidia-smi.csv" | cut -d, -f1 | uniq | paste -sd, - | sed 's/,/, /g')
  echo "nvidia-smi.csv (${rows:-no rows}):"
  cat "$OUT/nvidia-smi.csv"
}
