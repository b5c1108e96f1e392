#!/usr/bin/env python3
"""Holds README.md's table of clients ("## Other clients") to what CI runs.

Each row gives the command that runs the client ("run it", with the server on
localhost:50051) and what CI runs ("CI runs"): either "this command", or a script named
as `bash examples/NAME/run.sh`. This check fails when

- a row does not give exactly one command, or its "CI runs" cell is neither;
- a "this command" row's command does not name `localhost:50051`, where the address of
  CI's server goes;
- a script named does not exist, or tests/interop/run.sh does not run it;
- with --address, a "this command" command, run as written by bash from the repository's
  root with the address in place of `localhost:50051`, exits non-zero.

    python3 tests/interop/readme_commands.py                      # the table alone
    python3 tests/interop/readme_commands.py --address HOST:PORT  # and run the commands
    python3 tests/interop/readme_commands.py --list               # print each row's commands
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CI = REPO / "tests" / "interop" / "run.sh"
SECTION = "## Other clients"
DEFAULT_ADDRESS = "localhost:50051"
SCRIPT = re.compile(r"^bash (examples/([A-Za-z0-9_-]+)/run\.sh)$")


def code_spans(cell):
    return re.findall(r"`([^`]+)`", cell)


def cells(line):
    # A table row: | a | b | c |. No cell of this table holds a `|`.
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table(text):
    """The rows of the first table after SECTION, as dicts keyed by header."""
    start = text.index(SECTION)
    lines = text[start:].splitlines()[1:]
    rows, header = [], None
    for line in lines:
        if line.startswith("## "):
            break
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
        raise SystemExit(f"README.md: no table under {SECTION!r}")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help="run the \"this command\" rows against this server")
    parser.add_argument("--list", action="store_true", help="print each row's commands")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per command")
    args = parser.parse_args()

    header, rows = table(README.read_text())
    language, run_it, ci_runs = column(header, "language"), column(header, "run it"), column(header, "CI runs")
    ci_text = CI.read_text()
    problems, to_run = [], []
    for row in rows:
        name = row[language]
        commands = code_spans(row[run_it])
        if len(commands) != 1:
            problems.append(f"{name}: {len(commands)} commands in {run_it!r}, not one")
            continue
        command = commands[0]
        ci = row[ci_runs]
        if ci.startswith("this command"):
            if DEFAULT_ADDRESS not in command:
                problems.append(f"{name}: the command does not name {DEFAULT_ADDRESS}, so CI "
                                f"cannot point it at its server: {command}")
            else:
                to_run.append((name, command))
            what = "this command"
        else:
            scripts = [m for m in map(SCRIPT.match, code_spans(ci)) if m]
            if len(scripts) != 1:
                problems.append(f"{name}: {ci_runs!r} is neither \"this command\" nor one "
                                f"`bash examples/NAME/run.sh`: {ci}")
                continue
            path, script_name = scripts[0].group(1), scripts[0].group(2)
            if not (REPO / path).is_file():
                problems.append(f"{name}: {path} does not exist")
            elif not runs_script(ci_text, path, script_name):
                problems.append(f"{name}: tests/interop/run.sh does not run {path}")
            what = f"bash {path}"
        if args.list:
            print(f"{name}\n  run it:  {command}\n  CI runs: {what}")

    for problem in problems:
        print(f"FAIL {problem}", flush=True)
    if not problems:
        print(f"ok   README.md's table of clients: {len(rows)} rows, "
              f"{len(to_run)} run as written, the others by the script they name", flush=True)

    failed = bool(problems)
    if args.address:
        for name, command in to_run:
            command = command.replace(DEFAULT_ADDRESS, args.address)
            print(f"readme: {name}: {command}", flush=True)
            try:
                done = subprocess.run(["bash", "-c", command], cwd=REPO, timeout=args.timeout,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name}: the README's command took over {args.timeout} s", flush=True)
                failed = True
                continue
            if done.returncode != 0:
                print(f"FAIL {name}: the README's command exited {done.returncode}:\n"
                      f"{done.stdout[-4000:]}", flush=True)
                failed = True
            else:
                print(f"ok   {name}: the README's command, as written", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
