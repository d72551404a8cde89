#!/bin/sh
# Install git-prove-it from a release: detect the platform, download the archive and SHA256SUMS,
# verify the checksum, and install the binary into PREFIX/bin and its man pages into
# PREFIX/share/man/man1 (where `man`, and so `git help prove-it`, finds them).
#
#   curl -fsSL https://github.com/git-prove-it/git-prove-it/releases/latest/download/install.sh | sh
#   sh install.sh [--prefix DIR] [--version X.Y.Z] [--target TRIPLE] [--base-url URL]
#
# Environment (the flags win): PREFIX (default ~/.local), PROVE_IT_VERSION (default the latest
# release), PROVE_IT_TARGET, PROVE_IT_BASE_URL (a mirror, or a local release for tests: it holds
# SHA256SUMS and the archives; http(s):// or file://), PROVE_IT_REPO (the GitHub repository URL).
#
# The archive names are git-prove-it-<version>-<target>.tar.gz, the same pattern as
# .github/workflows/release.yml and Cargo.toml's [package.metadata.binstall] (a test keeps the
# three equal). Linux always gets the musl build: static, so it runs on any distribution.
set -eu

name=git-prove-it
repo=${PROVE_IT_REPO:-https://github.com/git-prove-it/git-prove-it}
prefix=${PREFIX:-}
version=${PROVE_IT_VERSION:-}
target=${PROVE_IT_TARGET:-}
base_url=${PROVE_IT_BASE_URL:-}

say() { printf 'install.sh: %s\n' "$*" >&2; }

# One plain sentence, then what to do, as the tool's own messages do.
die() {
  printf 'error: %s\n' "$1" >&2
  shift
  for hint in "$@"; do printf 'hint: %s\n' "$hint" >&2; done
  exit 1
}

usage() {
  sed -n '2,15s/^# \{0,1\}//p' "$0" 2>/dev/null || true
}

while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; version=$2; shift 2 ;;
    --version=*) version=${1#--version=}; shift ;;
    --target) [ $# -ge 2 ] || die "--target needs a target triple"; target=$2; shift 2 ;;
    --target=*) target=${1#--target=}; shift ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a URL"; base_url=$2; shift 2 ;;
    --base-url=*) base_url=${1#--base-url=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1'" "run 'sh install.sh --help' for the options" ;;
  esac
done

version=${version#v}
if [ -z "$prefix" ]; then
  [ -n "${HOME:-}" ] || die "HOME is not set, so there is no default prefix" "pass --prefix DIR"
  prefix=$HOME/.local
fi

if [ -z "$target" ]; then
  os=$(uname -s)
  arch=$(uname -m)
  case $arch in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) die "no release build for the $arch architecture" \
      "build from source: cargo install --locked git-prove-it" ;;
  esac
  case $os in
    Linux) target=$arch-unknown-linux-musl ;;
    Darwin) target=$arch-apple-darwin ;;
    *) die "no release build for $os" "build from source: cargo install --locked git-prove-it" ;;
  esac
fi

if [ -z "$base_url" ]; then
  if [ -n "$version" ]; then
    base_url=$repo/releases/download/v$version
  else
    base_url=$repo/releases/latest/download
  fi
fi
base_url=${base_url%/}

# fetch URL FILE: curl or wget, as the machine has; file:// is copied (mirrors on disk, tests).
fetch() {
  case $1 in
    file://*) cp "${1#file://}" "$2" ;;
    *)
      if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http' -fsSL -o "$2" "$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
      else
        die "neither curl nor wget is installed" "install one of them, or download $1 by hand"
      fi
      ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed, so the download cannot be verified" \
      "install coreutils (sha256sum) or perl (shasum)"
  fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/git-prove-it-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fetch "$base_url/SHA256SUMS" "$tmp/SHA256SUMS" \
  || die "could not download $base_url/SHA256SUMS" \
    "check the version (--version) and the network, or pass --base-url for a mirror"

# Without a version, the checksum list names the release's archive for this target.
if [ -n "$version" ]; then
  archive=$name-$version-$target.tar.gz
else
  archive=$(sed -n "s/^[0-9a-f]\{64\}  \*\{0,1\}\($name-[^ ]*-$target\.tar\.gz\)\$/\1/p" \
    "$tmp/SHA256SUMS" | head -n 1)
  [ -n "$archive" ] || die "the release has no archive for $target" \
    "build from source: cargo install --locked git-prove-it"
fi
expected=$(sed -n "s/^\([0-9a-f]\{64\}\)  \*\{0,1\}$archive\$/\1/p" "$tmp/SHA256SUMS" | head -n 1)
[ -n "$expected" ] || die "SHA256SUMS has no checksum for $archive" \
  "the release may lack a build for $target; build from source: cargo install --locked git-prove-it"

say "downloading $base_url/$archive"
fetch "$base_url/$archive" "$tmp/$archive" || die "could not download $base_url/$archive" \
  "check the version (--version) and the network, or pass --base-url for a mirror"

actual=$(sha256 "$tmp/$archive")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive: nothing was installed" \
    "SHA256SUMS says $expected, the download is $actual" \
    "the download is corrupt or was tampered with; try again, or fetch from the release page"
fi

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked" || die "could not unpack $archive"
dir=$tmp/unpacked/${archive%.tar.gz}
[ -f "$dir/$name" ] || die "$archive has no $name binary" "report this at $repo/issues"

bindir=$prefix/bin
mandir=$prefix/share/man/man1
mkdir -p "$bindir" "$mandir" || die "could not create $bindir and $mandir" \
  "pass a prefix you can write to: --prefix DIR"

# Copy beside the destination, then rename: a running git-prove-it is never half overwritten.
cp "$dir/$name" "$bindir/.$name.new" && chmod 755 "$bindir/.$name.new" \
  && mv -f "$bindir/.$name.new" "$bindir/$name" || die "could not install into $bindir"
for page in "$dir"/man/*.1; do
  [ -f "$page" ] || continue
  cp "$page" "$mandir/" || die "could not install the man pages into $mandir"
done

say "installed $bindir/$name ($("$bindir/$name" --version 2>/dev/null || echo "$archive"))"
say "installed the man pages into $mandir"
case ":${PATH:-}:" in
  *":$bindir:"*) ;;
  *)
    say "$bindir is not on PATH; add it, e.g. in ~/.profile:"
    say "  export PATH=\"$bindir:\$PATH\""
    say "(man, and so 'git help prove-it', finds the pages through PATH; or set MANPATH=$prefix/share/man:)"
    ;;
esac
