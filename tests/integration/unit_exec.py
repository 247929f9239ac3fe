#!/usr/bin/env python3
"""What systemd would run for one instance of a service unit, for template_unit.sh.

    unit_exec.py UNIT_FILE INSTANCE ROOT OUT_DIR

Reads UNIT_FILE's [Service] section (systemd is not PID 1 on the machines
that run the tests, so the test runs the commands itself) and writes, for the
unit instance NAME@INSTANCE.service, to OUT_DIR:

  pre-N.argv     each ExecStartPre= command, NUL-separated words, in order
  pre-N.ignore   "1" if its exit status is ignored (a "-" prefix), else "0"
  start.argv     the ExecStart= command
  env            the environment systemd gives the process (K=V, NUL-separated)
  dirs           "MODE PATH" per line: StateDirectory= and RuntimeDirectory=,
                 with StateDirectoryMode= and RuntimeDirectoryMode=
  cwd            WorkingDirectory=
  user           User= (checked to be a valid user name)
  umask          UMask=
  stop           "SIGNAL SECONDS": KillSignal= and TimeoutStopSec=

Specifiers expanded (systemd.unit(5)), on the whole value before it is split
into words as systemd does: %i (instance), %I (instance, \\xNN unescaped),
%n (full unit name), %N (it without the suffix), %p (prefix), %P (prefix,
unescaped), %E (/etc), %S (/var/lib), %t (/run) and %%. The three
directories become ROOT/etc, ROOT/var/lib and ROOT/run. Any other specifier
makes this fail, so a unit that starts to use one fails the test instead of
running with a wrong path.

Words are split with shlex (POSIX rules), which agrees with systemd's quoting
for double quotes, single quotes and backslashes as these units use them.
After that, as systemd does when it runs the command, ${VAR} (inside a word)
and $VAR (a word of its own, split at whitespace) are replaced from the
environment systemd sets: Environment= of the unit, INVOCATION_ID (a random
128-bit id, 32 hex digits, new per start), USER, LOGNAME, HOME (/ for a
DynamicUser), SHELL, PATH, RUNTIME_DIRECTORY and STATE_DIRECTORY (the
directories, ':'-separated). An unknown variable makes this fail. Command
prefixes other than "-" (@ : + ! !!) make it fail too.

Exits 1 with a message.
"""
import os
import re
import secrets
import shlex
import sys

SPECIFIER_DIRS = {"E": "etc", "S": "var/lib", "t": "run"}
VALID_USER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,30}$")


def fail(message):
    print(f"unit_exec.py: {message}", file=sys.stderr)
    sys.exit(1)


def parse_unit(path):
    """{section: [(key, value), ...]} in file order; continuation lines joined."""
    sections, section, pending = {}, None, ""
    for raw in open(path, encoding="utf-8").read().splitlines():
        line = pending + raw
        pending = ""
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.endswith("\\"):
            pending = stripped[:-1] + " "
            continue
        if stripped.startswith("["):
            section = stripped.strip("[]")
            sections.setdefault(section, [])
            continue
        key, eq, value = stripped.partition("=")
        if not eq or section is None:
            fail(f"{path}: not a key=value line in a section: {stripped}")
        sections[section].append((key.strip(), value.strip()))
    return sections


