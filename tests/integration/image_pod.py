#!/usr/bin/env python3
"""One pod of deploy/fleet.yaml as podman containers of the real image, for image.sh.

    image_pod.py MANIFEST CONTAINERFILE README FILES_DIR POD_DIR

First does all that fleet_pod.py does (its main(), with an empty stand-in for
the image's files, which the real image brings here): checks that the manifest,
the Containerfile and README's `kubectl create secret` line agree, and lays out
the pod's volumes under POD_DIR/volumes as the kubelet does (the Secret's files
as symlinks into ..data, root-owned, group fsGroup, mode 0440; the emptyDir
0777, setgid fsGroup). Then writes, for each init container (init-N, in order)
and the game server container (server), what `podman run` needs to run that
container of the manifest from the image:

  NAME.podman   the options before the image, NUL-separated:
                --user and --group-add (runAsUser, runAsGroup, fsGroup,
                supplementalGroups), --read-only (readOnlyRootFilesystem; no
                tmpfs on /tmp and /run, which a pod does not get either),
                --cap-drop/--cap-add, no-new-privileges (allowPrivilegeEscalation:
                false), --memory and --cpus (resources.limits), --env (env:
                value or a stand-in pod's fieldRef), --workdir, --entrypoint
                (command), and a --volume per volumeMount (":ro" when readOnly)
                onto POD_DIR/volumes/<volume>[/subPath]
  NAME.args     the arguments after the image (args, $(VAR) expanded), NUL-separated

Nothing is rewritten: the container sees the manifest's own paths. image.sh
adds the runtime's flags (--runtime, --ulimit, --network=host) and the
loopback address and port. Exits 1 with a message naming what it cannot map.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fleet_pod  # noqa: E402  (the stand-in pod: its checks, volumes and parsers)
from fleet_pod import expand_k8s, fail, find_container, write_list  # noqa: E402

import yaml  # noqa: E402


def memory_bytes(quantity):
    """A Kubernetes memory quantity (64Mi, 1G, 1000) in bytes."""
    text = str(quantity)
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "k": 10**3, "M": 10**6, "G": 10**9}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


def cpus(quantity):
    """A Kubernetes CPU quantity (100m, 1, "0.5") as podman's --cpus value."""
    text = str(quantity)
    value = float(text[:-1]) / 1000 if text.endswith("m") else float(text)
    return f"{value:g}"


def podman_options(pod_spec, container, pod_dir):
    """The podman run options and arguments for one container of the pod."""
    name = container["name"]
    pod_sc = pod_spec.get("securityContext") or {}
    sc = container.get("securityContext") or {}
    options = []
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
    if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) and uid == 0:
        fail(f"container {name!r}: runAsNonRoot with runAsUser 0")
    if uid is not None:
        options.append(f"--user={uid}:{gid if gid is not None else uid}")
    groups = ([pod_sc["fsGroup"]] if pod_sc.get("fsGroup") is not None else []) + \
        list(pod_sc.get("supplementalGroups") or [])
    options += [f"--group-add={g}" for g in groups]
    if sc.get("readOnlyRootFilesystem"):
        options += ["--read-only", "--read-only-tmpfs=false"]
    capabilities = sc.get("capabilities") or {}
    options += [f"--cap-drop={c.lower()}" for c in capabilities.get("drop") or []]
    options += [f"--cap-add={c.lower()}" for c in capabilities.get("add") or []]
    if sc.get("allowPrivilegeEscalation") is False:
        options.append("--security-opt=no-new-privileges")
    if sc.get("privileged"):
        fail(f"container {name!r}: privileged is not mapped by this stand-in")
    limits = (container.get("resources") or {}).get("limits") or {}
    if "memory" in limits:
        options.append(f"--memory={memory_bytes(limits['memory'])}")
    if "cpu" in limits:
        options.append(f"--cpus={cpus(limits['cpu'])}")

    env = {}
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = expand_k8s(str(item["value"]), env)
        elif "fieldRef" in (item.get("valueFrom") or {}):
            path = item["valueFrom"]["fieldRef"]["fieldPath"]
            if path not in fleet_pod.POD_FIELDS:
                fail(f"env {item['name']}: fieldRef {path} has no stand-in value")
            env[item["name"]] = fleet_pod.POD_FIELDS[path]
        else:
            fail(f"env {item['name']}: only value and fieldRef are handled by this stand-in")
    if container.get("envFrom"):
        fail(f"container {name!r}: envFrom is not handled by this stand-in")
    options += [f"--env={k}={v}" for k, v in env.items()]
    if container.get("workingDir"):
        options.append(f"--workdir={container['workingDir']}")

    volumes = {v["name"] for v in pod_spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        if mount["name"] not in volumes:
            fail(f"container {name!r} mounts {mount['name']!r}, which is not a volume")
        host = os.path.join(pod_dir, "volumes", mount["name"])
        if mount.get("subPath"):
            host = os.path.join(host, mount["subPath"])
        options.append(f"--volume={host}:{mount['mountPath']}" + (":ro" if mount.get("readOnly") else ""))

    # command replaces the image's ENTRYPOINT (and drops its CMD), args its CMD.
    if "command" in container:
        options.append("--entrypoint=" + json.dumps([expand_k8s(str(w), env) for w in container["command"]]))
    args = [expand_k8s(str(w), env) for w in container.get("args") or []]
    return options, args


def main():
    manifest_path, containerfile_path, readme_path, files_dir, pod_dir = sys.argv[1:6]
    # fleet_pod.py's checks and volumes; its image tree is only looked for, not run.
    image_root = os.path.join(pod_dir, "fleet-pod-image")
    image = fleet_pod.Containerfile(containerfile_path)
    os.makedirs(os.path.join(image_root, (image.prefix or "/usr/local").lstrip("/")))
    sys.argv = [sys.argv[0], manifest_path, containerfile_path, readme_path, image_root, files_dir, pod_dir]
    fleet_pod.main()

    manifest = yaml.safe_load(open(manifest_path, encoding="utf-8"))
    gameserver = manifest["spec"]["template"]["spec"]
    pod_spec = gameserver["template"]["spec"]
    server = find_container(pod_spec, gameserver.get("container"))
    containers = [(f"init-{i}", c) for i, c in enumerate(pod_spec.get("initContainers") or [])]
    for name, container in containers + [("server", server)]:
        options, args = podman_options(pod_spec, container, pod_dir)
        write_list(os.path.join(pod_dir, f"{name}.podman"), options)
        write_list(os.path.join(pod_dir, f"{name}.args"), args)


if __name__ == "__main__":
    main()
