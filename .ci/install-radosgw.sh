#!/bin/sh
# Installs the Debian packages behind test/harness/radosgw.ts (a real S3 server for the storage tests):
# radosgw, ceph-mon and ceph-osd, which pull in ceph-common (ceph, radosgw-admin) and ceph-base (monmaptool).
# Idempotent: does nothing when every executable is already there; runs apt-get update only when needed.
set -eu

PACKAGES="radosgw ceph-mon ceph-osd"
BINARIES="ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool"

missing=""
for bin in $BINARIES; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/bin/$bin" ] || [ -x "/usr/sbin/$bin" ] || missing="$missing $bin"
done
if [ -z "$missing" ]; then
  echo "radosgw: already installed"
  exit 0
fi
echo "radosgw: missing$missing; installing $PACKAGES"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "radosgw: need root (or sudo) to install $PACKAGES" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() {
  # --no-install-recommends: the recommended extras (ceph-mgr dashboards, etc.) are not needed by the harness.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES
}

# Refresh the package lists only when they do not know the packages or the install fails on stale lists.
if ! apt-cache show radosgw >/dev/null 2>&1 || ! apt_install; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  apt_install
fi

for bin in $BINARIES; do
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/bin/$bin" ] || { echo "radosgw: $bin still missing" >&2; exit 1; }
done
echo "radosgw: installed"