def unescape(text):
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def main():
    unit_path, instance, root, out = sys.argv[1:5]
    unit_file = os.path.basename(unit_path)
    match = re.fullmatch(r"(.+)@\.service", unit_file)
    if not match:
        fail(f"{unit_file} is not a template unit (NAME@.service)")
    prefix = match.group(1)
    unit_name = f"{prefix}@{instance}.service"
    specifiers = {
        "i": instance, "I": unescape(instance), "n": unit_name, "N": unit_name[: -len(".service")],
        "p": prefix, "P": unescape(prefix), "%": "%",
    }
    for letter, sub in SPECIFIER_DIRS.items():
        specifiers[letter] = os.path.join(root, sub)

    def expand(value):
        def one(m):
            letter = m.group(1)
            if letter not in specifiers:
                fail(f"{unit_file}: specifier %{letter} in `{value}` is not expanded by this stand-in")
            return specifiers[letter]
        return re.sub(r"%(.)", one, value)

    service = parse_unit(unit_path).get("Service")
    if service is None:
        fail(f"{unit_file}: no [Service] section")
    settings, pre = {}, []
    for key, value in service:
        if key == "ExecStartPre":
            if value == "":
                pre = []
            else:
                pre.append(value)
        elif key == "ExecStart":
            if "ExecStart" in settings and value:
                fail(f"{unit_file}: more than one ExecStart= (Type=exec runs one)")
            settings[key] = value
        elif key == "Environment":
            settings.setdefault(key, []).extend(shlex.split(expand(value)))
        else:
            settings[key] = value
    if not settings.get("ExecStart"):
        fail(f"{unit_file}: no ExecStart=")
    if settings.get("Type", "simple") not in ("simple", "exec"):
        fail(f"{unit_file}: Type={settings['Type']} is not run by this stand-in")

    user = expand(settings.get("User", "root"))
    if not VALID_USER.match(user):
        fail(f"{unit_file}: User= gives {user!r} for instance {instance!r}: not a valid user name "
             "(letters, digits, '_', '-', at most 31)")
    os.makedirs(out, exist_ok=True)
    dirs = []
    for key, mode_key, base in (("StateDirectory", "StateDirectoryMode", specifiers["S"]),
                                ("RuntimeDirectory", "RuntimeDirectoryMode", specifiers["t"])):
        mode = settings.get(mode_key, "0755")
        for name in shlex.split(expand(settings.get(key, ""))):
            dirs.append((mode, os.path.join(base, name)))
    with open(os.path.join(out, "dirs"), "w", encoding="utf-8") as f:
        for mode, path in dirs:
            f.write(f"{mode} {path}\n")

    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "INVOCATION_ID": secrets.token_hex(16),
        "USER": user, "LOGNAME": user, "SHELL": "/usr/sbin/nologin",
        "HOME": "/" if settings.get("DynamicUser") == "yes" else os.path.join(root, "root"),
    }
    for key, base in (("RuntimeDirectory", specifiers["t"]), ("StateDirectory", specifiers["S"])):
        names = shlex.split(expand(settings.get(key, "")))
        if names:
            env[key.upper().replace("DIRECTORY", "_DIRECTORY")] = ":".join(os.path.join(base, n) for n in names)
    for item in settings.get("Environment", []):
        k, _, v = item.partition("=")
        env[k] = v

    def substitute(word):
        """systemd's ${VAR} in a word, and $VAR as a word of its own (split at whitespace)."""
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            if whole.group(1) not in env:
                fail(f"{unit_file}: ${whole.group(1)} is not set by systemd or the unit")
            return env[whole.group(1)].split()

        def one(m):
            if m.group(1) not in env:
                fail(f"{unit_file}: ${{{m.group(1)}}} is not set by systemd or the unit")
            return env[m.group(1)]
        return [re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", one, word)]

    def command(value, name):
        ignore = False
        while value and value[0] in "-@:+!":
            if value[0] != "-":
                fail(f"{unit_file}: the command prefix {value[0]!r} in `{value}` is not run by this stand-in")
            ignore = True
            value = value[1:]
        words = [w for word in shlex.split(expand(value)) for w in substitute(word)]
        if not words or not os.path.isabs(words[0]):
            fail(f"{unit_file}: `{value}`: the command must be an absolute path")
        with open(os.path.join(out, f"{name}.argv"), "wb") as f:
            for word in words:
                f.write(word.encode() + b"\0")
        return ignore

    for i, value in enumerate(pre):
        with open(os.path.join(out, f"pre-{i}.ignore"), "w", encoding="utf-8") as f:
            f.write("1" if command(value, f"pre-{i}") else "0")
    if command(settings["ExecStart"], "start"):
        fail(f"{unit_file}: ExecStart= ignores the server's exit status")
    with open(os.path.join(out, "env"), "wb") as f:
        for k, v in env.items():
            f.write(f"{k}={v}".encode() + b"\0")
    with open(os.path.join(out, "cwd"), "w", encoding="utf-8") as f:
        f.write(expand(settings.get("WorkingDirectory", "/")))
    with open(os.path.join(out, "user"), "w", encoding="utf-8") as f:
        f.write(user)
    with open(os.path.join(out, "umask"), "w", encoding="utf-8") as f:
        f.write(settings.get("UMask", "0022"))
    timeout = settings.get("TimeoutStopSec", "90").rstrip("s")
    if not timeout.isdigit():
        fail(f"{unit_file}: TimeoutStopSec={settings['TimeoutStopSec']}: whole seconds expected")
    with open(os.path.join(out, "stop"), "w", encoding="utf-8") as f:
        f.write(f"{settings.get('KillSignal', 'SIGTERM')} {timeout}")


if __name__ == "__main__":
    main()
