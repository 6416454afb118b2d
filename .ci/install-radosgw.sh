#!/bin/sh
# Installs the Debian packages behind test/harness/radosgw.ts (a real S3 server for the storage tests):
# radosgw, ceph-mon and ceph-osd, which pull in ceph-common (ceph, radosgw-admin) and ceph-base (monmaptool).
# Idempotent: does nothing when every executable is already there (see apt-ensure.sh).
set -eu
exec sh "$(dirname "$0")/apt-ensure.sh" radosgw "radosgw ceph-mon ceph-osd" \
  "ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool"
