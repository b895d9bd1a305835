#!/usr/bin/env bash
# Installs what building and testing need, and only what is missing, on
# Debian 12: system packages from Debian's archive (apt-get, as root or
# through sudo), then the npm dev dependencies (npm ci --ignore-scripts).
# Quick and silent when everything is present, since `make test` runs it
# every time.
#
# A node that is already installed is kept whatever its origin (this
# machine has node 20 from a nodesource package also named nodejs).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "ensure-deps: $*" >&2; }
has_command() { command -v "$1" >/dev/null 2>&1; }
has_package() {
    dpkg -s "$1" 2>/dev/null | grep -qx 'Status: install ok installed'
}

# Debian packages whose command or files are missing.
missing_packages() {
    { has_command gcc && has_command make; } || echo build-essential
    has_command pkg-config || echo pkg-config
    has_package libcmocka-dev || echo libcmocka-dev
    has_package libcjson-dev || echo libcjson-dev
    has_command emcc || has_package emscripten || echo emscripten
    has_command node || echo nodejs
    has_command npm || echo npm
    has_command chromium || has_package chromium || echo chromium
    # The cross-engine tests (make test-engines): Firefox ESR, and WebKitGTK's
    # WebDriver with its MiniBrowser on a virtual display.
    has_command firefox-esr || echo firefox-esr
    has_command WebKitWebDriver || echo webkit2gtk-driver
    has_command Xvfb || echo xvfb
    has_command pdflatex || echo texlive-latex-base
    has_command pdftotext || echo poppler-utils
    has_command cmake || echo cmake
    # make lint: the C formatter (the JavaScript linter comes from npm).
    has_command clang-format || echo clang-format
    # Peak memory of build/attn (tests/cli/parse-memory.test.mjs).
    [ -x /usr/bin/time ] || echo time
    # make h5p packs the H5P package with zip; its test unpacks it with unzip.
    has_command zip || echo zip
    has_command unzip || echo unzip
    # libFuzzer (make fuzz, and the short fuzz runs of make test): Debian's
    # clang 14 and its runtime libraries.
    has_command clang-14 || echo clang-14
    has_package libclang-rt-14-dev || echo libclang-rt-14-dev
    # The Python package (make test-python): numpy, a virtual environment
    # with setuptools to install it offline, pytest, and nbconvert with a
    # kernel to execute the example notebook.
    has_package python3-numpy || echo python3-numpy
    has_package python3-venv || echo python3-venv
    has_package python3-setuptools || echo python3-setuptools
    # pip builds the package as a wheel (bdist_wheel) before installing it.
    has_package python3-wheel || echo python3-wheel
    has_package python3-pytest || echo python3-pytest
    has_package jupyter-nbconvert || echo jupyter-nbconvert
    has_package python3-ipykernel || echo python3-ipykernel
}

# Runs a command as root: directly, or through sudo (never waiting for a
# password when there is no terminal to type it in, as in CI).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif has_command sudo; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        log "not root and no sudo: install as root: apt-get install $*"
        exit 1
    fi
}

install_packages() {
    if ! has_command apt-get; then
        log "missing $*, and apt-get is not available (this script targets Debian 12)"
        exit 1
    fi
    log "installing $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
    local still_missing
    still_missing=$(missing_packages | tr '\n' ' ')
    if [ -n "$still_missing" ]; then
        log "still missing after apt-get install: $still_missing"
        exit 1
    fi
}

check_node_version() {
    local version major
    version=$(node --version) # v20.20.2
    major=${version#v}
    major=${major%%.*}
    if [ "$major" -lt 18 ]; then
        log "node $version is older than 18, which the WASM and browser tests need"
        exit 1
    fi
}

# npm ci when node_modules is missing or older than package-lock.json
# (node_modules/.package-lock.json is what npm last installed).
install_node_modules() {
    [ -f package-lock.json ] || return 0
    local installed=node_modules/.package-lock.json
    if [ ! -e "$installed" ] || [ package-lock.json -nt "$installed" ]; then
        log "npm ci"
        # No install scripts: onnxruntime-node's (bench only) downloads CUDA
        # binaries, geckodriver's and edgedriver's download drivers, and
        # h5p-standalone's runs `npx only-allow yarn`. None is needed: the
        # CPU binaries and esbuild's are in their packages, and the browsers
        # come from apt.
        npm ci --ignore-scripts --no-audit --no-fund
    fi
}

main() {
    local missing
    missing=$(missing_packages)
    if [ -n "$missing" ]; then
        # shellcheck disable=SC2086 # one package name per word
        install_packages $missing
    fi
    check_node_version
    install_node_modules
}

main "$@"
