"""What /proc says about the server process, for the scripted tests (tests/abuse)."""


def rss_kib(pid):
    """The resident memory of process `pid` in KiB, or -1 if /proc does not say."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1
