#!/bin/sh
# Installs the Debian tools the certificate and web-client tests run: poppler-utils (pdfsig, pdftoppm,
# pdftotext), qpdf, libnss3-tools (certutil, the NSS database pdfsig trusts), zbar-tools (zbarimg, QR codes),
# openssl, and chromium (Playwright drives it). Idempotent: does nothing when every executable is there.
set -eu
exec sh "$(dirname "$0")/apt-ensure.sh" validators "poppler-utils qpdf libnss3-tools zbar-tools openssl chromium" \
  "pdfsig pdftoppm pdftotext qpdf certutil zbarimg openssl chromium"
