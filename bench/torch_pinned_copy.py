#!/usr/bin/env python3
"""PyTorch's side of bench/gpu-copy-bandwidth.ts: host<->device copy bandwidth from pinned memory,
the way the reference keeps GPU-tier entries (torch tensors, copies made with non_blocking=True and
then synchronised). Prints one JSON object on stdout; everything else goes to stderr.

  python3 bench/torch_pinned_copy.py --entry-bytes N --total-bytes N [--device 0] [--warmup 2]
                                     [--chunk-bytes N[,N...]]

Measured, each over --total-bytes moved as entries of --entry-bytes, one entry at a time, each
timed from the call to completion (torch.cuda.synchronize):
  h2d_alloc    host_pinned.cuda(non_blocking=True)       new device tensor per entry (caching allocator)
  h2d_into     dev.copy_(host_pinned, non_blocking=True)  into a preallocated device tensor
  d2h_into     host_pinned.copy_(dev, non_blocking=True)  into the pinned host tensor
and, for each --chunk-bytes size (a diagnostic: kvbench's tier moves an entry in chunks), the same
copy_ calls made chunk by chunk on one stream, synchronised once per entry ("chunked").
GB/s are 1e9 bytes per second.
"""

import argparse
import json
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entry-bytes", type=int, required=True)
    ap.add_argument("--total-bytes", type=int, required=True)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--chunk-bytes", default="")
    a = ap.parse_args()

    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        print(json.dumps({"ok": False, "error": f"torch is not importable: {e}"}))
        return 3
    if not torch.cuda.is_available():
        print(json.dumps({"ok": False, "error": "torch.cuda.is_available() is False", "torch_version": torch.__version__}))
        return 3

    dev_index = a.device
    torch.cuda.set_device(dev_index)
    device = torch.device("cuda", dev_index)
    n = a.entry_bytes
    entries = max(1, a.total_bytes // n)

    host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    host.fill_(7)
    dev = torch.empty(n, dtype=torch.uint8, device=device)
    torch.cuda.synchronize()

    def timed(copy_once) -> float:
        for _ in range(a.warmup):
            copy_once()
            torch.cuda.synchronize()
        total_ns = 0
        for _ in range(entries):
            t0 = time.perf_counter_ns()
            copy_once()
            torch.cuda.synchronize()
            total_ns += time.perf_counter_ns() - t0
        return entries * n / (total_ns / 1e9) / 1e9

    keep = []

    def h2d_alloc():
        # A new device tensor per entry, as the reference's GPU tier makes; dropped right after,
        # so the caching allocator serves the next one from the same block.
        t = host.cuda(device=device, non_blocking=True)
        keep.append(t)
        if len(keep) > 1:
            keep.pop(0)

    out = {
        "ok": True,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "device_name": torch.cuda.get_device_name(dev_index),
        "entry_bytes": n,
        "entries": entries,
        "h2d_alloc_gbps": timed(h2d_alloc),
        "h2d_into_gbps": timed(lambda: dev.copy_(host, non_blocking=True)),
        "d2h_into_gbps": timed(lambda: host.copy_(dev, non_blocking=True)),
    }
    keep.clear()

    def chunked(dst, src, chunk):
        def copy_once():
            for off in range(0, n, chunk):
                dst[off:off + chunk].copy_(src[off:off + chunk], non_blocking=True)
        return copy_once

    # A diagnostic only: if it fails, the numbers above (the criterion's) are still reported.
    try:
        out["chunked"] = [
            {
                "chunk_bytes": c,
                "h2d_gbps": timed(chunked(dev, host, c)),
                "d2h_gbps": timed(chunked(host, dev, c)),
            }
            for c in (int(x) for x in a.chunk_bytes.split(",") if x.strip())
        ]
    except Exception as e:  # noqa: BLE001
        out["chunked"] = []
        out["chunked_error"] = f"{type(e).__name__}: {e}"
        print(f"chunked copies failed: {out['chunked_error']}", file=sys.stderr)
    # The bytes made the round trip.
    host.fill_(0)
    host.copy_(dev, non_blocking=True)
    torch.cuda.synchronize()
    out["verified"] = bool((host == 7).all().item())
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
