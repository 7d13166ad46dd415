#!/usr/bin/env bash
# Fetches the headers of a newer standalone Asio for the test matrix, without touching the
# system (scripts/fetch_deb.sh: a private apt state, `dpkg -x`): libasio-dev is header-only.
#   X.Y  from Debian unstable (sid): scripts/test.sh asks scripts/newest_in_debian.sh which
#        one it has today; if its libasio-dev is another version, this says so ("standalone
#        Asio 1.36 is no longer in Debian unstable: ...") and exits 3.
# (Asio 1.22, the oldest supported, is the system's: Debian 12's libasio-dev.)
#
# Usage: scripts/fetch_asio.sh VERSION DEST      e.g. scripts/fetch_asio.sh 1.36 build/asio-1.36
# Prints the include directory (DEST/usr/include, holding asio.hpp) on stdout; does nothing
# else if DEST already holds that version's headers.
set -euo pipefail

if [ $# -ne 2 ] || ! [[ $1 =~ ^[0-9]+\.[0-9]+$ ]]; then
  echo "usage: $0 VERSION DEST   (VERSION: X.Y, the one Debian unstable has, e.g. 1.36)" >&2
  exit 2
fi
version=$1
dest=$2
suite=sid
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
include="$dest/usr/include"

# ASIO_VERSION 103600 (1.36.x) in asio/version.hpp, and .complete, mark a complete unpack.
want="$(printf '%d%03d' "${version%%.*}" "${version#*.}")"
unpacked() { grep -Eq "define ASIO_VERSION ${want}[0-9]{2}\b" "$include/asio/version.hpp" 2>/dev/null; }
if [ -f "$dest/.complete" ] && unpacked; then
  echo "$include"
  exit 0
fi
rm -f "$dest/.complete"
"$(dirname "$0")/fetch_deb.sh" "$suite" libasio-dev "$version" "standalone Asio $version" "$dest"
if ! unpacked; then
  echo "fetch_asio.sh: libasio-dev did not hold Asio $version headers" >&2
  exit 1
fi
touch "$dest/.complete"
echo "$include"
