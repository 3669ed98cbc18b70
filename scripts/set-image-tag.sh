#!/usr/bin/env bash
# Points action.yml's runs.image at the image the release workflow pushes for
# a tag, so the Action at that tag runs exactly that release's image:
#
#   scripts/set-image-tag.sh v1.2.3 && git commit -am "release v1.2.3" && git tag v1.2.3
#
# The release workflow refuses a tag whose action.yml names another image.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-}"
if ! [[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "usage: scripts/set-image-tag.sh vMAJOR.MINOR.PATCH (got '${tag}')" >&2
  exit 2
fi
sed -i.bak -E "s#^(  image: docker://ghcr\.io/[^:]+):.*#\1:${tag}#" action.yml
rm -f action.yml.bak
grep -n '^  image:' action.yml
