#!/usr/bin/env python3
"""A stand-in for one pod of deploy/fleet.yaml, for fleet_manifest.sh.

    fleet_pod.py MANIFEST CONTAINERFILE README IMAGE_ROOT FILES_DIR POD_DIR

Reads the Agones Fleet MANIFEST (PyYAML) and the CONTAINERFILE its image is
built from, checks that they agree with each other and with the Secret that
the manifest's header tells the operator to create (the same
`kubectl create secret` line must be in README), lays out the pod's volumes
under POD_DIR/volumes as the kubelet would, and writes what to run to POD_DIR:

  user              "UID GID GROUPS" the containers run as (runAsUser,
                    runAsGroup; fsGroup as supplementary group), or "" if the
                    manifest sets none
  init-N.argv       each init container's argv, NUL-separated, in order
  init-N.env        its environment (K=V, NUL-separated)
  init-N.cwd        its working directory
  server.argv/.env/.cwd   the same for the game server container
  agones            "1" if the game server's argv has --agones, else "0"
  server-key        the path of the Secret's file the server key comes from,
                    or "" (then the server creates its own)

What a kubelet and the container runtime would do, and this does instead:
  - the image's files are IMAGE_ROOT, a `cmake --install` staged with the
    DESTDIR and prefix of the Containerfile's build stage (its `COPY --from`
    line), plus the files the final stage COPYs from the build context; the
    rest of the image (Debian 12 slim) is this machine's own /bin, /usr ...;
  - every volume mount and every file the image adds is a directory under
    POD_DIR: the paths of the container's filesystem under those prefixes
    (mount paths, COPY destinations) are rewritten to POD_DIR in the argv,
    the environment and the config file the image COPYs; nothing else is
    changed (fleet_manifest.sh adds --bind 127.0.0.1 --port N for loopback);
  - a Secret volume holds the files FILES_DIR/<file> that the kubectl line
    names (--from-file=[KEY=]FILE), laid out as the kubelet's atomic writer
    does: KEY is a symlink to ..data/KEY, ..data a symlink to a timestamped
    directory; file mode the item's mode or defaultMode (default 0644), with
    fsGroup: group fsGroup and group-readable (what kubelet does to a
    read-only volume); owner root when this runs as root;
  - an emptyDir is an empty directory, mode 0777 (with fsGroup: its group,
    setgid);
  - Kubernetes' $(VAR) references in command and args are expanded from the
    container's env; `command` replaces the image's ENTRYPOINT (and its CMD),
    `args` replaces CMD;
  - env: the image's PATH, HOME (the image user's home), HOSTNAME, the
    manifest's env (value, or fieldRef from a stand-in pod's metadata);
    fleet_manifest.sh adds AGONES_SDK_HTTP_PORT as Agones does.

Exits 1 with a message naming what disagrees.
"""
import json
import os
import re
import shlex
import stat
import sys

import yaml

POD_NAME = "cradle-fleet-test-pod"
POD_FIELDS = {
    "metadata.name": POD_NAME,
    "metadata.namespace": "default",
    "metadata.uid": "00000000-0000-4000-8000-000000000001",
    "spec.nodeName": "test-node",
    "status.podIP": "127.0.0.1",
    "status.hostIP": "127.0.0.1",
}
# The image's PATH when the Containerfile sets none (Debian's images).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def fail(message):
    print(f"fleet_pod.py: {message}", file=sys.stderr)
    sys.exit(1)


