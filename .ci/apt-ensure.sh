#!/bin/sh
# Usage: sh .ci/apt-ensure.sh <label> "<debian packages>" "<executables>"
# Installs the Debian packages unless every executable is already there (on PATH, /usr/bin or /usr/sbin), then
# checks they are. Runs apt-get update only when the lists do not know the packages or the install fails on
# stale lists. Needs root or sudo. Used by install-radosgw.sh and install-tools.sh.
set -eu

LABEL="$1"
PACKAGES="$2"
BINARIES="$3"

has() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ] || [ -x "/usr/sbin/$1" ]
}

missing=""
for bin in $BINARIES; do
  has "$bin" || missing="$missing $bin"
done
if [ -z "$missing" ]; then
  echo "$LABEL: already installed"
  exit 0
fi
echo "$LABEL: missing$missing; installing $PACKAGES"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "$LABEL: need root (or sudo) to install $PACKAGES" >&2
    exit 1
  fi
fi

apt_install() {
  # --no-install-recommends: the recommended extras (dashboards, documentation...) are not needed by the tests.
  # shellcheck disable=SC2086 # the package list is split on purpose.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES
}
first=${PACKAGES%% *}
if ! apt-cache show "$first" >/dev/null 2>&1 || ! apt_install; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  apt_install
fi

for bin in $BINARIES; do
  has "$bin" || { echo "$LABEL: $bin still missing" >&2; exit 1; }
done
echo "$LABEL: installed"
