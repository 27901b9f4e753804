# Shared by the scripts: install missing Debian packages, configure and build.
# Sourced, not run.

# The packages every build needs (DESIGN.md's list).
PTRON_BUILD_PACKAGES="meson ninja-build pkg-config gcc g++ libopenblas-openmp-dev check libxxhash-dev zlib1g-dev openmpi-bin libopenmpi-dev"
# The Python binding and its tests (Debian's python3; pandas for scikit-learn's checks of
# DataFrame input, which skip without it); pip install and the wheel offline (the build
# backend meson-python, which needs patchelf for the library it bundles, build, venv).
PTRON_PYTHON_PACKAGES="python3-numpy python3-scipy python3-sklearn python3-pytest python3-pandas
    python3-mesonpy python3-build python3-venv patchelf"

# ensure_packages PKG...: apt-get install whatever is missing (sudo when not root).
ensure_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2 || true
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# build_dir DIR [meson options...]: configure once (reconfigure if options change), then build.
build_dir() {
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; return 1; }
    fi
    ninja -C "$dir" >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log" >&2; return 1; }
}
