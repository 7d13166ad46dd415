#!/usr/bin/env bash
# Fetches the headers of another Boost release for the test matrix, without touching the
# system: Debian 13 (trixie) ships libboost1.83-dev and libboost1.88-dev, each one package
# holding all of that release's headers (plus static/shared libraries we never link).
# `apt-get download` runs on a private sources list, package lists and cache; `dpkg -x`
# unpacks the package into DEST. /etc/apt and the installed packages stay as they are.
#
# Usage: scripts/fetch_boost.sh VERSION DEST      e.g. scripts/fetch_boost.sh 1.88 build/boost-1.88
# Prints the include directory (DEST/usr/include) on stdout; does nothing else if DEST
# already holds that version's headers.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 VERSION DEST   (VERSION: 1.83 or 1.88, from Debian 13)" >&2
  exit 2
fi
version=$1
dest=$2
case "$version" in
  1.83|1.88) ;;
  *) echo "fetch_boost.sh: Boost $version is not in Debian 13 (1.83 and 1.88 are)" >&2; exit 2 ;;
esac
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
include="$dest/usr/include"

# BOOST_LIB_VERSION "1_88" in boost/version.hpp marks a complete unpack (written last below).
want="${version/./_}"
if [ -f "$dest/.complete" ] && grep -q "BOOST_LIB_VERSION \"$want\"" "$include/boost/version.hpp" 2>/dev/null; then
  echo "$include"
  exit 0
fi

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
if [ ! -f "$keyring" ]; then
  echo "fetch_boost.sh: $keyring missing (package debian-archive-keyring)" >&2
  exit 1
fi

apt_dir="$dest/.apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian trixie main" >"$apt_dir/sources.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Dir::State::status=/dev/null"
  -o "APT::Architecture=amd64"
  -o "APT::Sandbox::User=root"
  -qq
)
apt-get "${apt_opts[@]}" update >&2
pkg="libboost${version}-dev"
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$pkg" >&2)
deb=$(ls "$apt_dir"/debs/"${pkg}"_*.deb)
dpkg -x "$deb" "$dest"
if ! grep -q "BOOST_LIB_VERSION \"$want\"" "$include/boost/version.hpp"; then
  echo "fetch_boost.sh: $deb did not hold Boost $version headers" >&2
  exit 1
fi
rm -rf "$apt_dir"
touch "$dest/.complete"
echo "$include"
