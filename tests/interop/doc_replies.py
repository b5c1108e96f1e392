#!/usr/bin/env python3
"""The grpcurl calls the docs show, held to examples/grpcurl.sh and to a real server.

Every grpcurl command of the Markdown files given (the ```sh blocks that call grpcurl, read
by bash itself, so a command is taken exactly as a reader's shell would take it) must be in
examples/grpcurl.sh, the same call (the same flags and the same request: each -d's JSON
documents compared as JSON, the server's address aside), and every call of the script must
be one the docs show. The script is run against ADDRESS with a grpcurl that records each
call's output, and each reply a doc shows is compared with what the script's same call got:

- a ```json block right after the command: each document shown a sub-document of a reply
  (keys left out are allowed; `...` in place of an object's members too), in order, all of
  them unless a `...` line stands for replies left out; a duration shown to the nanosecond
  ("0.499968393s") is a sample of a time that differs from run to run, and any duration
  matches it;
- a ```text block starting `ERROR:` right after the command: grpcurl's error output, line
  by line (spaces aside).

With --every-rpc FILE, FILE's calls must call every RPC of the contract (README: "Every RPC
is in docs/walkthrough.md").

    python3 tests/interop/doc_replies.py --address HOST:PORT --grpcurl PATH \
        --every-rpc docs/walkthrough.md README.md docs/walkthrough.md
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS_ADDRESS = "localhost:50051"
# grpcurl's flags that take a value (the others used here are booleans).
VALUED = {"-d", "-H", "-rpc-header", "-reflect-header", "-max-time", "-connect-timeout",
          "-authority", "-proto", "-import-path", "-protoset", "-format", "-servername"}
DURATION = re.compile(r"^\d+(\.\d+)?s$")
SAMPLE_DURATION = re.compile(r"^\d+\.\d{9}s$")


def documents(text):
    """The JSON documents of `text`, one after the other; a `...` line as Ellipsis, and a
    `...` among an object's members left out (what remains is a sub-document)."""
    text = re.sub(r"(?<=[{,])\s*\.\.\.\s*,", "", text)
    text = re.sub(r",\s*\.\.\.\s*(?=})", "", text)
    decoder, out, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return out
        if text.startswith("...", at):
            out.append(Ellipsis)
            at += 3
            continue
        document, at = decoder.raw_decode(text, at)
        out.append(document)


def within(shown, actual):
    """Whether `shown` is `actual` with keys left out (and sample durations)."""
    if isinstance(shown, dict):
        return isinstance(actual, dict) and all(
            key in actual and within(value, actual[key]) for key, value in shown.items())
    if isinstance(shown, list):
        return (isinstance(actual, list) and len(shown) == len(actual)
                and all(within(a, b) for a, b in zip(shown, actual)))
    if isinstance(shown, str) and SAMPLE_DURATION.match(shown):
        return isinstance(actual, str) and bool(DURATION.match(actual))
    return shown == actual


def matches(shown, actual):
    """Whether the documents `shown` are, in order, among `actual`: all of them, unless
    a `...` says some are left out."""
    elided = Ellipsis in shown
    at = 0
    for document in (d for d in shown if d is not Ellipsis):
        while at < len(actual) and not within(document, actual[at]):
            if not elided:
                return False
            at += 1
        if at == len(actual):
            return False
        at += 1
    return elided or at == len(actual)


def text_lines(text):
    return [" ".join(line.split()) for line in text.strip().splitlines() if line.strip()]


def call_key(args, address):
    """A grpcurl call as compared: its flags in any order (each -d as its JSON documents),
    then its other arguments in order, the server's address as ADDRESS."""
    flags, rest, at = [], [], 0
    while at < len(args):
        arg = args[at]
        if arg in VALUED and at + 1 < len(args):
            value = args[at + 1]
            if arg == "-d":
                value = json.dumps(documents(value), sort_keys=True)
            flags.append([arg, value])
            at += 2
            continue
        if arg.startswith("-"):
            flags.append([arg])
        else:
            rest.append("ADDRESS" if arg == address else arg)
        at += 1
    return json.dumps(sorted(flags) + rest)


def call_name(args):
    return next((a.rsplit(".", 1)[-1].removeprefix("ArbiterService/")
                 for a in reversed(args) if "/" in a), " ".join(
        a for a in args if not a.startswith("-") and not re.search(r":\d+$", a))[:60] or "grpcurl")


def shown_call(args):
    """A call as a message shows it: on one line, cut short."""
    return " ".join(" ".join(["grpcurl", *args]).split())[:300]


class Block:
    """One ```sh block's grpcurl calls and the reply shown after it, if any."""

    def __init__(self, path, calls, shown_kind, shown_text):
        self.path, self.calls = path, calls
        self.shown_kind, self.shown_text = shown_kind, shown_text


def doc_blocks(path):
    """The ```sh blocks of `path` that call grpcurl, each with its calls as bash reads them
    (grpcurl and cargo stood in for by functions: nothing is run) and the block right
    after it when it shows a reply."""
    text = Path(path).read_text(encoding="utf-8")
    fences = list(re.finditer(r"```(\w*)\n(.*?)```", text, re.S))
    blocks = []
    for index, fence in enumerate(fences):
        lang, body = fence.group(1), fence.group(2)
        if lang != "sh" or not re.search(r"(^|\s)grpcurl ", body):
            continue
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as log:
            script = ('grpcurl() { "$PYTHON" -c \'import json, sys; print(json.dumps(sys.argv[1:]))\' '
                      '"$@" >>"$LOG"; }\ncargo() { :; }\n' + body)
            subprocess.run(["bash", "-c", script], check=True, cwd=REPO,
                           env=dict(os.environ, LOG=log.name, PYTHON=sys.executable))
            calls = [json.loads(line) for line in log.read().splitlines()]
        kind = shown = None
        if index + 1 < len(fences):
            after = fences[index + 1]
            adjacent = not text[fence.end():after.start()].strip()
            if adjacent and after.group(1) == "json":
                kind, shown = "json", after.group(2)
            elif adjacent and after.group(1) == "text" and after.group(2).startswith("ERROR:"):
                kind, shown = "error", after.group(2)
        blocks.append(Block(path, calls, kind, shown))
    return blocks


