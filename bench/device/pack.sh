#!/usr/bin/env bash
# Packs what the lent GPU machine lacks into .device-carry/ (git-ignored), for the device tool's
# `carry`: a stripped, xz-compressed Node 24 binary and the project's runtime node_modules (no dev
# dependencies, no other platforms' binaries, no native sources). That machine has no network and
# no Node, and a call takes at most 64 MiB of working tree and carried paths together.
#
#   bash bench/device/pack.sh            then, with the device tool:
#   run(command: "bash bench/device/gpu-check.sh", carry: [".device-carry"], timeout_s: 590)
set -euo pipefail
cd "$(dirname "$0")/../.."

node_bin=node_modules/node/bin/node
[ -x "$node_bin" ] || { echo "pack: $node_bin missing: run npm ci first" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "pack: the GPU machine is x86-64; pack on an x86-64 machine" >&2; exit 1; }

out=.device-carry
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Node: the npm package's binary carries its debug symbols (126 MB); stripped and xz'd it is ~27 MB.
cp "$node_bin" "$work/node"
strip "$work/node"
xz -T0 -9 -c "$work/node" >"$out/node.xz"

# Runtime packages, from the lockfile: what `npm ci --omit=dev` would install here.
"$node_bin" -e '
  const fs = require("fs");
  const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
  for (const [p, v] of Object.entries(lock.packages)) {
    // A nested package comes along with its parent directory.
    if (p && !v.dev && !v.devOptional && fs.existsSync(p) && p.lastIndexOf("node_modules/") === 0) console.log(p);
  }' >"$work/packages"
tar -cf - --exclude='better-sqlite3/deps' --exclude='better-sqlite3/src' --exclude='better-sqlite3/build' \
  --exclude='better-sqlite3/prebuilds/[!l]*' --exclude='better-sqlite3/prebuilds/linux-arm64.node' \
  --exclude='better-sqlite3/prebuilds/linuxmusl-*' \
  --exclude='koffi/vendor' --exclude='koffi/doc' --exclude='node_modules/@types' --exclude='koffi-linux-x64/musl_x64' \
  -T "$work/packages" | xz -T0 -9 >"$out/node_modules.tar.xz"

tree_bytes=$(git ls-files -z --cached --others --exclude-standard | xargs -0 cat | wc -c)
carry_bytes=$(cat "$out"/* | wc -c)
total=$((tree_bytes + carry_bytes))
printf 'pack: %s (node %d MiB, node_modules %d MiB) + working tree %d MiB = %d MiB of the 64 MiB a call carries\n' \
  "$out" $(($(wc -c <"$out/node.xz") >> 20)) $(($(wc -c <"$out/node_modules.tar.xz") >> 20)) \
  $((tree_bytes >> 20)) $((total >> 20))
if [ "$total" -gt $((62 << 20)) ]; then
  echo "pack: over 62 MiB: the device tool would refuse the call" >&2
  exit 1
fi
