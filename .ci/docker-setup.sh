#!/usr/bin/env bash
# CI-machine setup for the kind e2e: a running Docker engine that can start privileged containers,
# and the Debian packages the offline node image is built with.
#
#   .ci/docker-setup.sh        raise the inotify limits kind's eight nodes need; install Debian's docker.io if dockerd is missing, add the runc wrapper
#                              if this host's capability bounding set lacks CAP_SYS_RESOURCE, start dockerd;
#                              install mmdebstrap, gcc, libseccomp-dev, busybox-static and tini if missing
#
# Idempotent: a second run changes nothing. Needs root (apt-get, /etc/docker). Not part of the product:
# users' CI (GitHub Actions) has a working Docker already, see docs/clusters.md.
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "docker-setup: $*"; }
die() { echo "docker-setup: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || { docker info >/dev/null 2>&1 && { say "docker is running (not root: nothing to set up)"; exit 0; }; die "Docker is not running and setting it up needs root: run this as root, or start Docker yourself"; }

# Debian packages, by a file each one installs: docker.io, and the offline node image's build tools
# (mmdebstrap for the rootfs, gcc + libc6-dev for the static pause, libseccomp-dev + pkg-config for
# runc's seccomp support, busybox-static for the steps' image, tini for Tekton's resolvers image).
missing=()
for pair in docker.io:/usr/sbin/dockerd mmdebstrap:/usr/bin/mmdebstrap gcc:/usr/bin/gcc libc6-dev:/usr/include/stdio.h \
            libseccomp-dev:/usr/include/seccomp.h pkg-config:/usr/bin/pkg-config busybox-static:/bin/busybox tini:/usr/bin/tini-static; do
  [ -e "${pair#*:}" ] || missing+=("${pair%%:*}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# CAP_SYS_RESOURCE is capability 24: bit 24 of the bounding set in /proc/self/status.
cap_bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
wrapper=/usr/local/libexec/rescon-ci/runc-drop-capability
daemon_json=/etc/docker/daemon.json
changed=0
if (( (16#$cap_bnd >> 24 & 1) == 0 )); then
  say "this host lacks CAP_SYS_RESOURCE (CapBnd=$cap_bnd): runc runs through $wrapper"
  install -D -m 0755 runc-drop-capability "$wrapper.new"
  if ! cmp -s "$wrapper.new" "$wrapper" 2>/dev/null; then mv "$wrapper.new" "$wrapper"; changed=1; else rm -f "$wrapper.new"; fi
  mkdir -p /etc/docker
  want=$(python3 - "$daemon_json" "$wrapper" <<'PY'
import json, sys
path, wrapper = sys.argv[1], sys.argv[2]
try:
    config = json.load(open(path))
except (OSError, ValueError):
    config = {}
config.setdefault("runtimes", {})["runc-drop-capability"] = {"path": wrapper}
config["default-runtime"] = "runc-drop-capability"
print(json.dumps(config, indent=2, sort_keys=True))
PY
)
  if [ "$want" != "$(cat "$daemon_json" 2>/dev/null)" ]; then
    printf '%s\n' "$want" > "$daemon_json.new" && mv "$daemon_json.new" "$daemon_json"; changed=1
  fi
fi

running() { docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }
if running && [ "$changed" = 1 ]; then
  say "configuration changed: restarting dockerd"
  if [ -f /var/run/rescon-dockerd.pid ]; then kill "$(cat /var/run/rescon-dockerd.pid)" || true; for _ in $(seq 60); do running || break; sleep 1; done
  elif command -v systemctl >/dev/null && [ "$(ps -p 1 -o comm=)" = systemd ]; then systemctl restart docker
  else die "dockerd runs but was not started by this script: restart it to load $daemon_json"; fi
fi
if ! running; then
  if command -v systemctl >/dev/null && [ "$(ps -p 1 -o comm=)" = systemd ]; then
    systemctl start docker
  else
    say "starting dockerd (log: /var/log/rescon-dockerd.log)"
    nohup dockerd >/var/log/rescon-dockerd.log 2>&1 &
    echo $! > /var/run/rescon-dockerd.pid
  fi
  for _ in $(seq 60); do running && break; sleep 1; done
  running || die "dockerd did not answer within 60s: read /var/log/rescon-dockerd.log"
fi
# Eight kind nodes (kind-config.yaml) each run a kubelet, containerd and kube-proxy, all holding
# inotify instances: at the kernel's default of 128 per user, kube-proxy fails on some nodes with
# "fsnotify watcher init: too many open files". kind's known issues give these values.
for pair in fs.inotify.max_user_instances:512 fs.inotify.max_user_watches:524288; do
  key=${pair%%:*} want=${pair#*:}
  if [ "$(sysctl -n "$key")" -lt "$want" ]; then say "raising $key to $want (kind's nodes need it)"; sysctl -qw "$key=$want"; fi
done
say "docker $(docker info --format '{{.ServerVersion}} ({{.DefaultRuntime}} runtime, {{.CgroupVersion}} cgroups)')"
