#!/usr/bin/env bash
# Build s3link (Go, standard library only) and its curl-multi reference
# client into tests/e2e/.data/bin/ (or $1), only when their sources, or the
# compiler, changed since the last build. Called by scripts/setup and by
# scripts/lib/s3servers.py when a binary is missing.
#
# Go: Debian's /usr/lib/go-1.19/bin/go when present (what CI builds with),
# else `go` on PATH; GOTOOLCHAIN=local (never download a toolchain),
# -buildvcs=false; GOCACHE/GOPATH under tests/e2e/.data/go when HOME is not
# writable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${1:-$repo/tests/e2e/.data/bin}
mkdir -p "$out"
out=$(cd "$out" && pwd)

GO=${S3LINK_GO:-}
if [[ -z $GO ]]; then
  if [[ -x /usr/lib/go-1.19/bin/go ]]; then GO=/usr/lib/go-1.19/bin/go
  elif command -v go >/dev/null; then GO=$(command -v go)
  elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go
  else echo "s3link build: no Go compiler (apt-get install golang-go)" >&2; exit 1
  fi
fi
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GO111MODULE=on
if [[ -z ${GOCACHE:-} ]] && ! { [[ -n ${HOME:-} && -d $HOME && -w $HOME ]]; }; then
  export GOCACHE=$repo/tests/e2e/.data/go/cache GOPATH=$repo/tests/e2e/.data/go/path
  mkdir -p "$GOCACHE" "$GOPATH"
fi

want=$( (cd "$here" && cat go.mod ./*.go && "$GO" version) | sha256sum | cut -d' ' -f1)
if [[ ! -x $out/s3link || $(cat "$out/.s3link.sha256" 2>/dev/null || true) != "$want" ]]; then
  echo "s3link build: $("$GO" version) -> $out/s3link"
  (cd "$here" && "$GO" build -trimpath -o "$out/s3link.tmp" .)
  mv "$out/s3link.tmp" "$out/s3link"
  echo "$want" > "$out/.s3link.sha256"
fi

cc=${CC:-cc}
src=$here/curlref/s3link_curlref.c
want=$( { cat "$src"; "$cc" --version | head -1; } | sha256sum | cut -d' ' -f1)
if [[ ! -x $out/s3link_curlref || $(cat "$out/.s3link_curlref.sha256" 2>/dev/null || true) != "$want" ]]; then
  echo "s3link build: $cc -> $out/s3link_curlref"
  "$cc" -O2 -Wall -o "$out/s3link_curlref.tmp" "$src" -lcurl
  mv "$out/s3link_curlref.tmp" "$out/s3link_curlref"
  echo "$want" > "$out/.s3link_curlref.sha256"
fi
