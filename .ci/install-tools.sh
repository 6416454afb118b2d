#!/bin/sh
# Installs the Debian tools the certificate and web-client tests run: poppler-utils (pdfsig, pdftoppm,
# pdftotext), qpdf, libnss3-tools (certutil, the NSS database pdfsig trusts), zbar-tools (zbarimg, QR codes),
# openssl, chromium (Playwright drives it), and python3-pikepdf (the ICP-Brasil profile tests read the PDF
# dictionaries with it). Idempotent: does nothing when every executable (and the pikepdf module) is there.
set -eu
# python3-pikepdf has no executable for apt-ensure.sh to look for: checked by importing it with Debian's python3.
if ! /usr/bin/python3 -c 'import pikepdf' >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pikepdf || {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pikepdf
  }
  /usr/bin/python3 -c 'import pikepdf' || { echo "pikepdf: still missing" >&2; exit 1; }
fi
exec sh "$(dirname "$0")/apt-ensure.sh" validators "poppler-utils qpdf libnss3-tools zbar-tools openssl chromium" \
  "pdfsig pdftoppm pdftotext qpdf certutil zbarimg openssl chromium"