class Containerfile:
    """The parts of the Containerfile a pod depends on (its final stage)."""

    def __init__(self, path):
        text = open(path, encoding="utf-8").read()
        # Join continuation lines, drop comments.
        lines, current = [], ""
        for raw in text.splitlines():
            if not current and raw.lstrip().startswith("#"):
                continue
            if raw.endswith("\\"):
                current += raw[:-1] + " "
                continue
            current += raw
            if current.strip():
                lines.append(current.strip())
            current = ""
        stages, stage = [], None
        for line in lines:
            word, _, rest = line.partition(" ")
            word = word.upper()
            if word == "FROM":
                stage = {"from": rest, "lines": []}
                stages.append(stage)
            elif stage is not None:
                stage["lines"].append((word, rest.strip()))
        if not stages:
            fail(f"{path}: no FROM")
        self.build_stages = stages[:-1]
        final = stages[-1]["lines"]
        self.entrypoint, self.cmd, self.workdir, self.env = [], [], "/", {}
        self.copies = []  # (from stage or None, source, destination)
        self.homes = {}  # uid -> home directory, from useradd
        for word, rest in final:
            if word in ("ENTRYPOINT", "CMD"):
                try:
                    value = json.loads(rest)
                except json.JSONDecodeError:
                    fail(f"{path}: {word} is not in exec (JSON array) form: {rest}")
                if word == "ENTRYPOINT":
                    self.entrypoint = value
                    self.cmd = []  # an ENTRYPOINT resets the CMD inherited before it
                else:
                    self.cmd = value
            elif word == "WORKDIR":
                self.workdir = rest
            elif word == "ENV":
                for item in shlex.split(rest):
                    key, eq, value = item.partition("=")
                    if not eq:
                        fail(f"{path}: ENV {rest}: use the KEY=VALUE form")
                    self.env[key] = value
            elif word == "COPY":
                words = shlex.split(rest)
                source_stage = None
                while words and words[0].startswith("--"):
                    flag = words.pop(0)
                    if flag.startswith("--from="):
                        source_stage = flag[len("--from="):]
                    else:
                        fail(f"{path}: COPY {flag} is not understood by this stand-in")
                if len(words) != 2:
                    fail(f"{path}: COPY {rest}: one source and one destination expected")
                self.copies.append((source_stage, words[0], words[1]))
            elif word == "RUN":
                for command in re.split(r"&&|;", rest):
                    uid = re.search(r"useradd .*--uid (\d+)", command)
                    home = re.search(r"useradd .*--home-dir (\S+)", command)
                    if uid and home:
                        self.homes[int(uid.group(1))] = home.group(1)
        # The build stage's `DESTDIR=D cmake --install` and its prefix.
        self.staging = self.prefix = None
        for stage in self.build_stages:
            for word, rest in stage["lines"]:
                if word != "RUN":
                    continue
                destdir = re.search(r"DESTDIR=(\S+) cmake --install", rest)
                prefix = re.search(r"-DCMAKE_INSTALL_PREFIX=(\S+)", rest)
                if destdir:
                    self.staging = destdir.group(1).rstrip("/")
                if prefix:
                    self.prefix = prefix.group(1).rstrip("/")


def kubectl_secret_line(text, where):
    """The `kubectl create secret generic NAME --from-file=...` line in text."""
    found = re.findall(r"kubectl create secret generic \S+(?: --from-file=\S+)+", text)
    if len(found) != 1:
        fail(f"{where}: expected one `kubectl create secret generic NAME --from-file=...` line, found {len(found)}")
    return found[0]


def secret_files(line):
    """{key: file} from the kubectl line's --from-file=[KEY=]FILE words."""
    name, files = line.split()[4], {}
    for word in line.split()[5:]:
        value = word[len("--from-file="):]
        key, eq, file = value.partition("=")
        if not eq:
            key, file = os.path.basename(value), value
        files[key] = file
    return name, files


