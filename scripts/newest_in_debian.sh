#!/usr/bin/env bash
# Which Boost and which standalone Asio Debian unstable (sid) carries today: the newest
# libboostX.Y-dev it has (a version of it for amd64), and its libasio-dev's upstream version.
# scripts/test.sh tests those, so the matrix follows unstable by itself instead of stopping when
# unstable moves on from a version named in the script.
#
# Usage: scripts/newest_in_debian.sh WORKDIR    e.g. scripts/newest_in_debian.sh build/sid
# Prints one line, "BOOST ASIO" (e.g. "1.92 1.36"); WORKDIR holds the private apt state while it
# runs (scripts/private_apt.sh; /etc/apt is not touched). Exits 1 with a reason if the package
# list cannot be read or holds no Boost or no Asio.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 WORKDIR" >&2
  exit 2
fi
. "$(dirname "$0")/private_apt.sh"
private_apt sid "$1" "the newest Boost and Asio"

boost=""
for pkg in $(apt-cache "${apt_opts[@]}" pkgnames libboost | grep -E '^libboost[0-9]+\.[0-9]+-dev$' | sort -rV); do
  # A name can outlive its package (a virtual or removed one): take the newest with a version.
  if [ -n "$(suite_version "$pkg")" ]; then
    boost=${pkg#libboost}
    boost=${boost%-dev}
    break
  fi
done
asio=$(suite_version libasio-dev)
asio=${asio#*:}                                   # 1:1.36.0-1 -> 1.36.0-1
asio=$(echo "$asio" | grep -oE '^[0-9]+\.[0-9]+' || true)  # -> 1.36
if [ -z "$boost" ] || [ -z "$asio" ]; then
  echo "newest_in_debian.sh: $suite_name lists no libboostX.Y-dev or no libasio-dev today (boost '${boost}', asio '${asio}')" >&2
  exit 1
fi
echo "$boost $asio"
