#!/bin/sh
# A RAM-backed ext4 for bench/memory_ops.py (issue 13 §6): an image file on tmpfs (/dev/shm),
# formatted ext4 and loop-mounted. A journal commit there has no device latency, so it is the
# fastest any ext4 disk can be: the "fast disk" row of docs/benchmarks.md ("Memory writes").
#
#   sh bench/ramdisk_ext4.sh [MOUNT_POINT]        # set up (idempotent), prints the mount point
#   sh bench/ramdisk_ext4.sh --remove [MOUNT_POINT]
#   .venv/bin/python bench/memory_ops.py --dir /dev/shm --dir MOUNT_POINT --dir /tmp
#
# Needs root (mount) and util-linux + e2fsprogs. Defaults: MOUNT_POINT=/mnt/hermes-ext4,
# image /dev/shm/hermes-ext4.img of 256 MiB (HERMES_EXT4_IMAGE / HERMES_EXT4_SIZE override them).
# mkfs.ext4 defaults: 256-byte inodes (nanosecond timestamps), ordered journal, as on a real disk.
set -eu
remove=0
if [ "${1:-}" = "--remove" ]; then remove=1; shift; fi
mnt=${1:-/mnt/hermes-ext4}
img=${HERMES_EXT4_IMAGE:-/dev/shm/hermes-ext4.img}
size=${HERMES_EXT4_SIZE:-256M}

if [ "$remove" = 1 ]; then
    if mountpoint -q "$mnt"; then umount "$mnt"; fi
    rm -f "$img"
    rmdir "$mnt" 2>/dev/null || true
    exit 0
fi
if mountpoint -q "$mnt"; then
    echo "$mnt"
    exit 0
fi
[ "$(id -u)" = 0 ] || { echo "ramdisk_ext4.sh: mounting needs root" >&2; exit 1; }
mkdir -p "$mnt"
truncate -s "$size" "$img"
mkfs.ext4 -q -F "$img"
mount -o loop "$img" "$mnt"
chmod 1777 "$mnt"
echo "$mnt"
