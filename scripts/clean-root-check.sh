#!/usr/bin/env bash
# The README's two commands on a clean Debian 12 root: builds a bare bookworm root with
# mmdebstrap (minbase: essential packages and apt, nothing of ours), clones the repository's
# committed HEAD into it (git clone, never the working tree), bind-mounts ../shared read-only
# beside the clone (so the data tests run), and runs `scripts/demo.sh`, then `scripts/test.sh`
# inside it with chroot. Everything the two commands print goes to the log; the last line is a
# one-line verdict. Exit 0 only when both commands pass.
#
#   sudo scripts/clean-root-check.sh [--fresh] [--keep] [--log FILE] [--dir DIR]
#
# --fresh   rebuild the cached bare root tarball (DIR/bookworm-minbase.tar) first
# --keep    leave the root (DIR/root) in place afterwards, to look into it
# DIR defaults to /var/tmp/wavekit-clean-root (several GB while it runs). The bare root is
# cached between runs; the package install (scripts/setup.sh) starts from the bare root every
# time. Too slow for CI (about an hour on 2 idle cores: LLVM 22 and the whole build): run it
# when scripts/packages.txt, scripts/*.sh or the build's tool use change (docs/development.md).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=/var/tmp/wavekit-clean-root
fresh=0 keep=0 log=""
while (($#)); do
  case "$1" in
    --fresh) fresh=1 ;;
    --keep) keep=1 ;;
    --log) log=$2; shift ;;
    --dir) dir=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "clean-root-check: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $(id -u) -eq 0 ]] || { echo "clean-root-check: needs root (chroot, mounts)" >&2; exit 2; }
mkdir -p "$dir"
log=${log:-$dir/clean-root-check.log}
: > "$log"
tarball=$dir/bookworm-minbase.tar
root=$dir/root
shared=$(cd "$repo/.." && pwd)/shared
mirror=http://deb.debian.org
start=$(date +%s)
say() { echo "clean-root-check: $*" | tee -a "$log" >&2; }
verdict() {  # the one line; exit status follows it
  local elapsed=$(( $(date +%s) - start ))
  echo "clean-root-check: $1 ($(( elapsed / 60 )) min; commit ${cloned:-none}; log $log)" |
    tee -a "$log"
}

if ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap from Debian"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends mmdebstrap >>"$log" 2>&1
fi

if ((fresh)) || [[ ! -s $tarball ]]; then
  say "building the bare bookworm root (mmdebstrap --variant=minbase) into $tarball"
  rm -rf --one-file-system "$tarball.part"
  mmdebstrap --variant=minbase --mode=root --format=tar bookworm "$tarball.part" \
    "deb $mirror/debian bookworm main" \
    "deb $mirror/debian bookworm-updates main" \
    "deb $mirror/debian-security bookworm-security main" >>"$log" 2>&1 ||
    { verdict "FAIL: mmdebstrap could not build the bare root"; exit 1; }
  mv "$tarball.part" "$tarball"
fi

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[i]}" 2>/dev/null || umount -lR "${mounts[i]}" 2>/dev/null || true
  done
  if ((keep)); then
    echo "clean-root-check: root kept in $root" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

# A root from the bare tarball, every time.
if [[ -d $root ]]; then
  umount -R "$root"/{proc,sys,dev,work/shared} 2>/dev/null || true
  rm -rf --one-file-system "$root"
fi
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# The committed HEAD (a clone: what CI and a new user get), with ../shared beside it.
mkdir -p "$root/work"
git clone -q --no-hardlinks "$repo" "$root/work/main" >>"$log" 2>&1
cloned=$(git -C "$root/work/main" rev-parse --short HEAD)
say "cloned $(git -C "$root/work/main" log -1 --format='%h %s' | cut -c1-100)"
mkdir -p "$root/work/shared"
if [[ -d $shared ]]; then
  mount --bind "$shared" "$root/work/shared"; mounts+=("$root/work/shared")
  mount -o remount,bind,ro "$root/work/shared"
else
  say "no $shared: the data tests skip"
fi
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
# /sys with what is mounted below it (slurmd needs the cgroup2 hierarchy in /sys/fs/cgroup).
mount --rbind /sys "$root/sys"; mount --make-rslave "$root/sys"; mounts+=("$root/sys")
mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; mounts+=("$root/dev")

in_root() {  # a login-like environment: nothing of the host's but the terminal-free basics
  env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    ${WAVEKIT_JOBS:+WAVEKIT_JOBS=$WAVEKIT_JOBS} chroot "$root" /bin/bash -c "cd /work/main && $1"
}

say "scripts/demo.sh in the clean root"
t0=$(date +%s)
if ! in_root "scripts/demo.sh" >>"$log" 2>&1; then
  tail -n 30 "$log" >&2
  verdict "FAIL: scripts/demo.sh failed in a clean Debian 12 root"
  exit 1
fi
demo_s=$(( $(date +%s) - t0 ))
if ! grep -q "64 waves reported" "$log"; then
  verdict "FAIL: scripts/demo.sh exited 0 but the main job printed no per-wave result"
  exit 1
fi
say "scripts/demo.sh passed in ${demo_s} s; scripts/test.sh in the clean root"
t0=$(date +%s)
if ! in_root "scripts/test.sh" >>"$log" 2>&1; then
  grep -E "tests passed|The following tests FAILED|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|\(Subprocess" "$log" | tail -n 30 >&2 || true
  verdict "FAIL: scripts/test.sh failed in a clean Debian 12 root ($(grep -E 'tests passed' "$log" | tail -1))"
  exit 1
fi
test_s=$(( $(date +%s) - t0 ))
verdict "PASS: demo.sh (${demo_s} s) and test.sh (${test_s} s, $(grep -E 'tests passed' "$log" | tail -1)) in a clean Debian 12 root"