def expand_k8s(word, env):
    """Kubernetes' $(VAR) expansion in command and args; $$ is a literal $."""
    def one(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", one, word)


class Rewriter:
    """Maps the container's paths under the given prefixes to POD_DIR."""

    def __init__(self):
        self.prefixes = []  # (container path, host path), longest first

    def add(self, container_path, host_path):
        self.prefixes.append((container_path.rstrip("/") or "/", host_path.rstrip("/")))
        self.prefixes.sort(key=lambda p: -len(p[0]))

    def host_path(self, path):
        """The host path of an absolute container path, or None if no prefix covers it."""
        for prefix, host in self.prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                return host + path[len(prefix):]
        return None

    def text(self, text):
        """Every path in text that starts with a prefix, rewritten (also inside a shell script)."""
        def one(match):
            return self.host_path(match.group(0)) or match.group(0)
        return re.sub(r"(?<![\w./-])/[\w.@%+-]*(?:/[\w.@%+*$(){}-]*)*", one, text)


def find_container(pod_spec, name):
    containers = pod_spec.get("containers") or []
    if name:
        matches = [c for c in containers if c.get("name") == name]
        if len(matches) != 1:
            fail(f"spec.template.spec.container names {name!r}, which is not one of the containers")
        return matches[0]
    if len(containers) != 1:
        fail("more than one container and no spec.template.spec.container naming the game server")
    return containers[0]


def option_value(argv, long_name, short):
    """The last value of --long_name/-short in argv (as getopt would take it), or None."""
    value = None
    for i, word in enumerate(argv):
        if word in (f"--{long_name}", f"-{short}") and i + 1 < len(argv):
            value = argv[i + 1]
        elif word.startswith(f"--{long_name}="):
            value = word.split("=", 1)[1]
    return value


def write_list(path, items):
    with open(path, "wb") as f:
        for item in items:
            f.write(item.encode() + b"\0")


def main():
    manifest_path, containerfile_path, readme_path, image_root, files_dir, pod_dir = sys.argv[1:7]
    manifest_text = open(manifest_path, encoding="utf-8").read()
    manifest = yaml.safe_load(manifest_text)
    image = Containerfile(containerfile_path)
    if manifest.get("kind") != "Fleet" or not manifest.get("apiVersion", "").startswith("agones.dev/"):
        fail(f"{manifest_path}: not an Agones Fleet")
    gameserver = manifest["spec"]["template"]["spec"]
    pod_spec = gameserver["template"]["spec"]
    server = find_container(pod_spec, gameserver.get("container"))

    # The Secret: the header's kubectl line, the README's, the volume.
    header = "\n".join(line for line in manifest_text.splitlines() if line.startswith("#"))
    line = kubectl_secret_line(header, f"{manifest_path} (header comment)")
    readme_line = kubectl_secret_line(open(readme_path, encoding="utf-8").read(), readme_path)
    if readme_line != line:
        fail(f"{readme_path} says `{readme_line}`, the manifest's header `{line}`")
    secret_name, files = secret_files(line)

    volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
    fs_group = (pod_spec.get("securityContext") or {}).get("fsGroup")
    os.makedirs(os.path.join(pod_dir, "volumes"))
    secret_paths = {}  # volume name -> {relative path: key}
    for name, volume in volumes.items():
        host = os.path.join(pod_dir, "volumes", name)
        if "emptyDir" in volume:
            os.mkdir(host)
            mode = 0o777
            if fs_group is not None and os.geteuid() == 0:
                os.chown(host, -1, fs_group)
                mode |= stat.S_ISGID
            os.chmod(host, mode)
        elif "secret" in volume:
            secret = volume["secret"]
            if secret.get("secretName") != secret_name:
                fail(f"volume {name!r} mounts Secret {secret.get('secretName')!r}; the kubectl line creates {secret_name!r}")
            items = secret.get("items") or [{"key": k, "path": k} for k in files]
            default_mode = secret.get("defaultMode", 0o644)
            os.mkdir(host)
            os.chmod(host, 0o1777)
            data = os.path.join(host, "..2000_01_01_00_00_00.000000000")
            os.mkdir(data, 0o755)
            secret_paths[name] = {}
            for item in items:
                key, path = item["key"], item["path"]
                if key not in files:
                    fail(f"volume {name!r} projects key {key!r}, which the kubectl line does not create (it has {sorted(files)})")
                if "/" in path:
                    fail(f"volume {name!r}: item path {path!r} has a '/': not handled by this stand-in")
                source = os.path.join(files_dir, files[key])
                target = os.path.join(data, path)
                with open(source, "rb") as src, open(target, "wb") as dst:
                    dst.write(src.read())
                mode = item.get("mode", default_mode)
                if fs_group is not None:
                    mode |= 0o440
                    if os.geteuid() == 0:
                        os.chown(target, 0, fs_group)
                os.chmod(target, mode)
                os.symlink(f"..data/{path}", os.path.join(host, path))
                secret_paths[name][path] = key
            os.symlink(os.path.basename(data), os.path.join(host, "..data"))
        else:
            fail(f"volume {name!r}: only emptyDir and secret volumes are laid out by this stand-in")

    # The image's files: the staged install, and what the final stage COPYs from the context.
    image_files = Rewriter()
    copied = {}  # container path -> (host path, the file's text)
    context = os.path.dirname(os.path.dirname(os.path.abspath(containerfile_path)))
    for source_stage, source, destination in image.copies:
        if source_stage is not None:
            if not image.staging or not image.prefix or source.rstrip("/") != image.staging + image.prefix:
                fail(f"COPY --from={source_stage} {source}: expected the build stage's staged install "
                     f"({image.staging}{image.prefix}/)")
            if destination.rstrip("/") != image.prefix:
                fail(f"COPY --from={source_stage} {source} {destination}: expected it at {image.prefix}")
            image_files.add(image.prefix, os.path.join(image_root, image.prefix.lstrip("/")))
        else:
            host = os.path.join(pod_dir, "image", destination.lstrip("/"))
            os.makedirs(os.path.dirname(host), exist_ok=True)
            image_files.add(destination, host)
            with open(os.path.join(context, source), encoding="utf-8") as f:
                copied[destination] = (host, f.read())
    if not os.path.isdir(os.path.join(image_root, (image.prefix or "/usr/local").lstrip("/"))):
        fail(f"{image_root}: no staged install at {image.prefix}")

    def rewriter(container):
        r = Rewriter()
        for prefix, host in image_files.prefixes:
            r.add(prefix, host)
        for mount in container.get("volumeMounts") or []:
            if mount["name"] not in volumes:
                fail(f"container {container['name']!r} mounts {mount['name']!r}, which is not a volume")
            host = os.path.join(pod_dir, "volumes", mount["name"])
            if mount.get("subPath"):
                host = os.path.join(host, mount["subPath"])
            r.add(mount["mountPath"], host)
        return r

    def user_of(container):
        pod_sc = pod_spec.get("securityContext") or {}
        sc = container.get("securityContext") or {}
        uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
        gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
        if uid is None:
            return ""
        groups = [str(g) for g in ([fs_group] if fs_group is not None else []) + pod_sc.get("supplementalGroups", [])]
        return f"{uid} {gid if gid is not None else uid} {','.join(groups) or '-'}"

    users = {user_of(c) for c in (pod_spec.get("initContainers") or []) + [server]}
    if len(users) != 1:
        fail(f"the containers run as different users {users}: not handled by this stand-in")
    with open(os.path.join(pod_dir, "user"), "w", encoding="utf-8") as f:
        f.write(users.pop())

    def plan(container, name):
        r = rewriter(container)
        uid = (container.get("securityContext") or {}).get(
            "runAsUser", (pod_spec.get("securityContext") or {}).get("runAsUser"))
        env = {"PATH": image.env.get("PATH", DEFAULT_PATH), "HOSTNAME": POD_NAME,
               "HOME": image.homes.get(uid, "/")}
        env.update({k: v for k, v in image.env.items()})
        for item in container.get("env") or []:
            if "value" in item:
                env[item["name"]] = expand_k8s(str(item["value"]), env)
            elif "fieldRef" in (item.get("valueFrom") or {}):
                path = item["valueFrom"]["fieldRef"]["fieldPath"]
                if path not in POD_FIELDS:
                    fail(f"env {item['name']}: fieldRef {path} has no stand-in value")
                env[item["name"]] = POD_FIELDS[path]
            else:
                fail(f"env {item['name']}: only value and fieldRef are handled by this stand-in")
        if container.get("envFrom"):
            fail(f"container {container['name']!r}: envFrom is not handled by this stand-in")
        if "command" in container:
            argv = list(container["command"]) + list(container.get("args") or [])
        else:
            argv = list(image.entrypoint) + list(container.get("args") if "args" in container else image.cmd)
        if not argv:
            fail(f"container {container['name']!r} has no command and the image no ENTRYPOINT")
        argv = [r.text(expand_k8s(str(word), env)) for word in argv]
        env = {k: r.text(v) for k, v in env.items()}
        cwd = r.host_path(container.get("workingDir", image.workdir)) or container.get("workingDir", image.workdir)
        write_list(os.path.join(pod_dir, f"{name}.argv"), argv)
        write_list(os.path.join(pod_dir, f"{name}.env"), [f"{k}={v}" for k, v in env.items()])
        with open(os.path.join(pod_dir, f"{name}.cwd"), "w", encoding="utf-8") as f:
            f.write(cwd)
        return r, argv

    for i, init in enumerate(pod_spec.get("initContainers") or []):
        plan(init, f"init-{i}")
    r, argv = plan(server, "server")
    # The config files the image COPYs, with the same rewriting of their paths.
    config = None
    for destination, (host, text) in copied.items():
        if destination.endswith(".json"):
            document = json.loads(text)
            rewritten = {k: (r.host_path(v) or v) if isinstance(v, str) and v.startswith("/") else v
                         for k, v in document.items()}
            text = json.dumps(rewritten, indent=2) + "\n"
            config = (destination, document)
        with open(host, "w", encoding="utf-8") as f:
            f.write(text)

    # What the server reads, as the container sees it: flags (in args, or in the entry
    # point's script) override the config file that the entry point names.
    # (The entry point may be a shell script: its words after the server's name are
    # searched for flags too.)
    args = [str(a) for a in (server.get("args") or [])]
    entry = [w for a in (server.get("command") or image.entrypoint) for w in shlex.split(str(a))]
    servers = [i for i, w in enumerate(entry) if os.path.basename(w) == "cradle-server"]
    entry = entry[servers[0]:] if servers else []  # the words from the server's name on
    config_path = option_value(args, "config", "c") or option_value(entry, "config", "c")
    if not config or config_path != config[0]:
        fail(f"the server's --config is {config_path}, not the config file the image has ({config and config[0]})")
    settings = config[1]

    def effective(long_name, short, default=None):
        for words in (args, entry):
            value = option_value(words, long_name, short)
            if value is not None:
                return value
        return settings.get(long_name, default)

    secret_mounts = {m["mountPath"].rstrip("/"): m["name"] for m in server.get("volumeMounts") or []
                     if m["name"] in secret_paths}
    trust_file = effective("trust-file", "f")
    if trust_file:
        directory, base = os.path.split(trust_file)
        if directory not in secret_mounts or base not in secret_paths[secret_mounts[directory]]:
            fail(f"the server reads its trusted issuers from {trust_file} (--trust-file in args or `trust-file` "
                 f"in {config[0]}), which is not a file of the mounted Secret: "
                 + ", ".join(f"{d}/{p}" for d, v in secret_mounts.items() for p in secret_paths[v]))
    elif not effective("trust", "t"):
        fail("the server has no trusted issuers (trust-file or trust)")
    for mount in server.get("volumeMounts") or []:
        if mount["name"] in secret_paths and not mount.get("readOnly"):
            fail(f"the Secret volume {mount['name']!r} is mounted writable at {mount['mountPath']}")
    port = int(effective("port", "p", 7777))
    ports = [p for p in gameserver.get("ports") or []]
    if not any(p.get("containerPort") == port and p.get("protocol", "UDP") == "UDP" for p in ports):
        fail(f"the server listens on UDP {port}; the GameServer's ports are "
             + ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'UDP')}" for p in ports))
    # The server key: a file of the Secret that an init container copies to the key path.
    key_path = effective("key", "K")
    key_source = ""
    for init in pod_spec.get("initContainers") or []:
        words = [str(w) for w in (init.get("command") or []) + (init.get("args") or [])]
        if key_path in words:
            for word in words:
                directory, base = os.path.split(word)
                if directory in secret_mounts and base in secret_paths[secret_mounts[directory]]:
                    key_source = os.path.join(files_dir, files[secret_paths[secret_mounts[directory]][base]])
    with open(os.path.join(pod_dir, "server-key"), "w", encoding="utf-8") as f:
        f.write(key_source)
    with open(os.path.join(pod_dir, "agones"), "w", encoding="utf-8") as f:
        f.write("1" if "--agones" in argv or settings.get("agones") is True else "0")


if __name__ == "__main__":
    main()
