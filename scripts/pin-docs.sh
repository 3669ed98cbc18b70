#!/usr/bin/env bash
# Pins every use of this project's Action in the docs and the example
# workflows to a release's commit, with the tag in a comment:
#
#   scripts/pin-docs.sh v1.2.3 "$(git rev-list -n 1 v1.2.3)"
#
# Run it after the release tag exists (the SHA must be the tag's commit), and
# commit the result on main. internal/doclint's TestDocsPinWhatTheyUse checks
# every pin is a full SHA tagged with the release action.yml runs.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-}" sha="${2:-}"
if ! [[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ && "$sha" =~ ^[0-9a-f]{40}$ ]]; then
  echo "usage: scripts/pin-docs.sh vMAJOR.MINOR.PATCH <40-hex commit SHA> (got '${tag}' '${sha}')" >&2
  exit 2
fi
files=(README.md docs/*.md docs/examples/*.yml)
sed -i.bak -E "s#(^|[^/])autopilot-dev/autopilot@[0-9A-Za-z._-]+( *\# *v[0-9]+\.[0-9]+\.[0-9]+)?#\1autopilot-dev/autopilot@${sha} \# ${tag}#g" "${files[@]}"
for f in "${files[@]}"; do rm -f "$f.bak"; done
grep -n "autopilot-dev/autopilot@" "${files[@]}"
