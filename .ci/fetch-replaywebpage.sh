#!/bin/sh
# Fetches ReplayWeb.page's built player (ui.js and sw.js) from its npm package into .tmp/replaywebpage/ (ignored
# by git), for the replay test (test/e2e/web-capture-replay.test.ts). Only the tarball is fetched (`npm pack`),
# never installed: its dependencies include a warcio version the registry may not have, and the two built files
# are all the test serves. The version is pinned and the tarball checked against the registry's SHA-512
# integrity before anything is taken from it. Idempotent: does nothing when the files of this version are there.
set -eu
VERSION="2.5.3"
INTEGRITY="sha512-nCj2PSON3BxeSJKE8AsYPyULv0XPZKJWfy4l9PyQre9SqwLZ+WKZVs/sfLqPOQ4GrH+0YkjbwOhr8cSTH08gsQ=="

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/.tmp/replaywebpage"
if [ -f "$DEST/ui.js" ] && [ -f "$DEST/sw.js" ] && [ "$(cat "$DEST/VERSION" 2>/dev/null)" = "$VERSION $INTEGRITY" ]; then
  echo "replaywebpage $VERSION: already fetched"
  exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack "replaywebpage@$VERSION" --silent >/dev/null)
TARBALL="$WORK/replaywebpage-$VERSION.tgz"
ACTUAL="sha512-$(openssl dgst -sha512 -binary "$TARBALL" | base64 | tr -d '\n')"
if [ "$ACTUAL" != "$INTEGRITY" ]; then
  echo "replaywebpage $VERSION: the tarball's integrity is $ACTUAL, not the pinned $INTEGRITY" >&2
  exit 1
fi
tar -xzf "$TARBALL" -C "$WORK" package/ui.js package/sw.js package/LICENSE
mkdir -p "$DEST"
mv "$WORK/package/ui.js" "$WORK/package/sw.js" "$WORK/package/LICENSE" "$DEST/"
echo "$VERSION $INTEGRITY" >"$DEST/VERSION"
echo "replaywebpage $VERSION: fetched into $DEST"
