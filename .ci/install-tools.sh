#!/bin/sh
# Installs the Debian validators the certificate tests run against (issue 5): poppler-utils (pdfsig, pdftoppm,
# pdftotext), qpdf, libnss3-tools (certutil, the NSS database pdfsig trusts) and zbar-tools (zbarimg, QR codes),
# and Chromium, which Playwright drives for the desktop client's web build (issue 8).
# openssl is on every machine. Idempotent: does nothing when every executable is there.
set -eu

PACKAGES="poppler-utils qpdf libnss3-tools zbar-tools openssl chromium"
BINARIES="pdfsig pdftoppm pdftotext qpdf certutil zbarimg openssl chromium"

missing=""
for bin in $BINARIES; do
  command -v "$bin" >/dev/null 2>&1 || missing="$missing $bin"
done
if [ -z "$missing" ]; then
  echo "validators: already installed"
  exit 0
fi
echo "validators: missing$missing; installing $PACKAGES"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "validators: need root (or sudo) to install $PACKAGES" >&2
    exit 1
  fi
fi

apt_install() {
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES
}
if ! apt-cache show zbar-tools >/dev/null 2>&1 || ! apt_install; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
  apt_install
fi
