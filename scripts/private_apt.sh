# Sourced by fetch_deb.sh and newest_in_debian.sh: a private apt state for one Debian suite
# (sources list, package lists and cache under a directory of ours, removed on exit), so that
# reading another suite's packages never touches /etc/apt or the installed packages.
#
#   private_apt SUITE DIR WHAT   sets suite_name and apt_opts (pass "${apt_opts[@]}" to apt-get
#                                and apt-cache), reads the suite's package list; exits 1 with a
#                                message naming WHAT if deb.debian.org cannot be read.
private_apt() {
  local suite=$1 dir=$2 what=$3
  case "$suite" in
    trixie) suite_name="Debian 13 (trixie)" ;;
    sid) suite_name="Debian unstable (sid)" ;;
    *) echo "private_apt: unknown suite $suite (trixie or sid)" >&2; exit 2 ;;
  esac
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  if [ ! -f "$keyring" ]; then
    echo "private_apt: $keyring missing (package debian-archive-keyring)" >&2
    exit 1
  fi
  mkdir -p "$dir"
  apt_dir="$(cd "$dir" && pwd)/.apt"
  rm -rf "$apt_dir"
  trap 'rm -rf "$apt_dir"' EXIT
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" >"$apt_dir/sources.list"
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
  if ! apt-get "${apt_opts[@]}" update >&2; then
    echo "private_apt: could not read $suite_name's package list from deb.debian.org (network?) for $what" >&2
    exit 1
  fi
}

# The version SUITE has today of PACKAGE (empty: none), after private_apt.
suite_version() {
  apt-cache "${apt_opts[@]}" show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -n1 || true
}