RECORDER = """\
import json, subprocess, sys
done = subprocess.run([{real!r}] + sys.argv[1:], capture_output=True, text=True)
with open({log!r}, "a") as log:
    log.write(json.dumps({{"args": sys.argv[1:], "stdout": done.stdout, "stderr": done.stderr,
                          "rc": done.returncode}}) + "\\n")
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""


def run_script(script, address, grpcurl):
    """Runs `script` against `address` with a grpcurl that records every call: (exit
    status, its stderr, the recorded calls)."""
    real = shutil.which(grpcurl) or grpcurl
    with tempfile.TemporaryDirectory(prefix="doc-replies-") as tmp:
        log = os.path.join(tmp, "calls.jsonl")
        recorder = os.path.join(tmp, "grpcurl")
        with open(recorder, "w") as out:
            out.write(f"#!{sys.executable}\n" + RECORDER.format(real=real, log=log))
        os.chmod(recorder, 0o755)
        done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, ARBITER=address, GRPCURL=recorder))
        calls = []
        if os.path.exists(log):
            with open(log) as recorded:
                calls = [json.loads(line) for line in recorded]
    return done.returncode, done.stderr, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--grpcurl", default="grpcurl")
    parser.add_argument("--script", default=str(REPO / "examples" / "grpcurl.sh"))
    parser.add_argument("--every-rpc", metavar="FILE",
                        help="one of the files, whose calls must call every RPC of the contract")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    script = Path(args.script)
    code, stderr, recorded = run_script(script, args.address, args.grpcurl)
    failed = 0
    if code != 0:
        failed += 1
        print(f"FAIL {script.name} exited {code}:\n{stderr[-3000:]}")
    by_key = {}
    for call in recorded:
        by_key.setdefault(call_key(call["args"], args.address), call)

    shown_keys, checked = set(), 0
    contract = (REPO / "proto" / "arbiter" / "v1" / "arbiter.proto").read_text()
    rpcs = re.findall(r"^\s*rpc (\w+)\(", contract, re.M)
    for path in args.files:
        blocks = doc_blocks(path)
        if args.every_rpc and Path(path).resolve() == Path(args.every_rpc).resolve():
            called = {arg.rsplit("/", 1)[-1] for block in blocks for call in block.calls
                      for arg in call if arg.startswith("arbiter.v1.ArbiterService/")}
            missing = [rpc for rpc in rpcs if rpc not in called]
            if missing:
                failed += 1
                print(f"FAIL {path} calls no {', '.join(missing)}: not every RPC of the contract")
            else:
                print(f"ok   {path} calls every RPC of the contract ({len(rpcs)})")
        for block in blocks:
            outputs, missing = [], []
            for call in block.calls:
                key = call_key(call, DOCS_ADDRESS)
                shown_keys.add(key)
                if key in by_key:
                    outputs.append(by_key[key])
                else:
                    missing.append(call)
            names = ", ".join(call_name(call) for call in block.calls)
            if missing:
                failed += len(missing)
                for call in missing:
                    print(f"FAIL {path}: {call_name(call)}: this call is not in {script.name}: "
                          f"{shown_call(call)}")
                continue
            if block.shown_kind is None:
                bad = [o for o in outputs if o["rc"] != 0]
                if bad:
                    failed += 1
                    print(f"FAIL {path}: {names}: exit {bad[0]['rc']}: {bad[0]['stderr'][:500]}")
                else:
                    print(f"ok   {path}: {names}, no reply shown; {script.name} runs it")
                continue
            checked += 1
            if block.shown_kind == "error":
                got = text_lines("".join(o["stderr"] for o in outputs))
                if got == text_lines(block.shown_text) and all(o["rc"] != 0 for o in outputs):
                    print(f"ok   {path}: {names}, the error shown")
                else:
                    failed += 1
                    print(f"FAIL {path}: {names}: the error shown is not grpcurl's:\n  got "
                          + "\n      ".join(got))
                continue
            bad = [o for o in outputs if o["rc"] != 0]
            actual = [d for o in outputs for d in documents(o["stdout"])]
            try:
                shown = documents(block.shown_text)
            except json.JSONDecodeError as error:
                failed += 1
                print(f"FAIL {path}: {names}: the reply shown is not JSON ({error})")
                continue
            if not bad and matches(shown, actual):
                print(f"ok   {path}: {names}, {len(actual)} replies as shown")
            else:
                failed += 1
                why = f"exit {bad[0]['rc']}: {bad[0]['stderr'][:500]}" if bad else "replies differ"
                print(f"FAIL {path}: {names}: {why}\n  got {json.dumps(actual)[:3000]}")

    extra = [call for key, call in by_key.items() if key not in shown_keys]
    for call in extra:
        failed += 1
        print(f"FAIL {script.name}: {call_name(call['args'])}: no doc shows this call: "
              f"{shown_call(call['args'])}")
    print(f"docs' calls: {len(shown_keys)} distinct, all in {script.name} ({len(recorded)} calls) "
          f"unless said; {checked} shown replies compared, {failed} failures")
    if checked == 0:
        print("no command with its replies found: the docs or this script changed")
        failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
