#!/usr/bin/env bash
# Fetches the headers of another Boost release for the test matrix, without touching the
# system (scripts/fetch_deb.sh: a private apt state, `dpkg -x`). Each libboostX.Y-dev package
# holds all of that release's headers (plus static/shared libraries we never link):
#   1.83, 1.88  from Debian 13 (trixie), pinned
#   any other   from Debian unstable (sid): scripts/test.sh asks scripts/newest_in_debian.sh
#               which one it has today; if it no longer has the version asked for, this says so
#               ("Boost 1.90 is no longer in Debian unstable: ...") and exits 3.
#
# Usage: scripts/fetch_boost.sh VERSION DEST      e.g. scripts/fetch_boost.sh 1.88 build/boost-1.88
# Prints the include directory (DEST/usr/include) on stdout; does nothing else if DEST
# already holds that version's headers.
set -euo pipefail

if [ $# -ne 2 ] || ! [[ $1 =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "usage: $0 VERSION DEST   (VERSION: 1.83 or 1.88 from Debian 13, another X.Y from Debian unstable)" >&2
  exit 2
fi
version=$1
dest=$2
case "$version" in
  1.83|1.88) suite=trixie ;;
  *) suite=sid ;;
esac
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
include="$dest/usr/include"

# BOOST_LIB_VERSION "1_88" in boost/version.hpp, and .complete (written last below), mark a
# complete unpack.
want="${version/./_}"
if [ -f "$dest/.complete" ] && grep -q "BOOST_LIB_VERSION \"$want\"" "$include/boost/version.hpp" 2>/dev/null; then
  echo "$include"
  exit 0
fi
rm -f "$dest/.complete"
"$(dirname "$0")/fetch_deb.sh" "$suite" "libboost${version}-dev" "$version" "Boost $version" "$dest"
if ! grep -q "BOOST_LIB_VERSION \"$want\"" "$include/boost/version.hpp"; then
  echo "fetch_boost.sh: libboost${version}-dev did not hold Boost $version headers" >&2
  exit 1
fi
touch "$dest/.complete"
echo "$include"
