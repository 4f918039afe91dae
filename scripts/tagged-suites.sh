#!/usr/bin/env bash
# The suites of the test targets (Tests/*Tests) whose @Suite carries one of the tags named
# (`scripts/tagged-suites.sh nginx s3`), as an alternation of their type names for
# `swift test --skip` (`make check`): the first type declared from the @Suite line on. A test that
# starts nginx, moto or Chromium without its tag fails with a message (ServerTags.require), so a
# suite left untagged is seen in `make check`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 TAG..." >&2; exit 2; }
tags=$(printf '%s|' "$@"); tags=${tags%|}
awk -v tags="$tags" '
  $0 ~ "@Suite\\(.*\\.tags\\([^)]*\\.(" tags ")([,)]|$)" { want = 1 }
  want && match($0, /(struct|enum|class|actor) [A-Za-z_][A-Za-z0-9_]*/) {
    split(substr($0, RSTART, RLENGTH), word, " "); print word[2]; want = 0
  }' Tests/*Tests/*.swift | sort -u | paste -sd'|' -
