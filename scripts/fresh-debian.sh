#!/usr/bin/env bash
# The README's test command on a bare Debian 12, as a new user meets it: a
# bookworm made by debootstrap (minbase, with git, make and sudo only), a
# user who may use sudo, a clone of this repository's HEAD, then
# `./run.sh test`, which must install everything else itself. Run it before
# each release (docs/development.md#a-bare-debian-12). Needs root and
# debootstrap on a Debian machine; about 4 GB of disk and 30 minutes.
#
#   scripts/fresh-debian.sh [COMMAND]   default: ./run.sh test
#
#   FRESH_ROOT   where the chroot is made, anew each run
#                (default /var/tmp/attention-fresh-bookworm)
#   MIRROR       Debian's archive (default http://deb.debian.org/debian)
#   KEEP=1       leave the chroot behind for a look inside
#
# Only this machine's network setup is copied in (its resolver, its own
# certificate authorities and npm's use of them): nothing the project needs.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT=${FRESH_ROOT:-/var/tmp/attention-fresh-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
COMMAND=${1:-./run.sh test}
LEARNER=learner
REPO_IN_ROOT=/home/$LEARNER/attention

log() { echo "fresh-debian: $*" >&2; }

require() {
    if [ "$(id -u)" -ne 0 ]; then
        log "run as root (debootstrap and chroot need it)"
        exit 2
    fi
    command -v debootstrap >/dev/null || {
        log "debootstrap is missing: apt-get install debootstrap"
        exit 2
    }
}

# Every mount under ROOT, deepest first, then ROOT itself.
unmount_all() {
    local mounts
    mounts=$(awk -v root="$ROOT" '$2 == root || index($2, root "/") == 1 { print $2 }' /proc/self/mounts | sort -r)
    local m
    for m in $mounts; do umount -l "$m" 2>/dev/null || true; done
}

# Every process still running inside ROOT (a run stopped half way).
kill_inside() {
    local proc
    for proc in /proc/[0-9]*; do
        [ "$(readlink "$proc/root" 2>/dev/null)" = "$ROOT" ] && kill -9 "${proc#/proc/}" 2>/dev/null
    done
    return 0
}

clean() {
    kill_inside
    unmount_all
    [ "${KEEP:-}" = 1 ] || rm -rf --one-file-system "$ROOT"
}

make_root() {
    unmount_all
    rm -rf --one-file-system "$ROOT"
    mkdir -p "$ROOT"
    log "debootstrap bookworm (minbase, git make sudo) into $ROOT"
    debootstrap --variant=minbase --include=git,make,sudo bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 || {
        tail -20 "$ROOT.debootstrap.log" >&2
        exit 1
    }
}

copy_network_setup() {
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
    # A certificate authority of this machine's own (an egress proxy's) is
    # trusted inside too once Debian's ca-certificates is installed.
    if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
        mkdir -p "$ROOT/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
    fi
    [ ! -f /etc/npmrc ] || cp /etc/npmrc "$ROOT/etc/npmrc"
}

mount_system() {
    mount -t proc proc "$ROOT/proc"
    mount -t sysfs sys "$ROOT/sys"
    mount --rbind /dev "$ROOT/dev"
    mount --make-rslave "$ROOT/dev"
    mount -t tmpfs -o size=2g tmpfs "$ROOT/dev/shm"
}

add_learner() {
    # A uid of its own, which no user of the machine outside has.
    chroot "$ROOT" useradd --create-home --shell /bin/bash --uid 64123 "$LEARNER"
    echo "$LEARNER ALL=(ALL) NOPASSWD: ALL" >"$ROOT/etc/sudoers.d/$LEARNER"
    chmod 0440 "$ROOT/etc/sudoers.d/$LEARNER"
    git clone --quiet --no-hardlinks "$PWD" "$ROOT$REPO_IN_ROOT"
    chroot "$ROOT" chown -R "$LEARNER:$LEARNER" "$REPO_IN_ROOT"
}

run_as_learner() {
    log "as $LEARNER in $REPO_IN_ROOT: $COMMAND"
    local env_extra=()
    [ -z "${NODE_EXTRA_CA_CERTS:-}" ] || env_extra+=("NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS")
    chroot "$ROOT" /usr/bin/env -i HOME=/home/$LEARNER PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
        "${env_extra[@]}" /usr/bin/sudo -u "$LEARNER" --preserve-env=HOME,PATH,LANG,NODE_EXTRA_CA_CERTS \
        bash -c "cd $REPO_IN_ROOT && $COMMAND"
}

main() {
    require
    trap clean EXIT
    make_root
    copy_network_setup
    mount_system
    add_learner
    local status=0
    run_as_learner || status=$?
    log "'$COMMAND' exited $status on a bare Debian 12"
    return "$status"
}

main "$@"
