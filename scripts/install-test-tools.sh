#!/usr/bin/env bash
# Debian packages the end-to-end tests use, installed when missing (needs root and apt):
# pebble + pebble-challtestsrv (a real ACME CA and DNS), Chromium (landing pages),
# zbarimg and ZXingReader (two independent QR decoders), pdftoppm and pdfimages (poppler-utils: PDF
# codes rendered and checked for raster images), PostgreSQL (the scale-out store; tests initdb their
# own cluster into a temp dir), Prometheus (scrapes a test server's metrics), systemd
# (systemd-analyze verify checks deploy/shortlink.service), openssl and util-linux's setpriv
# (start-up errors).
set -uo pipefail
command -v apt-get >/dev/null 2>&1 || exit 0
missing=()
command -v pebble-challtestsrv >/dev/null 2>&1 || missing+=(pebble)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)
command -v ZXingReader >/dev/null 2>&1 || missing+=(zxing-cpp-tools)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
# openssl makes certificate files for the start-up tests; setpriv (util-linux) runs the binary as another user.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing test tools: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" \
  || echo "could not install ${missing[*]}: the tests that need them will fail or be skipped"
