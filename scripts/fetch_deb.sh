#!/usr/bin/env bash
# Unpacks one Debian package into a directory, without touching the system: `apt-get download`
# runs on a private sources list, package lists and cache (under DEST/.apt, removed after);
# `dpkg -x` unpacks the package into DEST. /etc/apt and the installed packages stay as they are.
# Used by fetch_boost.sh and fetch_asio.sh for the test matrix's other Boosts and Asios.
#
# Usage: scripts/fetch_deb.sh SUITE PACKAGE UPSTREAM WHAT DEST
#   SUITE     trixie (Debian 13) or sid (Debian unstable)
#   PACKAGE   e.g. libboost1.90-dev
#   UPSTREAM  the upstream version the package must carry, e.g. 1.90 (its version is
#             [epoch:]UPSTREAM.*-revision)
#   WHAT      what it is, for messages: "Boost 1.90"
# If the suite no longer has the package, or has another upstream version of it (unstable
# moves on), it says so and exits 3: "Boost 1.90 is no longer in Debian unstable: ...".
set -euo pipefail

if [ $# -ne 5 ]; then
  echo "usage: $0 SUITE PACKAGE UPSTREAM WHAT DEST" >&2
  exit 2
fi
suite=$1 pkg=$2 upstream=$3 what=$4 dest=$5
. "$(dirname "$0")/private_apt.sh"
private_apt "$suite" "$dest" "$what"
# The version the suite has today (empty: no such package any more).
version=$(suite_version "$pkg")
if [ -z "$version" ]; then
  echo "fetch_deb.sh: $what is no longer in $suite_name: it has no package $pkg today." >&2
  echo "  Move the matrix to a version it has (apt-cache policy there), or take it out of scripts/test.sh." >&2
  exit 3
fi
case "${version#*:}" in
  "$upstream".*) ;;
  *)
    echo "fetch_deb.sh: $what is no longer in $suite_name: its $pkg is version $version today." >&2
    echo "  Move the matrix to that version, or take $what out of scripts/test.sh." >&2
    exit 3
    ;;
esac
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$pkg" >&2)
dpkg -x "$(ls "$apt_dir"/debs/"${pkg}"_*.deb)" "$dest"
