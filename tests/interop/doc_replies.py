#!/usr/bin/env python3
"""The replies the docs show, held to a real server: every grpcurl command of a
Markdown file (a ```sh block calling arbiter.v1.ArbiterService with -d) is run against
ADDRESS, and the ```json block after it must match its replies: each document shown a
sub-document of a reply (keys left out are allowed), in order, all of them unless a
`...` line stands for replies left out.

    python3 tests/interop/doc_replies.py --address HOST:PORT --grpcurl PATH README.md docs/walkthrough.md
"""

import argparse
import json
import re
import subprocess
import sys


def documents(text):
    """The JSON documents of `text`, one after the other; `...` as Ellipsis."""
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
    """Whether `shown` is `actual` with keys left out."""
    if isinstance(shown, dict):
        return isinstance(actual, dict) and all(
            key in actual and within(value, actual[key]) for key, value in shown.items())
    if isinstance(shown, list):
        return (isinstance(actual, list) and len(shown) == len(actual)
                and all(within(a, b) for a, b in zip(shown, actual)))
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


def check(path, address, grpcurl):
    """Runs every command of `path` that shows its replies: (checked, failed)."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", open(path, encoding="utf-8").read(), re.S)
    checked = failed = 0
    for (lang, body), after in zip(blocks, blocks[1:] + [("", "")]):
        if (lang != "sh" or "grpcurl -plaintext" not in body or " -d " not in body
                or "arbiter.v1.ArbiterService/" not in body or after[0] != "json"):
            continue
        command = body.replace("grpcurl ", f"{grpcurl} ").replace("localhost:50051", address)
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              timeout=60)
        name = re.search(r"ArbiterService/(\w+)", body).group(1)
        try:
            shown = documents(after[1])
        except json.JSONDecodeError:
            # A reply cut short inside itself ("moves": [ ... ]): its command still runs.
            print(f"run  {path}: {name}, its reply shown in part")
            if done.returncode != 0:
                failed += 1
                print(f"FAIL {path}: {name}: exit {done.returncode}: {done.stderr[:500]}")
            continue
        actual = documents(done.stdout)
        checked += 1
        if matches(shown, actual):
            print(f"ok   {path}: {name}, {len(actual)} replies")
        else:
            failed += 1
            print(f"FAIL {path}: {name}: {body.strip().splitlines()[0][:100]}\n"
                  f"  got {json.dumps(actual)[:2000]}")
    return checked, failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--grpcurl", default="grpcurl")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    checked = failed = 0
    for path in args.files:
        c, f = check(path, args.address, args.grpcurl)
        checked, failed = checked + c, failed + f
    print(f"docs' replies: {checked} checked, {failed} failed")
    if checked == 0:
        print("no command with its replies found: the docs or this script changed")
        failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
