#!/bin/sh
# Installs the Debian tools the certificate and web-client tests run: poppler-utils (pdfsig, pdftoppm,
# pdftotext), qpdf, libnss3-tools (certutil, the NSS database pdfsig trusts), zbar-tools (zbarimg, QR codes),
# openssl, chromium (Playwright drives it; web captures trust CAPTURE_CA_CERTS through an NSS database certutil
# makes), bubblewrap (bwrap: the sandbox of captures by a service that is not root), prometheus (promtool and a
# real server scraping /metrics; its alert rules checked with promtool), postgresql-client (pg_dump, pg_restore,
# psql: the operator's backup and restore), colord-data (an sRGB ICC profile for the PDF/A samples) and
# python3-pikepdf (the PAdES long-term and ICP-Brasil profile tests read /DSS and the signature dictionaries with
# it through Debian's /usr/bin/python3; the PDF/A-3b check reads files with it); softhsm2 and opensc (below); then
# ReplayWeb.page's built player for the replay test (fetch-replaywebpage.sh). Idempotent: does nothing when everything is there.
set -eu
sh "$(dirname "$0")/apt-ensure.sh" validators \
  "poppler-utils qpdf libnss3-tools zbar-tools openssl chromium bubblewrap prometheus postgresql-client" \
  "pdfsig pdftoppm pdftotext qpdf certutil zbarimg openssl chromium bwrap prometheus promtool pg_dump pg_restore psql"
# softhsm2 and opensc: a real PKCS#11 token (SoftHSM2) and pkcs11-tool to load a test chain into it, for the
# desktop client's token signing test (test/harness/softhsm.ts).
sh "$(dirname "$0")/apt-ensure.sh" pkcs11 "softhsm2 opensc" "softhsm2-util pkcs11-tool"
sh "$(dirname "$0")/fetch-replaywebpage.sh"
# colord-data: the sRGB ICC profile (/usr/share/color/icc/colord/sRGB.icc) of the PDF/A samples the independent
# PDF/A-3b check is tested against (test/harness/pdfa/make_samples.py). Data, not an executable: checked by path.
if [ ! -f /usr/share/color/icc/colord/sRGB.icc ]; then
  SUDO_ICC=""
  if [ "$(id -u)" -ne 0 ]; then SUDO_ICC="sudo"; fi
  $SUDO_ICC env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends colord-data ||
    { $SUDO_ICC env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
      $SUDO_ICC env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends colord-data; }
  test -f /usr/share/color/icc/colord/sRGB.icc
fi
echo "colord-data (sRGB ICC profile): installed"
# A Python module, not an executable: checked by importing it.
if /usr/bin/python3 -c 'import pikepdf' 2>/dev/null; then
  echo "pikepdf: already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
install_pikepdf() {
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pikepdf
}
install_pikepdf || { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && install_pikepdf; }
/usr/bin/python3 -c 'import pikepdf'
echo "pikepdf: installed"
