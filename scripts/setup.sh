#!/bin/sh
# Installs what quire needs to build and test on Debian 12, or says exactly what to run.
# Usage: scripts/setup.sh [extra-debian-package ...]
set -eu
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake make gcc libc6-dev pkg-config libutf8proc-dev python3 python3-jsonschema python3-yaml python3-regex \
         python3-dev python3-setuptools python3-pip python3-pytest python3-distributed nodejs "$@"; do
  case "$p" in
    # a working node / npm from elsewhere (NodeSource, nvm, a tarball) is used as it is:
    # installing Debian's over it conflicts
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  have_pkg "$p" || need="$need $p"
done
# the Node package builds against the system's Node headers (node-gyp --nodedir=/usr) and
# installs from npm: Debian's libnode-dev and npm, unless the installed nodejs ships them
[ -e /usr/include/node/node_api.h ] || have_pkg libnode-dev || need="$need libnode-dev"
command -v npm >/dev/null 2>&1 || have_pkg npm || need="$need npm"
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "setup: installing:$need" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || apt-get update
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $need >/dev/null || apt-get install -y --no-install-recommends $need
else
  echo "setup: missing Debian packages:$need" >&2
  echo "setup: run:  sudo apt-get install -y$need" >&2
  exit 1
fi
